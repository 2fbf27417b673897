import { proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import type { DeliverEventInput } from './definitions';

// Local activities: each runs inside the workflow task that asks for it, which saves the server a
// round of activity scheduling per step and nearly doubled deliveries per second in the benchmark. One
// attempt per call: its own retries cover only failures to attempt at all (database down, worker
// lost), so they are quick and unlimited. The delivery schedule is decided here.
const local = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Waits before attempt 1, 2, …: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const RETRY_SCHEDULE_MS = [0, 5e3, 300e3, 1800e3, 2 * 3600e3, 5 * 3600e3, 10 * 3600e3, 14 * 3600e3, 20 * 3600e3, 24 * 3600e3];
/** A webhook that has failed every delivery for this long is disabled and its owner e-mailed. */
export const DISABLE_FAILING_AFTER_MS = 5 * 24 * 3600e3;

/** ±10%, so that deliveries failing together do not all come back at the same moment. */
const jittered = (delayMs: number) => Math.round(delayMs * (0.9 + Math.random() * 0.2));

/**
 * Delivers one committed event (workflow id deliver-<event id>): one delivery per subscribed webhook,
 * each retried on the schedule until it succeeds, the receiver answers 410, or the schedule ends.
 */
export async function deliverEventWorkflow({ eventId, retryScale }: DeliverEventInput): Promise<void> {
  const deliveries = await local.prepareDeliveries(eventId);
  await Promise.all(deliveries.map((delivery) => deliverWithRetries(delivery.deliveryId, delivery.webhookId, retryScale)));
}

async function deliverWithRetries(deliveryId: string, webhookId: string, retryScale: number) {
  for (let attempt = 1; attempt <= RETRY_SCHEDULE_MS.length; attempt++) {
    const isLast = attempt === RETRY_SCHEDULE_MS.length;
    const nextDelayMs = isLast ? null : jittered(RETRY_SCHEDULE_MS[attempt] * retryScale);
    const result = await local.attemptDelivery({ deliveryId, nextDelayMs });
    if (result.outcome === 'gone') await local.disableWebhook({ webhookId, reason: 'gone' });
    else if (result.failingForMs !== null && result.failingForMs >= DISABLE_FAILING_AFTER_MS) await local.disableWebhook({ webhookId, reason: 'failing' });
    if (result.outcome !== 'retry' || result.retryInMs === null) return;
    await sleep(result.retryInMs);
  }
}
