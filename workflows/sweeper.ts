import { proxyLocalActivities } from '@temporalio/workflow';
import type { SweeperActivities } from '../activities/sweeper';

const sweeper = proxyLocalActivities<SweeperActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/**
 * Run every minute by a schedule: starts what was committed a minute ago or more but never handed to
 * Temporal, and deletes Idempotency-Keys past their 24 hours.
 */
export async function sweeperWorkflow(): Promise<{
  events: number;
  webhooks: number;
  legacy: number;
  signingRequests: number;
  verificationLocks: number;
  idempotencyKeys: number;
}> {
  const legacy = await sweeper.adoptLegacyDeliveries({ limit: 100 });
  const events = await sweeper.dispatchStaleEvents({ olderThanMs: 60_000, limit: 500 });
  const webhooks = await sweeper.wakeStalledWebhooks({ olderThanMs: 60_000, limit: 500 });
  const signingRequests = await sweeper.startOrphanedSigningRequests({ olderThanMs: 60_000, limit: 100 });
  const verificationLocks = await sweeper.tellSendersOfLocks({ olderThanMs: 60_000, limit: 100 });
  const idempotencyKeys = await sweeper.deleteExpiredIdempotencyKeys({ limit: 1000 });
  return { events, webhooks, legacy, signingRequests, verificationLocks, idempotencyKeys };
}
