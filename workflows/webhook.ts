import { condition, continueAsNew, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from './activities';
import { searchAttributes, wakeSignal, webhookStatusQuery, type WebhookWorkflowInput } from './definitions';
import { type WebhookHealth, type WebhookQueueStatus } from '../src/domain/webhooks';

// Regular activities, not local ones: a local activity holds the workflow task open while it runs, and
// with it every query and signal (a batch to a slow endpoint runs for seconds). A worker killed
// mid-batch hands it to another worker: every attempt is recorded before its delivery is due again, so
// only unrecorded ones are sent twice (same webhook-id).
const act = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '3 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Waits before attempt 1, 2, …: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const RETRY_SCHEDULE_MS = [0, 5e3, 300e3, 1800e3, 2 * 3600e3, 5 * 3600e3, 10 * 3600e3, 14 * 3600e3, 20 * 3600e3, 24 * 3600e3];
/** A webhook that has failed every delivery for this long is disabled and its owner e-mailed. */
export const DISABLE_FAILING_AFTER_MS = 5 * 24 * 3600e3;
/** Deliveries in flight to one endpoint at once, and how many one activity takes. */
export const CONCURRENCY = 16;
export const BATCH = 1000;
/** A queue left empty this long ends its workflow; the next delivery starts a new one. */
export const IDLE_MS = 30_000;
/** History events after which the workflow continues as new (well below Temporal's own warnings). */
const MAX_HISTORY = 2_000;

/**
 * The delivery queue of one webhook endpoint (workflow id webhook-<wh id>). The pending deliveries are
 * rows in PostgreSQL, due at their next_retry_at; this loop sends what is due, several at once, then
 * sleeps until the next is due or the dispatcher signals new ones. A failing endpoint holds only its
 * own queue. Ends when the queue has stayed empty for IDLE_MS.
 */
export async function webhookWorkflow(input: WebhookWorkflowInput): Promise<void> {
  const { webhookId, retryScale } = input;
  const retryScheduleMs = RETRY_SCHEDULE_MS.map((ms) => ms * retryScale);
  let woken = false;
  let status: WebhookQueueStatus = { health: 'healthy', backlog: 0, oldestPendingAt: null, lastError: null };
  let shownHealth: WebhookHealth | undefined; // the search attribute, once this run has set it
  setHandler(wakeSignal, () => void (woken = true));
  setHandler(webhookStatusQuery, () => status);

  for (;;) {
    woken = false;
    const batch = await act.sendDueDeliveries({ webhookId, retryScheduleMs, concurrency: CONCURRENCY, limit: BATCH });
    if (!batch) return; // the webhook was deleted, and its deliveries with it
    if (batch.health !== 'disabled') {
      const reason = batch.gone ? 'gone' : batch.failingForMs !== null && batch.failingForMs >= DISABLE_FAILING_AFTER_MS ? 'failing' : null;
      if (reason) {
        await act.disableWebhook({ webhookId, reason });
        continue; // the next batch cancels what is left
      }
    }
    if (shownHealth !== batch.health) upsertSearchAttributes([{ key: searchAttributes.webhookHealth, value: (shownHealth = batch.health) }]);
    status = { health: batch.health, backlog: batch.backlog, oldestPendingAt: batch.oldestPendingAt, lastError: batch.lastError ?? status.lastError };

    if (workflowInfo().historyLength > MAX_HISTORY || workflowInfo().continueAsNewSuggested) await continueAsNew<typeof webhookWorkflow>(input);
    if (batch.nextDueInMs === 0) continue;
    if (batch.nextDueInMs === null) {
      if (!(await condition(() => woken, IDLE_MS))) return;
    } else {
      await condition(() => woken, batch.nextDueInMs);
    }
  }
}
