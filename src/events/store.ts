import { queryPrepared, type Db } from '../db';
import type { EventType } from '../domain/events';

// The queries of the events table. Each takes a Db, which may be the caller's transaction.

// dispatched_at: the event's consumers ran in its transaction (events of earlier versions waited for a dispatcher).
const recordEventSql = `
  insert into events (id, account_id, type, data, created_at, dispatched_at, idempotency_key)
  values ($1, $2, $3, $4, $5, $5, $6)
  on conflict (idempotency_key) do nothing
  returning id, created_at, data`;

/** Writes an event (prepared: every change writes one); undefined when one with its idempotency key is written already. */
export async function insertEvent(
  trx: Db,
  event: { id: string; accountId: string; type: EventType; data: Record<string, unknown>; createdAt: Date; idempotencyKey: string | null },
) {
  const [inserted] = await queryPrepared<{ id: string; created_at: Date; data: Record<string, unknown> }>(trx, 'record_event', recordEventSql, [
    event.id,
    event.accountId,
    event.type,
    JSON.stringify(event.data),
    event.createdAt,
    event.idempotencyKey,
  ]);
  return inserted;
}

export const findEventByKey = (trx: Db, idempotencyKey: string | undefined) =>
  trx('events').where({ idempotency_key: idempotencyKey }).first('id', 'created_at', 'data');

/**
 * Marks dispatched, in the caller's transaction, those of `eventIds` whose consumers never ran (events
 * recorded by versions before they ran in the event's transaction), and returns them: the caller runs
 * them now. An event dispatched already is not returned again.
 */
export async function markEventsDispatched(trx: Db, eventIds: string[]): Promise<string[]> {
  const marked: { id: string }[] = await trx('events')
    .whereIn('id', eventIds)
    .whereNull('dispatched_at')
    .update({ dispatched_at: trx.fn.now() })
    .returning('id');
  return marked.map((event) => event.id);
}

/** The ids of up to `limit` events committed before `before` and never dispatched, oldest first. */
export async function findUndispatchedEvents(db: Db, before: Date, limit: number): Promise<string[]> {
  const stale: { id: string }[] = await db('events')
    .whereNull('dispatched_at')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .select('id');
  return stale.map((event) => event.id);
}
