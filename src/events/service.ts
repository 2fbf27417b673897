import type { Db } from '../db';
import { newId } from '../ids';

/** The event types Signet emits: the six of interface spec §6 and the extra ones below them. */
export const eventTypes = [
  'document.created',
  'document.signed',
  'signing_request.created',
  'signing_request.completed',
  'signer.signed',
  'signer.declined',
  'signer.notified',
  'signer.viewed',
  'signing_request.cancelled',
  'signing_request.declined',
  'signing_request.expired',
  'document.updated',
  'document.deleted',
  'template.created',
  'template.updated',
  'template.deleted',
] as const;
export type EventType = (typeof eventTypes)[number];

export interface SignetEvent {
  id: string;
  type: EventType;
  timestamp: string;
  data: Record<string, unknown>;
}

/** What hands committed events to webhook delivery (src/events/dispatch.ts). */
export interface AfterCommitDispatcher {
  afterCommit(trx: Db, eventIds: string[]): void;
}

// One dispatcher per database (keyed by its knex config, which its transactions share).
const dispatchers = new WeakMap<object, AfterCommitDispatcher>();

/** From now on, every event recorded through `db` or its transactions is dispatched once its transaction commits. */
export function dispatchEventsOf(db: Db, dispatcher: AfterCommitDispatcher) {
  dispatchers.set(db.client.config, dispatcher);
}

/**
 * Records an event and schedules its dispatch for when the transaction commits. Always call it with
 * the transaction that makes the change it reports (the transactional outbox): the change and its
 * event commit together or not at all. Without a dispatcher for the database, the sweeper sends it.
 */
export async function recordEvent(
  trx: Db,
  accountId: string,
  type: EventType,
  data: Record<string, unknown>,
  idempotencyKey?: string,
): Promise<SignetEvent> {
  const createdAt = new Date();
  // An activity passes the key of its step: a retry finds the event already written and adds none,
  // and gets that event back, so its delivery can be started (again: a duplicate start is a no-op).
  const [inserted] = await trx('events')
    .insert({ id: newId('event'), account_id: accountId, type, data: JSON.stringify(data), created_at: createdAt, idempotency_key: idempotencyKey ?? null })
    .onConflict('idempotency_key')
    .ignore()
    .returning(['id', 'created_at', 'data']);
  const row = inserted ?? (await trx('events').where({ idempotency_key: idempotencyKey }).first('id', 'created_at', 'data'));
  dispatchers.get(trx.client.config)?.afterCommit(trx, [row.id]);
  return { id: row.id, type, timestamp: row.created_at.toISOString(), data: row.data };
}
