import type { Db } from '../db';
import { readDocumentText } from '../documents/service';
import { documentsAwaitingText, storeDocumentText } from '../documents/store';
import type { PdfTextExtractor } from '../pdf/text';
import type { ResourceRef, SearchBackend } from './backend';

type EventRow = { id: string; data: Record<string, unknown> | null };

/**
 * The resources an event is about: its document, signing request and template, whichever it names. An
 * event of a document alone (made, renamed, uploaded, deleted) may change the words of the requests that
 * hold it.
 */
export function resourcesOf(events: EventRow[]): ResourceRef[] {
  return events.flatMap(({ data }) => [
    ...(typeof data?.documentId === 'string'
      ? [{ type: 'document' as const, id: data.documentId, ...(data.signingRequestId === undefined ? { holders: true } : {}) }]
      : []),
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
 *
 * The write does not wait for the refresh that makes it searchable: the index refreshes every second
 * whoever waits, and a call that waited took at most one batch a refresh. Creates at 1,100/s left the
 * index 5,000 events behind after 8 s, and further behind every second they went on (docs/benchmarks.md).
 */
export async function indexPendingEvents(search: SearchBackend, limit: number): Promise<number> {
  if (!search.events) return 0;
  const events = await search.events.next(limit);
  if (events.length === 0) return 0;
  await search.index(resourcesOf(events), { searchable: false });
  await search.events.advance(events[events.length - 1]);
  return events.length;
}

/** Documents claimed at a time for extraction: a few seconds of work for the extractor's processes. */
const CLAIM = 64;
/** Texts stored by an earlier indexer and not indexed, taken up at a time. */
const RESUME = 500;
/**
 * Texts in one index write at most: a few MB for Elasticsearch, answered well within its client's timeout
 * even on a busy machine. (Writes of every text stored so far grew past it once extraction got fast.)
 */
const WRITE = 100;
/** Texts in index writes in flight at most (each text some 60 KB, loaded from PostgreSQL for the write). */
const TEXTS_IN_FLIGHT = 2 * WRITE;
/** A new index write starts at most this often while others are in flight. */
const WRITE_SPACING_MS = 100;
/** How often the extraction looks for new uploads while the index is being written. */
const LOOK_AGAIN_MS = 100;
/**
 * While the api of this process takes a burst (src/api/server.ts, busy()), the text of uploads (three
 * times an upload's CPU, and in the background) gives way, up to GIVE_WAY_MS before each PDF in each of
 * the extraction's loops, and catches up once the burst is over: beside its own text, a burst of uploads
 * ran at half its rate (docs/benchmarks.md).
 */
const GIVE_WAY_MS = 1_000;
const GIVE_WAY_STEP_MS = 20;

/**
 * Documents claimed for their text and not yet indexed with it (migration 20261126121900). Noted before
 * their text is stored, struck off once the index has it: whatever happens in between, a noted document
 * whose text is stored is indexed by the next call.
 */
const TO_INDEX = 'document_texts_to_index';

const noteToIndex = (db: Db, ids: string[]) =>
  ids.length > 0
    ? db(TO_INDEX)
        .insert(ids.map((id) => ({ document_id: id })))
        .onConflict('document_id')
        .ignore()
    : undefined;
const strikeOffIndexed = (db: Db, ids: string[]) => db(TO_INDEX).whereIn('document_id', ids).del();

/** Documents whose text an earlier call stored and did not index (its index write failed, or its worker was killed). */
const storedNotIndexed = (db: Db): Promise<string[]> =>
  db(TO_INDEX).join('documents', 'documents.id', `${TO_INDEX}.document_id`).whereNotNull('documents.body_text').limit(RESUME).pluck('documents.id');

/**
 * Extracts the text of newly uploaded PDFs and indexes their documents, until none is left or `keepGoing`
 * says stop. Every process of the extractor stays busy, its next document read and waiting while it is
 * busy with one, while the texts already stored go to the index in bulk, a write every WRITE_SPACING_MS
 * at most: extraction never waits for an index write (an Elasticsearch write is answered once
 * searchable, up to its 1 s refresh), and the writes grow with the rate, up to WRITE texts each. If the
 * index cannot take them, the call fails and the texts stored and not yet indexed stay noted (TO_INDEX),
 * so the index never misses one: a later call indexes them first, as it does those of a worker killed
 * in between. Returns how many documents got their text indexed.
 */
export async function indexNewTexts(
  db: Db,
  search: SearchBackend,
  pdfText: PdfTextExtractor,
  { keepGoing, onIndexed, apiBusy = () => false }: { keepGoing: () => boolean; onIndexed?: (count: number) => void; apiBusy?: () => boolean },
): Promise<number> {
  const extracting = new Set<string>();
  let claimed: string[] = [];
  let claiming: Promise<void> | undefined;
  let stop = false;
  const stored: string[] = await storedNotIndexed(db); // extracted and stored, not yet indexed
  let wakeWriter = () => {};

  const claimMore = () =>
    (claiming ??= documentsAwaitingText(db, CLAIM, [...extracting])
      .then(async (ids) => {
        await noteToIndex(db, ids);
        claimed = ids;
      })
      .finally(() => (claiming = undefined)));
  // A text is stored (PostgreSQL computes its words for search meanwhile, when it is the backend) while
  // its process reads the next PDF: the extractor never waits for the database, and at most one store
  // per process is pending.
  const storing = new Set<Promise<void>>();
  const inVector = search.kind === 'postgres';
  const store = (id: string, text: string) => {
    const storeOne: Promise<void> = storeDocumentText(db, id, text, { inVector }).then(
      () => {
        storing.delete(storeOne);
        extracting.delete(id); // not claimed again until its text is stored
        stored.push(id);
        wakeWriter();
      },
      (error) => {
        stop = true; // the processes finish the document they have, and the writer indexes what is stored
        throw error; // kept in `storing`: the extraction settles with this failure
      },
    );
    storeOne.catch(() => undefined); // reported once the extraction has settled, not as unhandled
    storing.add(storeOne);
  };
  // Index writes in flight. An Elasticsearch write is answered at the refresh after it (up to 1 s): texts
  // stored meanwhile go out in writes of their own, every WRITE_SPACING_MS, answered at the same refresh,
  // rather than wait for it and then for a refresh of their own. With two writes at once, both began just
  // after a refresh and every text waited for two: at 38 uploads/s, p50 3.6 s from a 201 to the index.
  const writes = new Set<Promise<void>>();
  let textsInFlight = 0;
  let lastWrite = 0;
  const extractNext = async () => {
    while (!stop && keepGoing()) {
      if (claimed.length === 0) await claimMore();
      const id = claimed.shift();
      if (id === undefined) {
        // Nothing waits. While the index is written (an Elasticsearch write waits up to its 1 s refresh),
        // look again now and then rather than leave the processes idle until the call ends: at a steady
        // upload rate each call's last write left them idle up to a second, and the backlog grew.
        if (writes.size === 0 && stored.length === 0 && storing.size === 0) return;
        await Promise.race([...writes, new Promise((resolve) => setTimeout(resolve, LOOK_AGAIN_MS))]);
        continue;
      }
      extracting.add(id);
      for (const until = performance.now() + GIVE_WAY_MS; apiBusy() && performance.now() < until && keepGoing();) {
        await new Promise((resolve) => setTimeout(resolve, GIVE_WAY_STEP_MS));
      }
      let text: string;
      try {
        text = await readDocumentText(db, pdfText, id);
        while (storing.size >= pdfText.processes) await Promise.race(storing);
      } catch (error) {
        stop = true;
        extracting.delete(id);
        throw error;
      }
      store(id, text);
    }
  };
  // Two loops a process: while a process extracts one PDF, the next is read from the database and waits
  // in its queue, so that a process is never idle for a round trip (at 76 uploads/s, found-by-text p99 went
  // from 5.5 s with a growing backlog to 3.8 s with a flat one).
  const extraction = Promise.allSettled(Array.from({ length: pdfText.processes * 2 }, extractNext)).then(async (outcomes) => [
    ...outcomes,
    ...(await Promise.allSettled([...storing])),
  ]);
  let extracted = false;
  void extraction.then(() => {
    extracted = true;
    wakeWriter();
  });

  let indexed = 0;
  let failed: { error: unknown } | undefined;
  try {
    for (;;) {
      if (failed) throw failed.error;
      if (stored.length === 0 || textsInFlight >= TEXTS_IN_FLIGHT) {
        if (stored.length === 0 && extracted && writes.size === 0) break;
        await Promise.race([new Promise<void>((resolve) => (wakeWriter = resolve)), ...writes]);
        continue;
      }
      const wait = lastWrite + WRITE_SPACING_MS - performance.now();
      if (writes.size > 0 && wait > 0) {
        await Promise.race([new Promise((resolve) => setTimeout(resolve, wait)), ...writes]);
        continue;
      }
      const ids = stored.splice(0, Math.min(WRITE, TEXTS_IN_FLIGHT - textsInFlight));
      textsInFlight += ids.length;
      lastWrite = performance.now();
      const write: Promise<void> = (async () => {
        await search.index(ids.map((id) => ({ type: 'document', id, holders: true })));
        await strikeOffIndexed(db, ids);
        indexed += ids.length;
        onIndexed?.(ids.length);
      })()
        .catch((error) => void (failed ??= { error }))
        .finally(() => {
          writes.delete(write);
          textsInFlight -= ids.length;
        });
      writes.add(write);
    }
  } catch (error) {
    stop = true; // the processes finish the document they have; its text stays noted, for the next call
    await Promise.all([extraction, ...writes]);
    throw error;
  }
  const failure = (await extraction).find((outcome) => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  return indexed;
}
