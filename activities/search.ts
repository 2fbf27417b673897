import { Context } from '@temporalio/activity';
import type { Db } from '../src/db';
import { vectorizeStoredTexts } from '../src/documents/service';
import type { Logger } from '../src/logger';
import type { PdfTextExtractor } from '../src/pdf/text';
import type { SearchBackend } from '../src/search/backend';
import { indexEvent, indexNewTexts, indexPendingEvents } from '../src/search/indexer';

export interface SearchActivityDeps {
  db: Db;
  search: SearchBackend;
  /** The worker's pool that extracts the text of uploaded PDFs. */
  pdfText: PdfTextExtractor;
  logger: Logger;
}

const BATCH = 500;
const IDLE_POLL_MS = 200;
/** How often PostgreSQL search looks for texts stored without their words (by a worker on Elasticsearch). */
const VECTORIZE_POLL_MS = 1_000;

// They re-read PostgreSQL and write what they read, versioned by the time of reading: safe to repeat.
// Without Elasticsearch the index is PostgreSQL itself: the work is the text of new PDFs, and the words of
// texts stored under Elasticsearch (events are followed by no cursor, as nothing reads them). While
// Elasticsearch is down they fail and Temporal retries them.
export function createSearchActivities({ db, search, pdfText, logger }: SearchActivityDeps) {
  return {
    /** Brings the index in step with the resources of one event. */
    indexEvent: (eventId: string): Promise<void> => indexEvent(db, search, eventId),

    /**
     * The search indexer's step, for `runForMs`, as loops that each poll the database when idle and
     * heartbeat, idle or not: one extracts the text of new PDFs and indexes it (indexNewTexts, every
     * 200 ms); on Elasticsearch another indexes the events past its cursor (every 200 ms); on PostgreSQL
     * another brings the words of texts stored under Elasticsearch into search_vector (vectorizeStoredTexts,
     * every second: a service that ran with Elasticsearch before, or a worker still on it during a deploy).
     * A PDF's text waits neither for an index refresh of unrelated events nor they for a slow PDF. Polling
     * here rather than in the workflow keeps a Temporal round trip (and its timer) out of the time from a
     * commit to the change being searchable.
     */
    async indexEventsFor(runForMs: number): Promise<number> {
      const context = Context.current();
      const until = Date.now() + runForMs;
      let failed = false;
      let indexed = 0;
      const keepGoing = () => Date.now() < until && !context.cancellationSignal.aborted && !failed;
      /** Runs `step` until the time is up, pausing whenever it reports that it has caught up. */
      const poll = async (step: () => Promise<boolean>, idleMs = IDLE_POLL_MS) => {
        try {
          while (keepGoing()) {
            context.heartbeat(indexed);
            if (!(await step())) await context.sleep(idleMs);
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
        const count = await indexNewTexts(db, search, pdfText, { keepGoing, onIndexed: (texts) => context.heartbeat((indexed += texts)) });
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

export type SearchActivities = ReturnType<typeof createSearchActivities>;
