import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Actor } from '../src/domain/actors';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// What Temporal needs to talk to the workflows: updates, signals, queries, search attributes, workflow ids.
// The vocabulary they carry (statuses, inputs, refusal types) lives in src/domain.
import type {
  ActInput,
  ClientInfo,
  DeclineInput,
  RemindOutcome,
  RequestStatus,
  SignInput,
  SigningRequestProgress,
  SigningRequestState,
} from '../src/domain/signingRequests';
import type { WebhookQueueStatus } from '../src/domain/webhooks';

export const signUpdate = defineUpdate<SigningRequestState, [SignInput]>('sign');
export const approveUpdate = defineUpdate<SigningRequestState, [ActInput]>('approve');
/** A viewer's page has shown the documents: the viewer's step is done. */
export const viewDoneUpdate = defineUpdate<SigningRequestState, [ActInput]>('viewDone');
export const declineUpdate = defineUpdate<SigningRequestState, [DeclineInput]>('decline');
export const cancelUpdate = defineUpdate<SigningRequestState, [{ reason?: string; actor?: Actor }]>('cancel');
export const remindUpdate = defineUpdate<RemindOutcome, []>('remind');
export const viewedSignal = defineSignal<[{ signerId: string } & ClientInfo]>('viewed');
export const stateQuery = defineQuery<SigningRequestState>('state');
export const progressQuery = defineQuery<SigningRequestProgress>('progress');

/**
 * How a signing request ended. Its workflow completes whatever the outcome (a decline is the request's
 * answer, not the workflow failing), so the Temporal UI reads it here and in `SignetStatus`.
 */
export type SigningRequestOutcome = Exclude<RequestStatus, 'pending'>;
/** A signing request workflow's result. */
export interface SigningRequestResult {
  outcome: SigningRequestOutcome;
  signers: SigningRequestState['signers'];
}

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

/** One workflow per webhook endpoint owns its queue of deliveries. */
export const webhookWorkflowId = (webhookId: string) => `webhook-${webhookId}`;
/** New deliveries are due: sent by the dispatcher after the commit that queued them. */
export const wakeSignal = defineSignal('wake');
export const webhookStatusQuery = defineQuery<WebhookQueueStatus>('status');

/** What one sweep found and handed on (or deleted), by kind. */
export interface SweepCounts {
  legacy: number;
  events: number;
  webhooks: number;
  signingRequests: number;
  /** Absent from the sweeps of before 2026-12-04. */
  bulkSends?: number;
  verificationLocks: number;
  idempotencyKeys: number;
}
/** Sweeps now, after the sweep under way if any, and answers what it did. */
export const sweepUpdate = defineUpdate<SweepCounts, []>('sweep');
