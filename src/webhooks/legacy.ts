import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Db } from '../db';
import { queueDeliveries } from './queue';
import { findWebhooksPendingEvent, hasDeliveriesOfEvent, makeDeliveriesOfEventDue, type QueuedWebhook } from './store';

// Versions before per-endpoint queues ran one workflow per event (deliverEventWorkflow, id
// deliver-<event id>), which kept its deliveries' retry schedule in Temporal timers. On upgrade, the
// sweeper hands each one's deliveries to their webhooks' queues and ends it. Remove once no
// installation can still have one running.

const LEGACY_WORKFLOW_TYPE = 'deliverEventWorkflow';
const LEGACY_ID_PREFIX = 'deliver-';

/** The visibility query of the legacy workflows still running on `taskQueue` (a name of word characters, `.`, `:` and `-`). */
export const runningLegacyWorkflows = (taskQueue: string) =>
  `WorkflowType = '${LEGACY_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue}'`;

/**
 * Takes over up to `limit` running legacy delivery workflows of `taskQueue`: queues the deliveries an
 * event's workflow had not yet written, makes a delivery whose attempt was in flight due now, then
 * terminates the workflow. Returns the webhooks whose queues got work. Safe to repeat: the deliveries
 * are committed before the workflow ends, and queueing is unique per (webhook, event).
 */
export async function adoptLegacyDeliveries(db: Db, client: Client, taskQueue: string, limit: number): Promise<QueuedWebhook[]> {
  if (!/^[\w.:-]+$/.test(taskQueue)) return []; // not quotable in a visibility query; ours always are
  const query = runningLegacyWorkflows(taskQueue);
  const woken = new Map<string, QueuedWebhook>();
  let taken = 0;
  for await (const execution of client.workflow.list({ query, pageSize: limit })) {
    if (taken++ >= limit) break;
    if (!execution.workflowId.startsWith(LEGACY_ID_PREFIX)) continue;
    const eventId = execution.workflowId.slice(LEGACY_ID_PREFIX.length);
    const webhooks = await db.transaction(async (trx) => {
      // The workflow wrote all of an event's deliveries in one statement, or none yet.
      if (!(await hasDeliveriesOfEvent(trx, eventId))) await queueDeliveries(trx, [eventId]);
      await makeDeliveriesOfEventDue(trx, eventId);
      return findWebhooksPendingEvent(trx, eventId);
    });
    for (const webhook of webhooks) woken.set(webhook.webhookId, webhook);
    await client.workflow
      .getHandle(execution.workflowId, execution.runId)
      .terminate("taken over by its webhooks' delivery queues")
      .catch((error) => {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      });
  }
  return [...woken.values()];
}
