import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import { newId } from '../ids';
import type { EventType, SignetEvent } from '../domain/events';
import { currentActor } from './actingAs';
import { findEventByKey, insertEvent } from './store';

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
   * written, adds nothing, and gets that event back. An event recorded while serving a member or an API key
   * names them in `actor`, unless its data names one already.
   */
  record(trx: Db, accountId: string, type: EventType, data: Record<string, unknown>, idempotencyKey?: string): Promise<SignetEvent>;
}

/** The event log, with every consumer of its events named here; src/system.ts builds the one the system uses. */
export function createEventLog(consumers: EventConsumer[]): EventLog {
  async function record(trx: Db, accountId: string, type: EventType, data: Record<string, unknown>, idempotencyKey?: string): Promise<SignetEvent> {
    if (!trx.isTransaction) return unitOfWork(trx, (inner) => record(inner, accountId, type, data, idempotencyKey));
    const actor = currentActor();
    if (actor && !('actor' in data)) data = { ...data, actor };
    const inserted = await insertEvent(trx, { id: newId('event'), accountId, type, data, createdAt: new Date(), idempotencyKey: idempotencyKey ?? null });
    if (!inserted) {
      const row = await findEventByKey(trx, idempotencyKey);
      return { id: row.id, type, timestamp: row.created_at.toISOString(), data: row.data };
    }
    const event = { id: inserted.id, accountId, type, data: inserted.data, createdAt: inserted.created_at };
    for (const consumer of consumers) await consumer.recorded(trx, event);
    return { id: event.id, type, timestamp: event.createdAt.toISOString(), data: event.data };
  }
  return { record };
}
