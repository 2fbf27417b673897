import { Context } from '@temporalio/activity';
import type { Db } from '../src/db';
import type { SearchBackend } from '../src/search/backend';
import { indexEvent, indexPendingEvents } from '../src/search/indexer';

export interface SearchActivityDeps {
  db: Db;
  search: SearchBackend;
}

const BATCH = 500;
const IDLE_POLL_MS = 200;

// Both re-read PostgreSQL and write what they read, versioned by the time of reading: safe to repeat,
// and a no-op without Elasticsearch. While Elasticsearch is down they fail and Temporal retries them.
export function createSearchActivities({ db, search }: SearchActivityDeps) {
  return {
    /** Brings the index in step with the resources of one event. */
    indexEvent: (eventId: string): Promise<void> => indexEvent(db, search, eventId),

    /**
     * The search indexer's step: for `runForMs`, indexes the events not yet indexed as they come, polling
     * the database every 200 ms when there are none. Polling here rather than in the workflow keeps a
     * Temporal round trip (and its timer) out of the time from a commit to the change being searchable.
     */
    async indexEventsFor(runForMs: number): Promise<number> {
      const context = Context.current();
      const until = Date.now() + runForMs;
      let indexed = 0;
      while (Date.now() < until && !context.cancellationSignal.aborted) {
        const taken = await indexPendingEvents(db, search, BATCH);
        indexed += taken;
        context.heartbeat(indexed);
        if (taken < BATCH) await context.sleep(IDLE_POLL_MS);
      }
      return indexed;
    },
  };
}

export type SearchActivities = ReturnType<typeof createSearchActivities>;
