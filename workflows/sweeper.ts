import { allHandlersFinished, condition, continueAsNew, log, patched, proxyLocalActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { SweeperActivities } from './activities';
import { sweepUpdate, type SweepCounts } from './definitions';

const sweeper = proxyLocalActivities<SweeperActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

export const SWEEP_EVERY_MS = 60_000;
/** Sweeps before starting over with a fresh history: 8 hours, some 5,000 events. */
export const SWEEPS_PER_RUN = 480;

/**
 * Starts what was committed a minute ago or more but never handed to Temporal, and deletes
 * Idempotency-Keys past their 24 hours.
 */
async function sweep(): Promise<SweepCounts> {
  const legacy = await sweeper.adoptLegacyDeliveries({ limit: 100 });
  const events = await sweeper.dispatchStaleEvents({ olderThanMs: 60_000, limit: 500 });
  const webhooks = await sweeper.wakeStalledWebhooks({ olderThanMs: 60_000, limit: 500 });
  const signingRequests = await sweeper.startOrphanedSigningRequests({ olderThanMs: 60_000, limit: 100 });
  // A step added 2026-12-04: the sweeps recorded before it replay without it.
  const bulkSends = patched('sweep-bulk-sends') ? await sweeper.startOrphanedBulkSends({ olderThanMs: 60_000, limit: 100 }) : undefined;
  const verificationLocks = await sweeper.tellSendersOfLocks({ olderThanMs: 60_000, limit: 100 });
  const idempotencyKeys = await sweeper.deleteExpiredIdempotencyKeys({ limit: 1000 });
  return { events, webhooks, legacy, signingRequests, bulkSends, verificationLocks, idempotencyKeys };
}

/**
 * Runs for good, one per task queue: a sweep every minute, and one more whenever the `sweep` update
 * asks. One workflow rather than one a minute, so that housekeeping does not fill the Temporal UI's
 * list of workflows. A sweep that fails is logged and tried again at the next minute.
 */
export async function sweeperWorkflow(): Promise<SweepCounts> {
  // A run started by the schedule of before 2026-12-02 swept once and ended; remove once none can be
  // running (test/workflows/replay.test.ts).
  if (!patched('sweeper-loops')) return sweep();
  // One sweep at a time: one asked for while another is under way runs after it.
  let previous: Promise<unknown> = Promise.resolve();
  const sweepInTurn = () => {
    const next = previous.then(sweep);
    previous = next.catch(() => undefined);
    return next;
  };
  setHandler(sweepUpdate, sweepInTurn);
  for (let sweeps = 0; sweeps < SWEEPS_PER_RUN && !workflowInfo().continueAsNewSuggested; sweeps++) {
    await sweepInTurn().catch((error: Error) =>
      log.warn('sweep failed; the next is in a minute', { error: (error.cause as Error | undefined)?.message ?? error.message }),
    );
    await sleep(SWEEP_EVERY_MS);
  }
  await condition(allHandlersFinished);
  return continueAsNew<typeof sweeperWorkflow>();
}
