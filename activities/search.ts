import { Context } from '@temporalio/activity';
import type { Db } from '../src/db';
import type { PdfTextExtractor } from '../src/pdf/text';
import type { SearchBackend } from '../src/search/backend';
import { indexEvent, indexNewTexts, indexPendingEvents } from '../src/search/indexer';

export interface SearchActivityDeps {
  db: Db;
  search: SearchBackend;
  /** The worker's pool that extracts the text of uploaded PDFs. */
  pdfText: PdfTextExtractor;
}

const BATCH = 500;
const IDLE_POLL_MS = 200;

// They re-read PostgreSQL and write what they read, versioned by the time of reading: safe to repeat.
// Without Elasticsearch the index is PostgreSQL itself, and only the text of new PDFs is work (events
// are followed by no cursor, as nothing reads them). While Elasticsearch is down they fail and Temporal retries them.
export function createSearchActivities({ db, search, pdfText }: SearchActivityDeps) {
  return {
    /** Brings the index in step with the resources of one event. */
    indexEvent: (eventId: string): Promise<void> => indexEvent(db, search, eventId),

    /**
     * The search indexer's step, for `runForMs`, as two loops that each poll the database every 200 ms
     * when idle: one extracts the text of new PDFs and indexes it (indexNewTexts), the other
     * (Elasticsearch only) indexes the events past its cursor; both heartbeat, idle or not. A PDF's text
     * waits neither for an index refresh of unrelated events nor they for a slow PDF. Polling here rather than in the workflow keeps a Temporal round trip (and its
     * timer) out of the time from a commit to the change being searchable.
     */
    async indexEventsFor(runForMs: number): Promise<number> {
      const context = Context.current();
      const until = Date.now() + runForMs;
      let failed = false;
      let indexed = 0;
      /** Runs `step` until the time is up, pausing whenever it reports that it has caught up. */
      const poll = async (step: () => Promise<boolean>) => {
        try {
          while (Date.now() < until && !context.cancellationSignal.aborted && !failed) {
            context.heartbeat(indexed);
            if (!(await step())) await context.sleep(IDLE_POLL_MS);
          }
        } catch (error) {
          failed = true; // the other loop stops too: Temporal retries the whole step
          throw error;
        }
      };
      const indexEvents = async () => {
        const taken = await indexPendingEvents(search, BATCH);
        indexed += taken;
        return taken === BATCH;
      };
      const indexTexts = async () => {
        const keepGoing = () => Date.now() < until && !context.cancellationSignal.aborted && !failed;
        const count = await indexNewTexts(db, search, pdfText, { keepGoing, onIndexed: (texts) => context.heartbeat((indexed += texts)) });
        return count > 0;
      };
      await Promise.all([poll(indexTexts), ...(search.events ? [poll(indexEvents)] : [])]);
      return indexed;
    },
  };
}

export type SearchActivities = ReturnType<typeof createSearchActivities>;
