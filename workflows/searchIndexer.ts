import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { SearchActivities } from '../activities/search';

// Unlimited retries with backoff up to a minute: an Elasticsearch outage only delays indexing, and the
// events wait in PostgreSQL until it returns.
const search = proxyActivities<SearchActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const BATCH = 500;
const IDLE_WAIT = '400 milliseconds';
/** Steps before starting over with a fresh history (each step adds about ten events to it). */
const STEPS_PER_RUN = 300;

/** Runs for good, one per task queue: takes the events not yet indexed, a batch at a time, as they come. */
export async function searchIndexerWorkflow(): Promise<void> {
  for (let step = 0; step < STEPS_PER_RUN; step++) {
    const taken = await search.indexEventBatch(BATCH);
    if (taken < BATCH) await sleep(IDLE_WAIT);
  }
  await continueAsNew<typeof searchIndexerWorkflow>();
}
