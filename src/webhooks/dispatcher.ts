import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import { afterCommit } from '../db/unitOfWork';
import type { EventConsumer } from '../events/service';
import { markEventsDispatched } from '../events/store';
import { queueDeliveries, queueEventDeliveries, WAKE_WINDOW_MS } from './queue';
import type { QueuedWebhook } from './store';
import { wakeWebhookWorkflow } from './workflow';

const WAKES_AT_ONCE = 16;

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface WebhookDispatcherOptions {
  client: Client;
  taskQueue: string;
  db: Db;
  retryScale: number;
  /** Told when a wake-up after commit fails; the sweeper wakes those webhooks later. */
  onError?: (error: unknown, webhooks: QueuedWebhook[]) => void;
}

/**
 * How events reach webhooks: as a consumer of the event log, queues each event's deliveries in its
 * transaction and, once it commits, wakes the workflows of the webhooks whose queues it filled. When a
 * process dies in between, the sweeper finds the queued deliveries nobody woke (wakeAll).
 */
export function createWebhookDispatcher({ client, taskQueue, db, retryScale, onError }: WebhookDispatcherOptions) {
  // One wake per webhook per WAKE_WINDOW_MS: the first at once; those asked for within the window go
  // together at its end (a running batch is still looking for due deliveries then, see
  // sendDueDeliveries). A burst is a few signals a second however many events it has, and each caller
  // is answered once a wake that left after its call has been sent.
  const windows = new Map<string, Waiter[]>();

  function wake(webhook: QueuedWebhook): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiting = windows.get(webhook.webhookId);
      if (waiting) return void waiting.push({ resolve, reject });
      const opened: Waiter[] = [{ resolve, reject }];
      windows.set(webhook.webhookId, opened);
      void (async () => {
        while (opened.length > 0) {
          const covered = opened.splice(0);
          const windowEnd = new Promise((end) => setTimeout(end, WAKE_WINDOW_MS));
          await wakeWebhookWorkflow(client, taskQueue, webhook, retryScale).then(
            () => covered.forEach((waiter) => waiter.resolve()),
            (error) => covered.forEach((waiter) => waiter.reject(error)),
          );
          await windowEnd;
        }
        windows.delete(webhook.webhookId);
      })();
    });
  }

  async function wakeAll(webhooks: QueuedWebhook[]) {
    for (let i = 0; i < webhooks.length; i += WAKES_AT_ONCE) await Promise.all(webhooks.slice(i, i + WAKES_AT_ONCE).map(wake));
  }

  /** The event log's consumer: queues an event's deliveries, and wakes their webhooks once it commits. */
  const recorded: EventConsumer['recorded'] = async (trx, event) => {
    const webhooks = await queueEventDeliveries(trx, event);
    // Without holding up the commit's caller; a failure is only told: the deliveries are committed and
    // due, which is what the sweeper looks for.
    if (webhooks.length > 0) afterCommit(trx, () => void wakeAll(webhooks).catch((error) => onError?.(error, webhooks)));
  };

  /**
   * Queues the deliveries of events recorded without them (by versions before deliveries were queued
   * in the event's transaction) and marks them dispatched, in one transaction, then wakes their webhooks.
   */
  async function dispatch(eventIds: string[]) {
    // Only events not dispatched yet: one dispatched long ago must not reach a webhook created since.
    const webhooks = await db.transaction(async (trx) => queueDeliveries(trx, await markEventsDispatched(trx, eventIds)));
    await wakeAll(webhooks);
  }

  return { recorded, dispatch, wakeAll };
}
