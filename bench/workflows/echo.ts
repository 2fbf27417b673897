// The baselines under a signer's Sign → 200 in `npm run bench`: a workflow whose update handler answers
// at once, so an update costs only its trip through the Temporal server and a worker; and handlers that
// first commit one PostgreSQL transaction, as sign's does, in a local or in a regular activity. Bundled
// and run by the bench on its own task queue; not part of the service's workflows/.
import { defineUpdate, proxyActivities, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { BaselineActivities } from '../baselineActivities';

export const echoUpdate = defineUpdate<string, [string]>('echo');
/** Answers once a local activity has committed: before the workflow task that accepts the update ends. */
export const transactUpdate = defineUpdate<string, [string]>('transact');
/** Answers once a regular activity has committed: scheduled when the update is accepted into the history. */
export const transactInActivityUpdate = defineUpdate<string, [string]>('transactInActivity');

const local = proxyLocalActivities<BaselineActivities>({ startToCloseTimeout: '1 minute' });
const regular = proxyActivities<BaselineActivities>({ startToCloseTimeout: '1 minute' });

/** Answers every update with its argument; ends after `lifetimeMs` (the bench terminates it sooner). */
export async function echoWorkflow(lifetimeMs: number): Promise<void> {
  setHandler(echoUpdate, (value) => value);
  setHandler(transactUpdate, async (value) => (await local.transact(), value));
  setHandler(transactInActivityUpdate, async (value) => (await regular.transact(), value));
  await sleep(lifetimeMs);
}
