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
] as const;
export type EventType = (typeof eventTypes)[number];

export interface SignetEvent {
  id: string;
  type: EventType;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * Records an event. Always call it with the transaction that makes the change it reports
 * (the transactional outbox): the change and its event commit together or not at all.
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
  return { id: row.id, type, timestamp: row.created_at.toISOString(), data: row.data };
}
