import type { Client } from '@temporalio/client';
// Up into the worker side on purpose, as in the Temporal samples: the workflow by type only (so the start's
// arguments are checked against it), and the signal and search attributes client and worker share.
import type { webhookWorkflow } from '../../workflows/webhook';
import { searchAttributes, wakeSignal, webhookWorkflowId } from '../../workflows/definitions';
import type { QueuedWebhook } from './store';

/**
 * Tells a webhook's workflow that deliveries are due, starting it when none runs (signal-with-start):
 * one workflow per endpoint, however many events. A wake with nothing new is harmless.
 */
export async function wakeWebhookWorkflow(client: Client, taskQueue: string, webhook: QueuedWebhook, retryScale: number) {
  await client.workflow.signalWithStart<typeof webhookWorkflow, []>('webhookWorkflow', {
    workflowId: webhookWorkflowId(webhook.webhookId),
    taskQueue,
    args: [{ webhookId: webhook.webhookId, retryScale }],
    signal: wakeSignal,
    signalArgs: [],
    typedSearchAttributes: [
      { key: searchAttributes.accountId, value: webhook.accountId },
      { key: searchAttributes.webhookId, value: webhook.webhookId },
      { key: searchAttributes.webhookHealth, value: 'healthy' },
    ],
  });
}
