import { expect } from 'chai';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { archiveRenewalWorkflow } from '../../workflows/archiveRenewal';
import type { ArchiveActivities } from '../../workflows/activities';
import { sealServiceUnavailable } from '../../src/domain/signingRequests';
import { bundleWorkflows, startTimeSkippingServer } from '../support/temporal';

// One run of the archive renewal, as its schedule starts it, with time skipping: a renewal that keeps
// failing is retried with backoff for a minute; then a file that cannot be renewed is skipped, and an
// authority that does not answer ends the run, leaving what is left due for the next one. (The run
// against the real seal: test/system/sealArchive.test.ts.)
function archiveOf(count: number, failing: Map<string, ApplicationFailure>) {
  const due = Array.from({ length: count }, (_, index) => ({ requestId: `req_${index}`, documentId: `doc_${index}`, renewed: 0, attempts: 0 }));
  const activities: ArchiveActivities = {
    async findArchivesDue({ limit }) {
      return due.filter((one) => one.renewed === 0).slice(0, limit);
    },
    async renewArchive({ requestId }) {
      const one = due.find((candidate) => candidate.requestId === requestId)!;
      one.attempts++;
      if (failing.has(requestId)) throw failing.get(requestId)!;
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

  const run = async (archive: ReturnType<typeof archiveOf>) => {
    const taskQueue = `archive-renewal-${Math.random().toString(36).slice(2)}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: archive.activities });
    const startedAt = await env.currentTimeMs();
    const result = await worker.runUntil(env.client.workflow.execute(archiveRenewalWorkflow, { taskQueue, workflowId: `${taskQueue}-run`, args: [] }));
    return { result, elapsed: (await env.currentTimeMs()) - startedAt };
  };

  it('renews every file due, in batches, each once; one that cannot be renewed is retried for a minute, then skipped', async () => {
    const archive = archiveOf(120, new Map([['req_7', ApplicationFailure.retryable('the sealed file cannot be read', 'Error')]]));
    const { result, elapsed } = await run(archive);
    expect(result).to.deep.equal({ renewed: 119, failed: 1 });
    expect(archive.due.filter((one) => one.requestId !== 'req_7').every((one) => one.renewed === 1 && one.attempts === 1)).to.equal(true);
    expect(archive.due.find((one) => one.requestId === 'req_7')).to.include({ renewed: 0, attempts: 4 });
    // 5 s doubling: 5 + 10 + 20 s of the run's time, skipped.
    expect(elapsed).to.be.at.least(35_000);
  });

  it('an authority that does not answer ends the run: what is left stays due for the next', async () => {
    const down = ApplicationFailure.retryable('http://127.0.0.1:9/tsa: connect ECONNREFUSED', sealServiceUnavailable, {
      service: 'timestamp authority',
      url: null,
    });
    const archive = archiveOf(10, new Map([['req_3', down]]));
    const { result } = await run(archive);
    expect(result).to.deep.equal({ renewed: 3, failed: 1 });
    expect(archive.due.map((one) => one.renewed)).to.deep.equal([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
  });
});
