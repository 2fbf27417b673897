import type { Db } from '../src/db';
import type { SearchBackend } from '../src/search/backend';
import { indexEvent, indexPendingEvents } from '../src/search/indexer';

export interface SearchActivityDeps {
  db: Db;
  search: SearchBackend;
}

// Both re-read PostgreSQL and write what they read, versioned by the time of reading: safe to repeat,
// and a no-op without Elasticsearch. While Elasticsearch is down they fail and Temporal retries them.
export function createSearchActivities({ db, search }: SearchActivityDeps) {
  return {
    /** Brings the index in step with the resources of one event. */
    indexEvent: (eventId: string): Promise<void> => indexEvent(db, search, eventId),

    /** The search indexer's step: the oldest events not yet indexed, at most `limit`; returns how many. */
    indexEventBatch: (limit: number): Promise<number> => indexPendingEvents(db, search, limit),
  };
}

export type SearchActivities = ReturnType<typeof createSearchActivities>;
