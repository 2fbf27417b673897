import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
// Up into the worker side on purpose, as src/signingRequests/workflow.ts does: the workflow by type only.
import type { bulkSendWorkflow } from '../../workflows/bulkSend';
import type { BulkSendRecord } from './store';

/** Starts a job's workflow (id = the job's). Safe to repeat: a second start finds the first. */
export async function startBulkSend(temporal: Client, taskQueue: string, job: BulkSendRecord) {
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
}
