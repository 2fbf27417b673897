import { planNames, plans } from '../domain/plans';
import { queryPrepared, type Db } from '../db';
import type { RecordedEvent } from '../events/service';
import { newId, nthIdSql } from '../ids';

// The queue of each webhook endpoint: one webhook_deliveries row per (webhook, event), due at
// next_retry_at. Events are queued in the transaction that records them (by the webhook dispatcher,
// src/webhooks/dispatcher.ts, a consumer of the event log).

/** Queues a recorded event's deliveries to the webhooks subscribed to it, in the event's transaction. Returns those webhooks. */
export async function queueEventDeliveries(trx: Db, event: RecordedEvent): Promise<QueuedWebhook[]> {
  // One prepared statement for every event; the deliveries' ids are made from one ($1), however many webhooks subscribe.
  const queued = await queryPrepared<{ webhook_id: string }>(trx, 'queue_event_deliveries', queueEventSql, [
    newId('delivery'),
    event.id,
    event.accountId,
    event.type,
    envelopeText({ id: event.id, type: event.type, created_at: event.createdAt, data: event.data }),
  ]);
  return queued.map((row) => ({ webhookId: row.webhook_id, accountId: event.accountId })).sort((a, b) => a.webhookId.localeCompare(b.webhookId));
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

const plansWithWebhooks = planNames.filter((plan) => plans[plan].webhooks);

/**
 * SQL for a where clause on webhooks (as w): those that receive an event of `account` and `type` (two SQL
 * expressions): enabled, subscribed to the type or to *, of an account on a plan with webhooks (they
 * stay with an account that leaves the Business plan, but receive nothing until it returns).
 */
const subscribersOf = (account: string, type: string) =>
  `w.account_id = ${account} and w.enabled and w.events && array[${type}, '*']
   and exists (select 1 from accounts a where a.id = w.account_id and a.plan in (${plansWithWebhooks.map((plan) => `'${plan}'`).join(', ')}))`;

const queueEventSql = `
  insert into webhook_deliveries (id, webhook_id, event_id, event_type, body, next_retry_at)
  select ${nthIdSql('$1', 's.n')}, s.id, $2, $4, $5, now()
  from (select w.id, row_number() over (order by w.id) - 1 as n from webhooks w where ${subscribersOf('$3', '$4')}) s
  returning webhook_id`;

interface QueuedEvent {
  id: string;
  type: string;
  created_at: Date;
  data: unknown;
}

/** Queues one delivery per (webhook, event), due now; a pair already queued is left as it is. */
export async function insertDeliveries(trx: Db, pairs: (QueuedWebhook & { event: QueuedEvent })[]): Promise<QueuedWebhook[]> {
  if (pairs.length === 0) return [];
  await trx('webhook_deliveries')
    .insert(
      pairs.map(({ webhookId, event }) => ({
        id: newId('delivery'),
        webhook_id: webhookId,
        event_id: event.id,
        event_type: event.type,
        body: envelopeText(event),
        next_retry_at: trx.fn.now(),
      })),
    )
    .onConflict(['webhook_id', 'event_id'])
    .ignore();
  return [...new Map(pairs.map(({ webhookId, accountId }) => [webhookId, { webhookId, accountId }])).values()];
}

/**
 * Queues the deliveries of events recorded earlier, in the caller's transaction (queueEventDeliveries
 * queues an event's own as it is recorded). Safe to repeat. Returns the webhooks whose queues got work.
 */
export async function queueDeliveries(trx: Db, eventIds: string[]): Promise<QueuedWebhook[]> {
  if (eventIds.length === 0) return [];
  const { rows }: { rows: (QueuedWebhook & QueuedEvent)[] } = await trx.raw(
    `select w.id as "webhookId", w.account_id as "accountId", e.id, e.type, e.created_at, e.data
     from events e join webhooks w on ${subscribersOf('e.account_id', 'e.type')} where e.id = any(?)`,
    [eventIds],
  );
  return insertDeliveries(
    trx,
    rows.map(({ webhookId, accountId, ...event }) => ({ webhookId, accountId, event })),
  );
}

export interface QueuedWebhook {
  webhookId: string;
  accountId: string;
}
