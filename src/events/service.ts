import { queryPrepared, type Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import { newId, nthIdSql } from '../ids';
import type { EventType, SignetEvent } from '../domain/events';
import { envelopeText, subscribersOf, type QueuedWebhook } from '../webhooks/queue';

/**
 * What wakes the webhooks whose queues a transaction filled, once it commits (src/worker/eventDispatcher.ts).
 * The transaction is a unit of work (src/db/unitOfWork.ts), which runs after-commit hooks.
 */
export interface AfterCommitDispatcher {
  afterCommit(trx: Db, webhooks: QueuedWebhook[]): void;
}

// One dispatcher per database (keyed by its knex config, which its transactions share).
const dispatchers = new WeakMap<object, AfterCommitDispatcher>();

/** From now on, the webhooks of every event recorded through `db` or its transactions are woken once its transaction commits. */
export function dispatchEventsOf(db: Db, dispatcher: AfterCommitDispatcher) {
  dispatchers.set(db.client.config, dispatcher);
}

/**
 * Records an event and queues its webhook deliveries, in the transaction that makes the change it
 * reports (the transactional outbox): the change, its event and its deliveries commit together or
 * not at all. Once the transaction commits, the dispatcher wakes those webhooks' queues; without a
 * dispatcher for the database (or when its process dies first), the sweeper wakes them.
 */
export async function recordEvent(trx: Db, accountId: string, type: EventType, data: Record<string, unknown>, idempotencyKey?: string): Promise<SignetEvent> {
  if (!trx.isTransaction) return unitOfWork(trx, (inner) => recordEvent(inner, accountId, type, data, idempotencyKey));
  // One prepared statement writes the event and queues its deliveries: this runs for every change.
  // An activity passes the key of its step: a retry finds the event already written, with its
  // deliveries, adds nothing, and gets that event back.
  const id = newId('event');
  const createdAt = new Date();
  const [inserted] = await queryPrepared<{ id: string; created_at: Date; data: Record<string, unknown>; webhook_ids: string[] }>(
    trx,
    'record_event',
    recordEventSql,
    [id, accountId, type, JSON.stringify(data), createdAt, idempotencyKey ?? null, newId('delivery'), envelopeText({ id, type, created_at: createdAt, data })],
  );
  const row = inserted ?? (await trx('events').where({ idempotency_key: idempotencyKey }).first('id', 'created_at', 'data'));
  if (inserted?.webhook_ids.length) {
    dispatchers.get(trx.client.config)?.afterCommit(
      trx,
      inserted.webhook_ids.map((webhookId) => ({ webhookId, accountId })),
    );
  }
  return { id: row.id, type, timestamp: row.created_at.toISOString(), data: row.data };
}

// dispatched_at: the event's deliveries are queued (events of earlier versions waited for a dispatcher).
// The deliveries' ids are made from one ($7), however many webhooks subscribe.
const recordEventSql = `
  with inserted as (
    insert into events (id, account_id, type, data, created_at, dispatched_at, idempotency_key)
    values ($1, $2, $3, $4, $5, $5, $6)
    on conflict (idempotency_key) do nothing
    returning id, created_at, data),
  subscribers as (
    select w.id, row_number() over (order by w.id) - 1 as n from webhooks w where ${subscribersOf('$2', '$3')}),
  queued as (
    insert into webhook_deliveries (id, webhook_id, event_id, event_type, body, next_retry_at)
    select ${nthIdSql('$7', 's.n')}, s.id, i.id, $3, $8, now()
    from inserted i cross join subscribers s
    returning webhook_id)
  select id, created_at, data, array(select webhook_id from queued order by webhook_id) as webhook_ids
  from inserted`;
