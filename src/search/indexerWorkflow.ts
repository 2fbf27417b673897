import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';

export const searchIndexerWorkflowId = (taskQueue: string) => `${taskQueue}-search-indexer`;

/** Starts the search indexer of this task queue unless it runs already (every worker start makes sure). */
export async function ensureSearchIndexer(client: Client, taskQueue: string) {
  try {
    await client.workflow.start('searchIndexerWorkflow', { workflowId: searchIndexerWorkflowId(taskQueue), taskQueue });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
