import { Context } from '@temporalio/activity';
import type { Db } from '../src/db';
import { vectorizeStoredTexts } from '../src/documents/service';
import type { Logger } from '../src/logger';
import type { PdfTextExtractor } from '../src/pdf/text';
import type { SearchBackend } from '../src/search/backend';
import { indexEvent, indexNewTexts, indexPendingEvents } from '../src/search/indexer';
import type { SearchWake } from '../src/search/wake';
import type { SearchActivities } from '../workflows/activities';

export interface SearchActivityDeps {
  db: Db;
  search: SearchBackend;
  /** The worker's pool that extracts the text of uploaded PDFs. */
  pdfText: PdfTextExtractor;
  logger: Logger;
  /** Events committed in this process, which end an idle indexer's wait early. */
  searchWake?: SearchWake;
  /** Whether the api in this process is taking a burst (never when it runs elsewhere): the text of uploads gives way to it. */
  apiBusy?: () => boolean;
  /** The waits of an idle indexer (tests shorten the first and lengthen the longest). */
  idle?: { firstMs: number; maxMs: number };
}

const BATCH = 500;
/**
 * How soon an indexer looks again after finding nothing (firstMs); each further look that finds nothing
 * waits twice as long, up to maxMs: an idle service polls a few times a second rather than ten, and the
 * first event after a quiet spell waits a second at most, unless it commits in this process (searchWake).
 */
const IDLE = { firstMs: 200, maxMs: 1_000 };
/** How often PostgreSQL search looks for texts stored without their words (by a worker on Elasticsearch). */
const VECTORIZE_POLL_MS = 1_000;

/**
 * Sleeps `ms`, or, when `wake` rings meanwhile, until `fastMs` have passed since it began (a wake never
 * makes a look sooner than that, so a burst of events is not a query each). Says whether it was woken.
 */
async function nap(context: Context, ms: number, fastMs: number, wake: SearchWake | undefined): Promise<boolean> {
  if (!wake || ms <= fastMs) {
    await context.sleep(ms);
    return false;
  }
  const began = Date.now();
  let stopListening = () => {};
  const woken = new Promise<true>((resolve) => (stopListening = wake.onEvent(() => resolve(true))));
  try {
    if (!(await Promise.race([context.sleep(ms).then(() => false), woken]))) return false;
  } finally {
    stopListening();
  }
  const left = fastMs - (Date.now() - began);
  if (left > 0) await context.sleep(left);
  return true;
}

// They re-read PostgreSQL and write what they read, versioned by the time of reading: safe to repeat.
// Without Elasticsearch the index is PostgreSQL itself: the work is the text of new PDFs, and the words of
// texts stored under Elasticsearch (events are followed by no cursor, as nothing reads them). While
// Elasticsearch is down they fail and Temporal retries them.
export function createSearchActivities({ db, search, pdfText, logger, searchWake, apiBusy, idle = IDLE }: SearchActivityDeps): SearchActivities {
  return {
    /** Brings the index in step with the resources of one event. */
    indexEvent: (eventId: string): Promise<void> => indexEvent(db, search, eventId),

    /**
     * The search indexer's step, for `runForMs`, as loops that each poll the database when idle and
     * heartbeat, idle or not: one extracts the text of new PDFs and indexes it (indexNewTexts); on
     * Elasticsearch another indexes the events past its cursor; on PostgreSQL another brings the words of
     * texts stored under Elasticsearch into search_vector (vectorizeStoredTexts, every second: a service
     * that ran with Elasticsearch before, or a worker still on it during a deploy). The first two look
     * again 200 ms after finding nothing, then 400 ms, and so on up to a second; an event committed in
     * this process (searchWake) brings them back to 200 ms at once. A PDF's text waits neither for an
     * index refresh of unrelated events nor they for a slow PDF. Polling here rather than in the workflow
     * keeps a Temporal round trip (and its timer) out of the time from a commit to the change being
     * searchable.
     */
    async indexEventsFor(runForMs: number): Promise<number> {
      const context = Context.current();
      const until = Date.now() + runForMs;
      let failed = false;
      let indexed = 0;
      const keepGoing = () => Date.now() < until && !context.cancellationSignal.aborted && !failed;
      /** Runs `step` until the time is up, pausing whenever it reports that it has caught up, longer while it stays idle. */
      const poll = async (step: () => Promise<boolean>, fastMs = idle.firstMs) => {
        let idleMs = fastMs;
        try {
          while (keepGoing()) {
            context.heartbeat(indexed);
            if (await step()) {
              idleMs = fastMs;
              continue;
            }
            const woken = await nap(context, idleMs, fastMs, searchWake);
            idleMs = woken ? fastMs : Math.min(idleMs * 2, Math.max(fastMs, idle.maxMs));
          }
        } catch (error) {
          failed = true; // the other loops stop too: Temporal retries the whole step
          throw error;
        }
      };
      const indexEvents = async () => {
        const taken = await indexPendingEvents(search, BATCH);
        indexed += taken;
        return taken === BATCH;
      };
      const indexTexts = async () => {
        const count = await indexNewTexts(db, search, pdfText, {
          keepGoing,
          apiBusy,
          onIndexed: (texts) => context.heartbeat((indexed += texts)),
        });
        return count > 0;
      };
      const vectorizeTexts = async () => {
        const count = await vectorizeStoredTexts(db, { batch: BATCH, keepGoing });
        if (count > 0) logger.info({ documents: count }, 'brought the words of texts stored under Elasticsearch into PostgreSQL search');
        return false; // it stops only once none is left, or the time is up
      };
      await Promise.all([
        poll(indexTexts),
        ...(search.events ? [poll(indexEvents)] : []),
        ...(search.kind === 'postgres' ? [poll(vectorizeTexts, VECTORIZE_POLL_MS)] : []),
      ]);
      return indexed;
    },
  };
}
