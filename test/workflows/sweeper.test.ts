import { expect } from 'chai';
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { SweeperActivities } from '../../workflows/activities';
import { sweepUpdate } from '../../workflows/definitions';
import { SWEEP_EVERY_MS, SWEEPS_PER_RUN, sweeperWorkflow } from '../../workflows/sweeper';
import { eventually } from '../support/signing';
import { bundleWorkflows, startDevServer, startTimeSkippingServer } from '../support/temporal';

/** Activities that count the sweeps (one call of each per sweep) and find one of each kind of work. */
function countingActivities() {
  const sweeps = { started: 0 };
  let failNext = false;
  const one = async () => 1;
  const activities: Record<keyof SweeperActivities, () => Promise<number>> = {
    adoptLegacyDeliveries: async () => {
      sweeps.started++;
      if (!failNext) return 1;
      failNext = false;
      throw ApplicationFailure.nonRetryable('the database is down');
    },
    dispatchStaleEvents: one,
    wakeStalledWebhooks: one,
    startOrphanedSigningRequests: one,
    startOrphanedBulkSends: one,
    tellSendersOfLocks: one,
    deleteExpiredIdempotencyKeys: one,
  };
  return { sweeps, activities, failNextSweep: () => (failNext = true) };
}

const everyKindOnce = { legacy: 1, events: 1, webhooks: 1, signingRequests: 1, bulkSends: 1, verificationLocks: 1, idempotencyKeys: 1 };

describe('sweeperWorkflow, asked to sweep', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;

  before(async function () {
    env = await startDevServer(this);
    bundle = await bundleWorkflows();
  });

  after(() => env?.teardown());

  it('sweeps when it starts and whenever asked, in one run; a failed sweep fails its update, not the sweeper', async () => {
    const taskQueue = `sweeper-test-${Math.random().toString(36).slice(2)}`;
    const counting = countingActivities();
    counting.failNextSweep(); // the first, at start: logged, and the sweeper runs on
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: counting.activities });
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(sweeperWorkflow, { taskQueue, workflowId: `${taskQueue}-sweeper` });
      await eventually(async () => expect(counting.sweeps.started).to.equal(1));
      expect(await handle.executeUpdate(sweepUpdate)).to.deep.equal(everyKindOnce);
      counting.failNextSweep();
      const failed = await handle.executeUpdate(sweepUpdate).catch((error) => error);
      expect(failed).to.be.instanceOf(WorkflowUpdateFailedError);
      expect(await handle.executeUpdate(sweepUpdate)).to.deep.equal(everyKindOnce);
      expect(counting.sweeps.started).to.equal(4);
      const { status, runId } = await handle.describe();
      expect({ status: status.name, runId }).to.deep.equal({ status: 'RUNNING', runId: handle.firstExecutionRunId });
      await handle.terminate('test over');
    });
  });
});

describe('sweeperWorkflow over time, with time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;

  before(async function () {
    env = await startTimeSkippingServer(this);
    bundle = await bundleWorkflows();
  });

  after(() => env?.teardown());

  it(`sweeps every minute, and starts over with a fresh history after ${SWEEPS_PER_RUN} sweeps`, async () => {
    const taskQueue = `sweeper-time-skipping-${Math.random().toString(36).slice(2)}`;
    const counting = countingActivities();
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: counting.activities });
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(sweeperWorkflow, { taskQueue, workflowId: `${taskQueue}-sweeper` });
      await env.sleep(10 * SWEEP_EVERY_MS + SWEEP_EVERY_MS / 2);
      expect(counting.sweeps.started).to.equal(11);
      expect((await handle.describe()).runId).to.equal(handle.firstExecutionRunId);
      await env.sleep((SWEEPS_PER_RUN - 10) * SWEEP_EVERY_MS);
      // The new run's first sweep is due at the very minute the old run ends, so env.sleep may return
      // before the worker has run it; time does not skip while we poll.
      await eventually(async () => expect(counting.sweeps.started).to.equal(SWEEPS_PER_RUN + 1));
      const latest = await handle.describe();
      expect(latest.runId).not.to.equal(handle.firstExecutionRunId);
      expect(latest.status.name).to.equal('RUNNING');
      const first = await env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).describe();
      expect(first.status.name).to.equal('CONTINUED_AS_NEW');
      expect(first.historyLength).to.be.below(6_000);
      await handle.terminate('test over');
    });
  });
});
