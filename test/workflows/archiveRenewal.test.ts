import { expect } from 'chai';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { archiveRenewalWorkflow } from '../../workflows/archiveRenewal';
import type { ArchiveActivities } from '../../workflows/activities';
import { bundleWorkflows, startTimeSkippingServer } from '../support/temporal';

// One run of the archive renewal, as its schedule starts it, with time skipping: a renewal whose
// authority keeps failing is retried with backoff for some ten minutes, then left due for the next run,
// while the others are renewed, each once. (The run against the real seal: test/system/sealArchive.test.ts.)
function archiveOf(count: number, failing: Set<string>) {
  const due = Array.from({ length: count }, (_, index) => ({ requestId: `req_${index}`, documentId: `doc_${index}`, renewed: 0, attempts: 0 }));
  const activities: ArchiveActivities = {
    async findArchivesDue({ limit }) {
      return due.filter((one) => one.renewed === 0).slice(0, limit);
    },
    async renewArchive({ requestId }) {
      const one = due.find((candidate) => candidate.requestId === requestId)!;
      one.attempts++;
      if (failing.has(requestId)) throw ApplicationFailure.retryable('http://127.0.0.1:9/tsa: connect ECONNREFUSED', 'SealServiceError');
      one.renewed++;
      return true;
    },
  };
  return { due, activities };
}

describe('archiveRenewalWorkflow, with time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;

  before(async function () {
    env = await startTimeSkippingServer(this);
    bundle = await bundleWorkflows();
  });

  after(() => env?.teardown());

  it('renews every file due, in batches, each once; one its authority keeps refusing is retried, then left for the next run', async () => {
    const taskQueue = `archive-renewal-${Math.random().toString(36).slice(2)}`;
    const archive = archiveOf(120, new Set(['req_7']));
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: archive.activities });
    const startedAt = await env.currentTimeMs();
    const result = await worker.runUntil(env.client.workflow.execute(archiveRenewalWorkflow, { taskQueue, workflowId: `${taskQueue}-run`, args: [] }));
    expect(result).to.deep.equal({ renewed: 119, failed: 1 });
    expect(archive.due.filter((one) => one.requestId !== 'req_7').every((one) => one.renewed === 1 && one.attempts === 1)).to.equal(true);
    const failing = archive.due.find((one) => one.requestId === 'req_7')!;
    expect(failing).to.include({ renewed: 0, attempts: 8 });
    // 5 s doubling, at most 5 minutes apart: some ten minutes of the run's time, skipped.
    const elapsed = (await env.currentTimeMs()) - startedAt;
    expect(elapsed).to.be.at.least(9 * 60_000);
  });
});
