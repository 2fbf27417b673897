import type { Db } from '../db';
import type { RecordedEvent } from '../events/service';
import { newId } from '../ids';
import { findSubscribersOfEvents, insertDeliveryRows, insertEventDeliveries, type QueuedWebhook } from './store';

// The queue of each webhook endpoint: one webhook_deliveries row per (webhook, event), due at
// next_retry_at. Events are queued in the transaction that records them (by the webhook dispatcher,
// src/webhooks/dispatcher.ts, a consumer of the event log).

/** Queues a recorded event's deliveries to the webhooks subscribed to it, in the event's transaction. Returns those webhooks. */
export async function queueEventDeliveries(trx: Db, event: RecordedEvent): Promise<QueuedWebhook[]> {
  const webhookIds = await insertEventDeliveries(trx, {
    firstId: newId('delivery'),
    id: event.id,
    accountId: event.accountId,
    type: event.type,
    body: envelopeText({ id: event.id, type: event.type, created_at: event.createdAt, data: event.data }),
  });
  return webhookIds.map((webhookId) => ({ webhookId, accountId: event.accountId })).sort((a, b) => a.webhookId.localeCompare(b.webhookId));
}

/** A webhook's envelope, {id, type, timestamp, data}, as the exact text that is sent and signed. */
export const envelopeText = (event: { id: string; type: string; created_at: Date; data: unknown }) =>
  JSON.stringify({ id: event.id, type: event.type, timestamp: event.created_at.toISOString(), data: event.data });

/**
 * A webhook's queue is woken at most once in this long: the first event at once, the others of the
 * window by one wake at its end (src/webhooks/dispatcher.ts). A batch goes on looking for due deliveries
 * until none has been due for as long (sendDueDeliveries), so it picks up the window's events itself.
 */
export const WAKE_WINDOW_MS = 500;

interface QueuedEvent {
  id: string;
  type: string;
  created_at: Date;
  data: unknown;
}

/** Queues one delivery per (webhook, event), due now; a pair already queued is left as it is. */
export async function insertDeliveries(trx: Db, pairs: (QueuedWebhook & { event: QueuedEvent })[]): Promise<QueuedWebhook[]> {
  if (pairs.length === 0) return [];
  await insertDeliveryRows(
    trx,
    pairs.map(({ webhookId, event }) => ({ webhook_id: webhookId, event_id: event.id, event_type: event.type, body: envelopeText(event) })),
  );
  return [...new Map(pairs.map(({ webhookId, accountId }) => [webhookId, { webhookId, accountId }])).values()];
}

/**
 * Queues the deliveries of events recorded earlier, in the caller's transaction (queueEventDeliveries
 * queues an event's own as it is recorded). Safe to repeat. Returns the webhooks whose queues got work.
 */
export async function queueDeliveries(trx: Db, eventIds: string[]): Promise<QueuedWebhook[]> {
  if (eventIds.length === 0) return [];
  const rows = await findSubscribersOfEvents(trx, eventIds);
  return insertDeliveries(
    trx,
    rows.map(({ webhookId, accountId, ...event }) => ({ webhookId, accountId, event })),
  );
}
