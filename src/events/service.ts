import { queryPrepared, type Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import { newId } from '../ids';
import type { EventType, SignetEvent } from '../domain/events';

/** An event as written, for what else it does in its transaction. */
export interface RecordedEvent {
  id: string;
  accountId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: Date;
}

/**
 * What else an event does, in the transaction that records it: e.g. queue its webhook deliveries
 * (src/webhooks/dispatcher.ts). Runs once per event, in a unit of work (src/db/unitOfWork.ts), so it may
 * register work for after the commit. Readers that follow the events table on their own (search's
 * cursor) need no consumer.
 */
export interface EventConsumer {
  recorded(trx: Db, event: RecordedEvent): Promise<void>;
}

export interface EventLog {
  /**
   * Records an event, and hands it to the consumers, in the transaction that makes the change it
   * reports (the transactional outbox): the change, its event and what its consumers write commit
   * together or not at all. An activity passes the key of its step: a retry finds the event already
   * written, adds nothing, and gets that event back.
   */
  record(trx: Db, accountId: string, type: EventType, data: Record<string, unknown>, idempotencyKey?: string): Promise<SignetEvent>;
}

/** The event log, with every consumer of its events named here; src/system.ts builds the one the system uses. */
export function createEventLog(consumers: EventConsumer[]): EventLog {
  async function record(trx: Db, accountId: string, type: EventType, data: Record<string, unknown>, idempotencyKey?: string): Promise<SignetEvent> {
    if (!trx.isTransaction) return unitOfWork(trx, (inner) => record(inner, accountId, type, data, idempotencyKey));
    const [inserted] = await queryPrepared<{ id: string; created_at: Date; data: Record<string, unknown> }>(trx, 'record_event', recordEventSql, [
      newId('event'),
      accountId,
      type,
      JSON.stringify(data),
      new Date(),
      idempotencyKey ?? null,
    ]);
    if (!inserted) {
      const row = await trx('events').where({ idempotency_key: idempotencyKey }).first('id', 'created_at', 'data');
      return { id: row.id, type, timestamp: row.created_at.toISOString(), data: row.data };
    }
    const event = { id: inserted.id, accountId, type, data: inserted.data, createdAt: inserted.created_at };
    for (const consumer of consumers) await consumer.recorded(trx, event);
    return { id: event.id, type, timestamp: event.createdAt.toISOString(), data: event.data };
  }
  return { record };
}

// dispatched_at: the event's consumers ran in its transaction (events of earlier versions waited for a dispatcher).
const recordEventSql = `
  insert into events (id, account_id, type, data, created_at, dispatched_at, idempotency_key)
  values ($1, $2, $3, $4, $5, $5, $6)
  on conflict (idempotency_key) do nothing
  returning id, created_at, data`;

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
