import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { bundleWorkflows } from '../support/temporal';

// Requests still running when a new version is deployed are replayed by its code: each history here
// was recorded with an earlier version of the workflow (its file says which) and must replay without
// a nondeterminism error. test/workflows/histories/ keeps them as binary protobuf (History).
const histories = path.join(__dirname, 'histories');
const historyOf = (file: string) => temporal.api.history.v1.History.decode(fs.readFileSync(path.join(histories, file)));

describe('signingRequestWorkflow replays the histories of earlier versions', function () {
  this.timeout(120_000);

  it('one signer, sealed with the local activity of before 2026-11-26 after one failed seal', async () => {
    await Worker.runReplayHistory({ workflowBundle: await bundleWorkflows() }, historyOf('sealedWithLocalActivity.bin'), 'sr_history_fixture');
  });

  // Recorded with the workflow of before recipients had kinds and steps (2026-11-26, before the envelopes
  // work): inputs without `recipients`, signers only, in signingOrder's steps; views by signal.
  for (const [file, what] of [
    ['sequentialBeforeRecipients.bin', 'two signers in sequence, the first viewed then signed, then the second: completed'],
    ['declinedBeforeRecipients.bin', 'two signers in parallel, one signed and the other declined'],
    ['cancelledBeforeRecipients.bin', 'two signers reminded, then cancelled'],
  ]) {
    it(`before recipients had kinds: ${what}`, async () => {
      await Worker.runReplayHistory({ workflowBundle: await bundleWorkflows() }, historyOf(file), file);
    });
  }
});

describe('sweeperWorkflow replays the histories of earlier versions', function () {
  this.timeout(120_000);

  // Recorded with the sweeper of before 2026-12-02, which a schedule started every minute to sweep once.
  it('one sweep, started by the schedule', async () => {
    await Worker.runReplayHistory({ workflowBundle: await bundleWorkflows() }, historyOf('sweptOnceBySchedule.bin'), 'signet-sweeper-2026-12-01T10:00:00Z');
  });
});
