import { ScheduleNotFoundError, WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
// Up into the worker side on purpose, as in the Temporal samples: workflow functions by type only (so a
// start's arguments are checked against the workflow itself), and the updates, signals and queries that
// client and worker share (workflows/definitions.ts).
import type { searchIndexerWorkflow } from '../../workflows/searchIndexer';
import type { signingRequestWorkflow } from '../../workflows/signingRequest';
import type { sweeperWorkflow } from '../../workflows/sweeper';
import type { webhookWorkflow } from '../../workflows/webhook';
import {
  approveUpdate,
  cancelUpdate,
  declineUpdate,
  progressQuery,
  remindUpdate,
  searchAttributes,
  signUpdate,
  sweepUpdate,
  viewDoneUpdate,
  viewedSignal,
  wakeSignal,
  webhookWorkflowId,
} from '../../workflows/definitions';
import {
  recipientTypes,
  routedRecipients,
  type ActInput,
  type ClientInfo,
  type DeclineInput,
  type SigningRequestInput,
  type SignInput,
} from '../domain/signingRequests';

// Every conversation with Temporal goes through here: workflow ids, typed starts, updates, queries and
// signals. Nothing else starts a workflow or names one by string.

export const sweeperWorkflowId = (taskQueue: string) => `${taskQueue}-sweeper`;
export const searchIndexerWorkflowId = (taskQueue: string) => `${taskQueue}-search-indexer`;

const ignoreAlreadyStarted = (error: unknown) => {
  if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
};

/** The workflow of one signing request (workflow id = request id). A second start finds the first. */
export async function startSigningRequestWorkflow(
  client: Client,
  taskQueue: string,
  input: SigningRequestInput,
  labels: { accountId: string; documentId: string; title: string; documentCount: number },
) {
  // What the Temporal UI lists for operators, without opening the input: no e-mail addresses, no document text.
  const recipients = routedRecipients(input);
  const counts = recipientTypes
    .map((type) => [type, recipients.filter((recipient) => recipient.type === type).length] as const)
    .filter(([, count]) => count > 0)
    .map(([type, count]) => `${count} ${type}${count === 1 ? '' : 's'}`);
  const steps = new Set(recipients.filter((recipient) => recipient.type !== 'cc').map((recipient) => recipient.routingOrder)).size;
  await client.workflow
    .start<typeof signingRequestWorkflow>('signingRequestWorkflow', {
      workflowId: input.requestId,
      taskQueue,
      args: [input],
      staticSummary: `${labels.title.slice(0, 80)} · ${labels.accountId} · ${labels.documentCount} document${labels.documentCount === 1 ? '' : 's'}, ${recipients.length} recipient${recipients.length === 1 ? '' : 's'}`,
      staticDetails: `Account ${labels.accountId}; ${labels.documentCount} document(s); recipients: ${counts.join(', ')}; ${steps} step(s); expires ${input.expiresAt}.`,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: searchAttributes.accountId, value: labels.accountId },
        { key: searchAttributes.documentId, value: labels.documentId },
        { key: searchAttributes.status, value: 'pending' },
      ],
    })
    .catch(ignoreAlreadyStarted);
}

/** The updates, signal and query of a running signing request, as the api and the signer's page use them. */
export function signingRequestHandle(client: Client, requestId: string) {
  const handle = client.workflow.getHandle<typeof signingRequestWorkflow>(requestId);
  return {
    sign: (input: SignInput) => handle.executeUpdate(signUpdate, { args: [input] }),
    approve: (input: ActInput) => handle.executeUpdate(approveUpdate, { args: [input] }),
    viewDone: (input: ActInput) => handle.executeUpdate(viewDoneUpdate, { args: [input] }),
    decline: (input: DeclineInput) => handle.executeUpdate(declineUpdate, { args: [input] }),
    cancel: (reason?: string) => handle.executeUpdate(cancelUpdate, { args: [{ reason }] }),
    remind: () => handle.executeUpdate(remindUpdate),
    viewed: (view: { signerId: string } & ClientInfo) => handle.signal(viewedSignal, view),
    /** Within `ms`: a request whose worker is down must not hold up the api. */
    progress: (ms: number) => client.connection.withDeadline(Date.now() + ms, () => handle.query(progressQuery)),
  };
}

/**
 * Tells a webhook's workflow that deliveries are due, starting it when none runs (signal-with-start):
 * one workflow per endpoint, however many events. A wake with nothing new is harmless.
 */
export async function wakeWebhookWorkflow(client: Client, taskQueue: string, webhook: { webhookId: string; accountId: string }, retryScale: number) {
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
