import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, WithStartWorkflowOperation, type Client } from '@temporalio/client';
// Up into the worker side on purpose, as in the Temporal samples: workflow functions by type only (so a
// start is checked against the workflow itself), and the update client and worker share (workflows/definitions.ts).
import type { searchIndexerWorkflow } from '../../workflows/searchIndexer';
import type { sweeperWorkflow } from '../../workflows/sweeper';
import { sweepUpdate } from '../../workflows/definitions';

// The housekeeping workflows, one of each per task queue: their ids and starts. A signing request's
// workflow is its capability's (src/signingRequests/workflow.ts), a webhook's too (src/webhooks/workflow.ts).

export const sweeperWorkflowId = (taskQueue: string) => `${taskQueue}-sweeper`;
export const searchIndexerWorkflowId = (taskQueue: string) => `${taskQueue}-search-indexer`;
export const archiveRenewalScheduleId = (taskQueue: string) => `${taskQueue}-archive-renewal`;

/**
 * Starts the search indexer of this task queue, replacing the one that runs: it keeps no state of its own
 * (the events table does), and the replacement runs the code of the worker just started, so a change to
 * the indexer's workflow never meets a history written by older code.
 */
export async function startSearchIndexer(client: Client, taskQueue: string) {
  await client.workflow.start<typeof searchIndexerWorkflow>('searchIndexerWorkflow', {
    workflowId: searchIndexerWorkflowId(taskQueue),
    taskQueue,
    staticSummary: 'Housekeeping: indexes new events for search, as they come',
    workflowIdConflictPolicy: 'TERMINATE_EXISTING',
  });
}

const sweeperStart = (taskQueue: string) => ({
  workflowId: sweeperWorkflowId(taskQueue),
  taskQueue,
  staticSummary: 'Housekeeping: sweeps every minute for work a lost process left, and expired Idempotency-Keys',
});

/**
 * Starts the sweeper of this task queue, replacing the one that runs (as the search indexer): one
 * workflow that sweeps every minute, so that work committed to PostgreSQL by a process that died
 * before handing it to Temporal (an event's deliveries, a signing request's workflow) is still started.
 * Versions before 2026-12-02 ran it from a schedule of the same id, a workflow a minute: that schedule
 * is deleted here, so that an upgraded deployment does not run both.
 */
export async function startSweeper(client: Client, taskQueue: string) {
  await client.schedule
    .getHandle(sweeperWorkflowId(taskQueue))
    .delete()
    .catch((error) => {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    });
  await client.workflow.start<typeof sweeperWorkflow>('sweeperWorkflow', { ...sweeperStart(taskQueue), workflowIdConflictPolicy: 'TERMINATE_EXISTING' });
}

/** Sweeps now, starting the sweeper if none runs, and answers what the sweep did. */
export function sweepNow(client: Client, taskQueue: string) {
  return client.workflow.executeUpdateWithStart(sweepUpdate, {
    startWorkflowOperation: new WithStartWorkflowOperation<typeof sweeperWorkflow>('sweeperWorkflow', {
      ...sweeperStart(taskQueue),
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}

/**
 * The Temporal Schedule of the archive renewal (workflows/archiveRenewal.ts): once a day, one run at a
 * time (a run still going when the next is due is left to finish). Made once; a schedule already there
 * is kept as it is, so that an operator's pause or trigger in the Temporal UI stands.
 */
export async function scheduleArchiveRenewal(client: Client, taskQueue: string) {
  await client.schedule
    .create({
      scheduleId: archiveRenewalScheduleId(taskQueue),
      spec: { intervals: [{ every: '1 day' }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'archiveRenewalWorkflow',
        workflowId: `${taskQueue}-archive-renewal-run`,
        taskQueue,
        args: [],
        staticSummary: 'Housekeeping: renews the archive timestamps of sealed PDFs before their certificates end',
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
    })
    .catch((error) => {
      if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    });
}
