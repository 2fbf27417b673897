import type { Db } from '../db';
import { extractPendingTexts, forgetDocumentTexts } from '../documents/service';
import type { PdfTextExtractor } from '../pdf/text';
import type { ResourceRef, SearchBackend } from './backend';

type EventRow = { id: string; data: Record<string, unknown> | null };

/** The resources an event is about: its document, signing request and template, whichever it names. */
export function resourcesOf(events: EventRow[]): ResourceRef[] {
  return events.flatMap(({ data }) => [
    ...(typeof data?.documentId === 'string' ? [{ type: 'document' as const, id: data.documentId }] : []),
    ...(typeof data?.signingRequestId === 'string' ? [{ type: 'signing_request' as const, id: data.signingRequestId }] : []),
    ...(typeof data?.templateId === 'string' ? [{ type: 'template' as const, id: data.templateId }] : []),
  ]);
}

/** Re-reads the resources of one event from PostgreSQL into the index. Safe to repeat. */
export async function indexEvent(db: Db, search: SearchBackend, eventId: string) {
  const events: EventRow[] = await db('events').where({ id: eventId }).select('id', 'data');
  await search.index(resourcesOf(events));
}

/**
 * Takes the events past the index's cursor, indexes what they are about, then moves the cursor past
 * them. If Elasticsearch fails the cursor stays, and the next call tries again; a crash in between only
 * means they are indexed twice. (No transaction is held meanwhile: the embedded PGlite has one session
 * for everyone.) Returns how many events were taken.
 */
export async function indexPendingEvents(search: SearchBackend, limit: number): Promise<number> {
  if (!search.events) return 0;
  const events = await search.events.next(limit);
  if (events.length === 0) return 0;
  await search.index(resourcesOf(events));
  await search.events.advance(events[events.length - 1]);
  return events.length;
}

/** A batch of texts starts no extraction after this, so that a few slow PDFs cannot hold the activity for minutes. */
const TEXT_BATCH_MS = 15_000;

/**
 * Extracts the text of up to `limit` newly uploaded PDFs (extractPendingTexts) and indexes their
 * documents in one write. If the index cannot take them, their texts are forgotten, to be extracted and
 * indexed again on a later call, so the index never misses one. Returns how many documents got their text.
 */
export async function indexNewTexts(db: Db, search: SearchBackend, pdfText: PdfTextExtractor, limit: number): Promise<number> {
  const ids = await extractPendingTexts(db, pdfText, { limit, until: Date.now() + TEXT_BATCH_MS });
  if (ids.length === 0) return 0;
  try {
    await search.index(ids.map((id) => ({ type: 'document', id })));
  } catch (error) {
    await forgetDocumentTexts(db, ids);
    throw error;
  }
  return ids.length;
}
