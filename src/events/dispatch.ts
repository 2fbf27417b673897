import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import { wakeWebhookWorkflow } from '../temporal/client';
import { queueDeliveries, type QueuedWebhook } from '../webhooks/delivery';

const WAKES_AT_ONCE = 16;
const WAKE_EVERY_MS = 50;

export interface EventDispatcherOptions {
  client: Client;
  taskQueue: string;
  db: Db;
  retryScale: number;
  /** Told when a dispatch after commit fails; the sweeper picks the events up later. */
  onError?: (error: unknown, eventIds: string[]) => void;
}

/**
 * Hands committed events to webhook delivery: queues a delivery per subscribed webhook and marks the
 * events dispatched in one transaction, then wakes each of those webhooks' workflows. When a process
 * dies in between, the sweeper finds the undispatched events, or the queued deliveries nobody woke.
 */
export function createEventDispatcher({ client, taskQueue, db, retryScale, onError }: EventDispatcherOptions) {
  // A wake in flight for a webhook is followed by at most one more, WAKE_EVERY_MS after it, however
  // many events arrive meanwhile; every event is still followed by a wake that left after its commit.
  const waking = new Map<string, { again: boolean; done: Promise<void> }>();

  function wake(webhook: QueuedWebhook): Promise<void> {
    const current = waking.get(webhook.webhookId);
    if (current) {
      current.again = true;
      return current.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      try {
        for (;;) {
          entry.again = false;
          await wakeWebhookWorkflow(client, taskQueue, webhook, retryScale);
          if (!entry.again) break;
          // Events keep coming: gather them a moment, so that a burst is a few signals a second, not hundreds.
          await new Promise((resolve) => setTimeout(resolve, WAKE_EVERY_MS));
        }
      } finally {
        waking.delete(webhook.webhookId);
      }
    })();
    waking.set(webhook.webhookId, entry);
    return entry.done;
  }

  async function wakeAll(webhooks: QueuedWebhook[]) {
    for (let i = 0; i < webhooks.length; i += WAKES_AT_ONCE) await Promise.all(webhooks.slice(i, i + WAKES_AT_ONCE).map(wake));
  }

  // Dispatches asked for while one's transaction is in flight wait for it, then go together in one
  // transaction: under a burst, a handful of transactions instead of one per event.
  let waiting: { eventIds: string[]; done: Promise<void> } | null = null;
  let committing: Promise<unknown> = Promise.resolve();

  function dispatch(eventIds: string[]): Promise<void> {
    if (waiting) {
      waiting.eventIds.push(...eventIds);
      return waiting.done;
    }
    const batch: { eventIds: string[]; done: Promise<void> } = { eventIds: [...eventIds], done: Promise.resolve() };
    const queued = committing.catch(() => undefined).then(() => {
      waiting = null;
      return queue(batch.eventIds);
    });
    committing = queued;
    batch.done = queued.then(wakeAll);
    waiting = batch;
    return batch.done;
  }

  /** Queues the deliveries of the events not dispatched yet and marks them dispatched, in one transaction. */
  function queue(eventIds: string[]) {
    return db.transaction(async (trx) => {
      // Only events not dispatched yet: one dispatched long ago must not reach a webhook created since.
      const fresh: string[] = await trx('events').whereIn('id', eventIds).whereNull('dispatched_at').pluck('id');
      const webhooks = await queueDeliveries(trx, fresh);
      await trx('events').whereIn('id', fresh).whereNull('dispatched_at').update({ dispatched_at: trx.fn.now() });
      return webhooks;
    });
  }

  /**
   * Dispatches once `trx` commits, without holding up its caller. A failure is only logged: the event
   * is committed and undispatched (or its deliveries queued and due), which is what the sweeper looks for.
   */
  function afterCommit(trx: Db, eventIds: string[]) {
    const committed = trx.isTransaction ? (trx as unknown as { executionPromise: Promise<unknown> }).executionPromise : Promise.resolve();
    committed.then(
      () => dispatch(eventIds).catch((error) => onError?.(error, eventIds)),
      () => undefined, // rolled back: there is nothing to deliver
    );
  }

  return { dispatch, wakeAll, afterCommit };
}

export type EventDispatcher = ReturnType<typeof createEventDispatcher>;
