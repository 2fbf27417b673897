import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
// Up into the worker side on purpose, as src/signingRequests/workflow.ts does: the workflow by type only.
import type { bulkSendWorkflow } from '../../workflows/bulkSend';
import type { Config } from '../config';
import type { Db } from '../db';
import type { EventLog } from '../events/service';
import type { BulkSendDeps } from './service';
import { findOrphanedBulkSends, markBulkSendStarted, type BulkSendRecord } from './store';

/** Starts a job's workflow (id = the job's) and records that it did. Safe to repeat: a second start finds the first. */
export async function startBulkSend(db: Db, temporal: Client, taskQueue: string, job: BulkSendRecord) {
  await temporal.workflow
    .start<typeof bulkSendWorkflow>('bulkSendWorkflow', {
      workflowId: job.id,
      taskQueue,
      args: [{ bulkSendId: job.id }],
      staticSummary: `Bulk send · ${job.accountId} · ${job.rowCount} row${job.rowCount === 1 ? '' : 's'} of ${job.templateId}`,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    })
    .catch((error: unknown) => {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    });
  await markBulkSendStarted(db, job.id);
}

/** The sweeper's part: starts the workflows of jobs committed `olderThanMs` ago or more whose api died before it started them. */
export async function startOrphanedBulkSends(db: Db, temporal: Client, taskQueue: string, { olderThanMs, limit }: { olderThanMs: number; limit: number }) {
  const unstarted = await findOrphanedBulkSends(db, new Date(Date.now() - olderThanMs), limit);
  for (const job of unstarted) await startBulkSend(db, temporal, taskQueue, job);
  return unstarted.length;
}

/** What createBulkSend needs, from the api's own (the REST API and the console share it). */
export const bulkSendDeps = (deps: { db: Db; events: EventLog; config: Config; temporal: Client }): BulkSendDeps => ({
  db: deps.db,
  events: deps.events,
  rateLimitMultiplier: deps.config.RATE_LIMIT_MULTIPLIER,
  start: (job) => startBulkSend(deps.db, deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, job),
});
