// What each workflow asks of the world, activity by activity: the worker registers exactly these names
// (activities/index.ts implements them, typed by these, so neither side can change alone), and workflow
// histories record them: never rename one. Types only, so that the workflows name nothing above them.
import type { ActInput, ClientInfo, DeclineInput, RemindOutcome, SignInput } from '../src/domain/signingRequests';
import type { WebhookQueueStatus } from '../src/domain/webhooks';
import type { Actor } from '../src/domain/actors';

/** workflows/signingRequest.ts: its transitions (true when recorded, false when the request had ended), its seal and its e-mails. */
export interface SigningRequestActivities {
  announceRequest(requestId: string): Promise<void>;
  sendInvitations(requestId: string, signerIds: string[]): Promise<void>;
  sendReminders(requestId: string, signerIds: string[], round: number): Promise<RemindOutcome>;
  recordView(requestId: string, view: { signerId: string } & ClientInfo): Promise<void>;
  recordSignature(requestId: string, sign: SignInput): Promise<boolean>;
  recordApproval(requestId: string, approval: ActInput): Promise<boolean>;
  recordViewStep(requestId: string, view: ActInput): Promise<boolean>;
  recordDecline(requestId: string, decline: DeclineInput): Promise<boolean>;
  /** actor: who cancelled (null: the account, as before members, or a bulk send's cancel). */
  recordCancellation(requestId: string, reason: string | null, actor: Actor | null): Promise<boolean>;
  expireRequest(requestId: string): Promise<boolean>;
  completeRequest(requestId: string): Promise<void>;
  sendClosingMails(requestId: string): Promise<void>;
}

/** What a batch of deliveries tells the webhook's workflow. */
export interface DeliveryBatch extends WebhookQueueStatus {
  /** The endpoint answered 410 Gone: the webhook is to be disabled. */
  gone: boolean;
  /** How long the webhook has failed without a single success, when it is failing. */
  failingForMs: number | null;
  /** When the next pending delivery is due: 0 when some already are, null when none is pending. */
  nextDueInMs: number | null;
}

/** workflows/webhook.ts. A batch is null once the webhook is deleted. */
export interface WebhookActivities {
  sendDueDeliveries(input: { webhookId: string; retryScheduleMs: number[]; concurrency: number; limit: number }): Promise<DeliveryBatch | null>;
  disableWebhook(input: { webhookId: string; reason: 'gone' | 'failing' }): Promise<void>;
}

type Stale = { olderThanMs: number; limit: number };

/** workflows/sweeper.ts: each answers how many it handed on (or deleted). */
export interface SweeperActivities {
  adoptLegacyDeliveries(input: { limit: number }): Promise<number>;
  dispatchStaleEvents(input: Stale): Promise<number>;
  wakeStalledWebhooks(input: Stale): Promise<number>;
  startOrphanedSigningRequests(input: Stale): Promise<number>;
  startOrphanedBulkSends(input: Stale): Promise<number>;
  tellSendersOfLocks(input: Stale): Promise<number>;
  deleteExpiredIdempotencyKeys(input: { limit: number }): Promise<number>;
}

/** workflows/searchIndexer.ts (indexEvent: kept for the indexers of earlier versions). */
export interface SearchActivities {
  indexEvent(eventId: string): Promise<void>;
  indexEventsFor(runForMs: number): Promise<number>;
}

/** workflows/archiveRenewal.ts: the sealed PDFs due and not made or renewed since `since` (ISO 8601), and one renewed (false: it was not due any more). */
export interface ArchiveActivities {
  findArchivesDue(input: { limit: number; since: string }): Promise<{ requestId: string; documentId: string }[]>;
  renewArchive(due: { requestId: string; documentId: string }): Promise<boolean>;
}

/** workflows/bulkSend.ts: a batch of a job's queued rows sent, and the job finished once none is queued (src/bulkSends/service.ts). */
export interface BulkSendActivities {
  sendBulkRows(input: { bulkSendId: string; limit: number }): Promise<{ sent: number; failed: number; remaining: number; waitUntil?: string }>;
  /** How many sent requests a cancel asked for are left to cancel; 0 once the job is finished. */
  finishBulkSend(input: { bulkSendId: string; limit: number }): Promise<number>;
}

export type Activities = SigningRequestActivities & WebhookActivities & SweeperActivities & SearchActivities & ArchiveActivities & BulkSendActivities;
