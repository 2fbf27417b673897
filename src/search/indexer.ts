import type { Db } from '../db';
import type { ResourceRef, SearchBackend } from './backend';

type EventRow = { id: string; data: Record<string, unknown> | null };

/** The resources an event is about: its document and its signing request, whichever it names. */
export function resourcesOf(events: EventRow[]): ResourceRef[] {
  return events.flatMap(({ data }) => [
    ...(typeof data?.documentId === 'string' ? [{ type: 'document' as const, id: data.documentId }] : []),
    ...(typeof data?.signingRequestId === 'string' ? [{ type: 'signing_request' as const, id: data.signingRequestId }] : []),
  ]);
}

/** Re-reads the resources of one event from PostgreSQL into the index. Safe to repeat. */
export async function indexEvent(db: Db, search: SearchBackend, eventId: string) {
  const events: EventRow[] = await db('events').where({ id: eventId }).select('id', 'data');
  await search.index(resourcesOf(events));
}

/**
 * Takes the oldest events the index has not seen, indexes what they are about, then marks them. If
 * Elasticsearch fails nothing is marked, and the next call tries again; a crash in between only means they
 * are indexed twice. (No transaction is held meanwhile: the embedded PGlite has one session for everyone.)
 * Returns how many events were taken.
 */
export async function indexPendingEvents(db: Db, search: SearchBackend, limit: number): Promise<number> {
  const events: EventRow[] = await db('events').whereNull('indexed_at').orderBy(['created_at', 'id']).limit(limit).select('id', 'data');
  if (events.length === 0) return 0;
  await search.index(resourcesOf(events));
  await db('events').whereIn('id', events.map((event) => event.id)).whereNull('indexed_at').update({ indexed_at: db.fn.now() });
  return events.length;
}
