import type { Client } from '@temporalio/client';

export const searchIndexerWorkflowId = (taskQueue: string) => `${taskQueue}-search-indexer`;

/**
 * Starts the search indexer of this task queue, replacing the one that runs: it keeps no state of its own
 * (the events table does), and the replacement runs the code of the worker just started, so a change to
 * the indexer's workflow never meets a history written by older code.
 */
export async function startSearchIndexer(client: Client, taskQueue: string) {
  await client.workflow.start('searchIndexerWorkflow', { workflowId: searchIndexerWorkflowId(taskQueue), taskQueue, workflowIdConflictPolicy: 'TERMINATE_EXISTING' });
}
