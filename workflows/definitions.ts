import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// What the api and the signing request workflow share: updates, signals, queries, search attributes.

// The vocabulary of a signing request, defined once: the api's schemas, the store and the workflow use these.
export const signingOrders = ['parallel', 'sequential'] as const;
export const requestStatuses = ['pending', 'completed', 'declined', 'cancelled', 'expired'] as const;
export const signerStatuses = ['pending', 'notified', 'viewed', 'signed', 'declined'] as const;
export type SigningOrder = (typeof signingOrders)[number];
export type RequestStatus = (typeof requestStatuses)[number];
export type SignerStatus = (typeof signerStatuses)[number];

export interface SigningRequestInput {
  requestId: string;
  signingOrder: SigningOrder;
  /** In signing order. */
  signerIds: string[];
  expiresAt: string;
  /** 0 = no reminders. */
  reminderEveryMs: number;
}

export interface Signature {
  type: 'typed' | 'drawn';
  /** The typed name, or a PNG data URL. */
  value: string;
}

export interface ClientInfo {
  ipAddress?: string;
  userAgent?: string;
}

export interface SignInput extends ClientInfo {
  signerId: string;
  signature: Signature;
  fieldValues?: Record<string, string>;
}

export interface DeclineInput extends ClientInfo {
  signerId: string;
  reason: string;
}

export interface SigningRequestState {
  status: RequestStatus;
  signers: { id: string; status: SignerStatus }[];
}

/**
 * What a reminder round did: whom it reminded and, when it could remind nobody, the hourly limit that
 * stopped it (a signer's one e-mail an hour, or the account's e-mails an hour) and when that allows one.
 */
export interface RemindOutcome {
  remindedSignerIds: string[];
  limitedBy?: { limit: 'signer' | 'account'; perHour: number; retryAt: string };
}

/** Where a request stands, for `progress` on GET /signatures/:id. */
export interface SigningRequestProgress {
  stage: 'awaiting_signers' | 'sealing' | 'finished';
  /** The signers whose turn it is. */
  waitingFor: string[];
  /** While sealing: how many attempts failed, the last error, and when the next attempt runs. */
  sealing: null | { attempts: number; lastError: string | null; nextAttemptAt: string | null };
}

export const signUpdate = defineUpdate<SigningRequestState, [SignInput]>('sign');
export const declineUpdate = defineUpdate<SigningRequestState, [DeclineInput]>('decline');
export const cancelUpdate = defineUpdate<SigningRequestState, [{ reason?: string }]>('cancel');
export const remindUpdate = defineUpdate<RemindOutcome, []>('remind');
export const viewedSignal = defineSignal<[{ signerId: string } & ClientInfo]>('viewed');
export const stateQuery = defineQuery<SigningRequestState>('state');
export const progressQuery = defineQuery<SigningRequestProgress>('progress');

/** Why an update was refused; the api answers 409 conflict with the failure's message. */
export const refusalTypes = ['RequestEnded', 'Completing', 'UnknownSigner', 'AlreadyActed', 'NotYourTurn'] as const;

/** The failure type of an activity whose change the database refused for good (activities/signingRequest.ts). */
export const databaseRefusal = 'DatabaseRefused';
/** An update whose change the database refused for good: nothing changed, the request stays as it was; the api answers 400. */
export const changeRefused = 'ChangeRefused';

export const searchAttributes = {
  accountId: defineSearchAttributeKey('SignetAccountId', SearchAttributeType.KEYWORD),
  documentId: defineSearchAttributeKey('SignetDocumentId', SearchAttributeType.KEYWORD),
  status: defineSearchAttributeKey('SignetStatus', SearchAttributeType.KEYWORD),
  webhookId: defineSearchAttributeKey('SignetWebhookId', SearchAttributeType.KEYWORD),
  webhookHealth: defineSearchAttributeKey('SignetWebhookHealth', SearchAttributeType.KEYWORD),
};

export interface WebhookWorkflowInput {
  webhookId: string;
  /** Multiplies the retry schedule's delays: 1 in production; tests and benchmarks shrink days to seconds. */
  retryScale: number;
}

export type WebhookHealth = 'healthy' | 'failing' | 'disabled';

/** What an operator asks a webhook's workflow: how much waits, since when, and why the last attempt failed. */
export interface WebhookQueueStatus {
  health: WebhookHealth;
  backlog: number;
  oldestPendingAt: string | null;
  lastError: string | null;
}

/** One workflow per webhook endpoint owns its queue of deliveries. */
export const webhookWorkflowId = (webhookId: string) => `webhook-${webhookId}`;
/** New deliveries are due: sent by the dispatcher after the commit that queued them. */
export const wakeSignal = defineSignal('wake');
export const webhookStatusQuery = defineQuery<WebhookQueueStatus>('status');
