import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { SearchActivities } from './activities';

// Unlimited retries with backoff up to a minute: an Elasticsearch outage only delays indexing, and the
// events wait in PostgreSQL until it returns.
const search = proxyActivities<SearchActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** How long each activity call keeps indexing before handing back. */
const STEP_MS = 60_000;
/** Steps before starting over with a fresh history (a few hours). */
const STEPS_PER_RUN = 200;

/** Runs for good, one per task queue: indexes the events not yet indexed, as they come. */
export async function searchIndexerWorkflow(): Promise<void> {
  for (let step = 0; step < STEPS_PER_RUN; step++) await search.indexEventsFor(STEP_MS);
  await continueAsNew<typeof searchIndexerWorkflow>();
}
