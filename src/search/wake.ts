import { afterCommit } from '../db/unitOfWork';
import type { EventConsumer } from '../events/service';

/**
 * Tells this process's search indexer (activities/search.ts) that an event has committed, so that after a
 * quiet spell it looks at once rather than at its next idle poll. An indexer in another process is not
 * told: it finds the event at its next poll, a second later at most.
 */
export interface SearchWake {
  /** Calls `listener` once an event has committed, until the function returned is called. */
  onEvent(listener: () => void): () => void;
}

/** The wake, and the event consumer that rings it (src/system.ts gives it to the event log). */
export function createSearchWake(): SearchWake & EventConsumer {
  const listeners = new Set<() => void>();
  const ring = () => {
    for (const listener of [...listeners]) listener();
  };
  return {
    // Listeners are there only while an indexer is idle: a busy one adds nothing to each event.
    async recorded(trx) {
      if (listeners.size > 0) afterCommit(trx, ring);
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
