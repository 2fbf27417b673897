import { Context } from '@temporalio/activity';
import { createSigningActivities, type SigningActivityDeps } from './signingRequest';
import { createSweeperActivities, type SweeperActivityDeps } from './sweeper';
import { createWebhookActivities, type WebhookActivityDeps } from './webhooks';
import { createSearchActivities, type SearchActivityDeps } from './search';
import { createArchiveActivities, type ArchiveActivityDeps } from './archive';
import { createBulkSendActivities, type BulkSendActivityDeps } from './bulkSend';
import type { Activities } from '../workflows/activities';

// Activities are the only code the workflows call that touches the world. They get their
// dependencies from this factory and must be safe to retry: keyed by ids, conditional updates.
export type ActivityDeps = SigningActivityDeps & WebhookActivityDeps & SweeperActivityDeps & SearchActivityDeps & ArchiveActivityDeps & BulkSendActivityDeps;

const HEARTBEAT_EVERY_MS = 5_000;

// Every activity heartbeats while it runs, so a worker that dies mid-activity is noticed within the
// workflow's heartbeatTimeout (seconds), not after the whole startToCloseTimeout.
function heartbeating<Args extends unknown[], Result>(work: (...args: Args) => Promise<Result>) {
  return async (...args: Args): Promise<Result> => {
    const context = Context.current();
    if (context.info.isLocal) return work(...args); // local activities cannot heartbeat
    const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      return await work(...args);
    } finally {
      clearInterval(timer);
    }
  };
}

/** Every activity the worker registers, each under the name its workflow schedules it by (histories record these names: never rename one). */
export function createActivities(deps: ActivityDeps): Activities {
  const signing = createSigningActivities(deps);
  const webhooks = createWebhookActivities(deps);
  const sweeper = createSweeperActivities(deps);
  const search = createSearchActivities(deps);
  const archive = createArchiveActivities(deps);
  const bulk = createBulkSendActivities(deps);
  return {
    // workflows/signingRequest.ts
    announceRequest: heartbeating(signing.announceRequest),
    sendInvitations: heartbeating(signing.sendInvitations),
    sendReminders: heartbeating(signing.sendReminders),
    recordView: heartbeating(signing.recordView),
    recordSignature: heartbeating(signing.recordSignature),
    recordApproval: heartbeating(signing.recordApproval),
    recordViewStep: heartbeating(signing.recordViewStep),
    recordDecline: heartbeating(signing.recordDecline),
    recordCancellation: heartbeating(signing.recordCancellation),
    expireRequest: heartbeating(signing.expireRequest),
    completeRequest: heartbeating(signing.completeRequest),
    sendClosingMails: heartbeating(signing.sendClosingMails),
    // workflows/webhook.ts
    sendDueDeliveries: heartbeating(webhooks.sendDueDeliveries),
    disableWebhook: heartbeating(webhooks.disableWebhook),
    // workflows/sweeper.ts
    adoptLegacyDeliveries: heartbeating(sweeper.adoptLegacyDeliveries),
    dispatchStaleEvents: heartbeating(sweeper.dispatchStaleEvents),
    wakeStalledWebhooks: heartbeating(sweeper.wakeStalledWebhooks),
    startOrphanedSigningRequests: heartbeating(sweeper.startOrphanedSigningRequests),
    startOrphanedBulkSends: heartbeating(sweeper.startOrphanedBulkSends),
    tellSendersOfLocks: heartbeating(sweeper.tellSendersOfLocks),
    deleteExpiredIdempotencyKeys: heartbeating(sweeper.deleteExpiredIdempotencyKeys),
    // workflows/searchIndexer.ts
    indexEvent: heartbeating(search.indexEvent),
    indexEventsFor: heartbeating(search.indexEventsFor),
    // workflows/archiveRenewal.ts
    findArchivesDue: heartbeating(archive.findArchivesDue),
    renewArchive: heartbeating(archive.renewArchive),
    // workflows/bulkSend.ts
    sendBulkRows: heartbeating(bulk.sendBulkRows),
    finishBulkSend: heartbeating(bulk.finishBulkSend),
  };
}
