// The vocabulary of a signing request, defined once: the api's schemas, the store, the read models and the
// workflow use these. Pure data and types: no I/O, nothing from Temporal.
export const signingOrders = ['parallel', 'sequential'] as const;
export const requestStatuses = ['pending', 'completed', 'declined', 'cancelled', 'expired'] as const;
export const signerStatuses = ['pending', 'notified', 'viewed', 'signed', 'approved', 'declined'] as const;
/**
 * Who a recipient is: a signer signs (its fields, or on the signatures page); an approver approves or
 * declines; a viewer must open the documents; a cc gets the sealed documents and blocks nothing.
 */
export const recipientTypes = ['signer', 'approver', 'viewer', 'cc'] as const;
export type RecipientType = (typeof recipientTypes)[number];
/** How a signer proves who they are before the page shows anything: a code the sender told them, or one e-mailed to them. */
export const verificationMethods = ['access_code', 'email_code'] as const;
export type VerificationMethod = (typeof verificationMethods)[number];
export type SigningOrder = (typeof signingOrders)[number];
export type RequestStatus = (typeof requestStatuses)[number];
export type SignerStatus = (typeof signerStatuses)[number];

/** A recipient as its request's workflow knows it: recipients with the same routingOrder are one step. */
export interface RoutedRecipient {
  id: string;
  type: RecipientType;
  routingOrder: number;
}

export interface SigningRequestInput {
  requestId: string;
  signingOrder: SigningOrder;
  /** In signing order. */
  signerIds: string[];
  /**
   * Every recipient with its type and step, in signerIds' order. Absent from the input of requests begun
   * before recipients had types: those are all signers, in one step (parallel) or one step each (sequential).
   */
  recipients?: RoutedRecipient[];
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
  /** The positions of the fields their conditions hid: neither required nor sealed. */
  hiddenFields?: number[];
}

export interface ActInput extends ClientInfo {
  signerId: string;
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
  /** While sealing: how many attempts failed, the last error, when the next attempt runs, and the service it waits for. */
  sealing: null | SealingProgress;
}

export interface SealingProgress {
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  /** The service the seal waits for (a timestamp authority or a revocation responder that did not answer), and its address. */
  waitingOn?: { service: SealService; url: string | null; since: string } | null;
}

/** What a seal above B-B may wait for. */
export const sealServices = ['timestamp authority', 'revocation data'] as const;
export type SealService = (typeof sealServices)[number];

/** PAdES baseline levels (ETSI EN 319 142-1), each adding to the one before: src/pdf/seal.ts seals at them. */
export const sealLevels = ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const;
export type SealLevel = (typeof sealLevels)[number];

/** Why an update was refused; the api answers 409 conflict with the failure's message. */
export const refusalTypes = ['RequestEnded', 'Completing', 'UnknownSigner', 'AlreadyActed', 'NotYourTurn', 'NotYourPart'] as const;

/** The recipients of a request and their steps, from its input (requests begun before recipients had types have none). */
export function routedRecipients(input: Pick<SigningRequestInput, 'signerIds' | 'signingOrder' | 'recipients'>): RoutedRecipient[] {
  return (
    input.recipients ?? input.signerIds.map((id, index) => ({ id, type: 'signer' as const, routingOrder: input.signingOrder === 'sequential' ? index + 1 : 1 }))
  );
}

/** The failure type of an activity whose change the database refused for good (activities/signingRequest.ts). */
export const databaseRefusal = 'DatabaseRefused';
/** The failure type of a seal that waits for a timestamp authority or revocation responder; its details: `{ service, url }`. */
export const sealServiceUnavailable = 'SealServiceUnavailable';
/** An update whose change the database refused for good: nothing changed, the request stays as it was; the api answers 400. */
export const changeRefused = 'ChangeRefused';

/** A recipient's part is done: a signer signed, an approver approved, a viewer viewed (a signer's view only opens the page). */
export const hasDonePart = (type: RecipientType, status: SignerStatus) =>
  status === 'signed' || status === 'approved' || (type === 'viewer' && status === 'viewed');

/** A recipient's part is done, or it declined. */
export const hasActed = (recipient: { recipientType: RecipientType; status: SignerStatus }) =>
  hasDonePart(recipient.recipientType, recipient.status) || recipient.status === 'declined';

/** Whose turn it is among recipients still to act (cc left out by the caller): those of the lowest step. */
export function firstStepOf<R extends { routingOrder: number }>(open: R[]): R[] {
  const step = Math.min(...open.map((recipient) => recipient.routingOrder));
  return open.filter((recipient) => recipient.routingOrder === step);
}

/** A recipient who still has to act: anyone but a cc who has neither done their part nor declined. */
export const isStillToAct = (recipient: { recipientType: RecipientType; status: SignerStatus }) => recipient.recipientType !== 'cc' && !hasActed(recipient);

/** Every recipient type and status of a recipient still to act (isStillToAct as data), for queries that filter rows by it. */
export const stillToAct = recipientTypes.flatMap((recipientType) =>
  signerStatuses.filter((status) => isStillToAct({ recipientType, status })).map((status) => ({ recipientType, status })),
);

/**
 * Whom a request is waiting on: while it is pending, its recipients still to act of the first step that
 * has any, so never a later step's whose turn has not come. The one definition behind `progress.waitingFor`,
 * the request page's "Waiting for" and the dashboard's "Waiting on".
 */
export function waitingOn<R extends { recipientType: RecipientType; status: SignerStatus; routingOrder: number }>(
  requestStatus: RequestStatus,
  recipients: R[],
): R[] {
  return requestStatus === 'pending' ? firstStepOf(recipients.filter(isStillToAct)) : [];
}

/** Where a request stands as its rows alone tell: enough for lists, and for a request whose workflow has finished. */
export function progressFromDatabase({
  request,
  signers,
}: {
  request: { status: RequestStatus };
  signers: { id: string; recipientType: RecipientType; status: SignerStatus; routingOrder: number }[];
}): SigningRequestProgress {
  if (request.status !== 'pending') return { stage: 'finished', waitingFor: [], sealing: null };
  const waiting = waitingOn(request.status, signers);
  if (waiting.length === 0) return { stage: 'sealing', waitingFor: [], sealing: null };
  return { stage: 'awaiting_signers', waitingFor: waiting.map((signer) => signer.id), sealing: null };
}
