// The baseline under a signer's Sign → 200 in `npm run bench`: a workflow whose update handler answers
// at once, so an update costs only its trip through the Temporal server and a worker. Bundled and run
// by the bench on its own task queue; not part of the service's workflows/.
import { defineUpdate, setHandler, sleep } from '@temporalio/workflow';

export const echoUpdate = defineUpdate<string, [string]>('echo');

/** Answers every echo update with its argument; ends after `lifetimeMs` (the bench terminates it sooner). */
export async function echoWorkflow(lifetimeMs: number): Promise<void> {
  setHandler(echoUpdate, (value) => value);
  await sleep(lifetimeMs);
}
