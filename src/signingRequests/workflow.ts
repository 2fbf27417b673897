import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Actor } from '../domain/actors';
import { WorkflowIdReusePolicy } from '@temporalio/common';
// Up into the worker side on purpose, as in the Temporal samples: the workflow by type only (so a start's
// arguments are checked against it), and the updates, signal and query client and worker share.
import type { signingRequestWorkflow } from '../../workflows/signingRequest';
import {
  approveUpdate,
  cancelUpdate,
  declineUpdate,
  progressQuery,
  remindUpdate,
  searchAttributes,
  signUpdate,
  viewDoneUpdate,
  viewedSignal,
} from '../../workflows/definitions';
import type { Db } from '../db';
import { conflict, serverBusy, validationError } from '../errors';
import {
  changeRefused,
  recipientTypes,
  refusalTypes,
  type ActInput,
  type ClientInfo,
  type DeclineInput,
  type RoutedRecipient,
  type SignInput,
} from '../domain/signingRequests';
import { findRouting, findOrphanedSigningRequests, markWorkflowStarted, type SigningRequest } from './store';

// A signing request's conversation with Temporal: its workflow (id = request id), started here, and its
// updates, whose refusals become the api's errors here. Nothing else names the workflow.

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Starts the workflow of a committed request and notes that it did. Safe to repeat: a second start
 * finds the first.
 */
export async function startSigningRequest(
  db: Db,
  temporal: Client,
  taskQueue: string,
  request: SigningRequest,
  recipients: RoutedRecipient[],
  documentCount: number,
) {
  // What the Temporal UI lists for operators, without opening the input: no e-mail addresses, no document text.
  const counts = recipientTypes
    .map((type) => [type, recipients.filter((recipient) => recipient.type === type).length] as const)
    .filter(([, count]) => count > 0)
    .map(([type, count]) => `${count} ${type}${count === 1 ? '' : 's'}`);
  const steps = new Set(recipients.filter((recipient) => recipient.type !== 'cc').map((recipient) => recipient.routingOrder)).size;
  const expiresAt = request.expiresAt.toISOString();
  await temporal.workflow
    .start<typeof signingRequestWorkflow>('signingRequestWorkflow', {
      workflowId: request.id,
      taskQueue,
      args: [
        {
          requestId: request.id,
          signingOrder: request.signingOrder,
          signerIds: recipients.map((recipient) => recipient.id),
          recipients,
          expiresAt,
          reminderEveryMs: request.reminderEveryDays * DAY_MS,
        },
      ],
      staticSummary: `${request.title.slice(0, 80)} · ${request.accountId} · ${documentCount} document${documentCount === 1 ? '' : 's'}, ${recipients.length} recipient${recipients.length === 1 ? '' : 's'}`,
      staticDetails: `Account ${request.accountId}; ${documentCount} document(s); recipients: ${counts.join(', ')}; ${steps} step(s); expires ${expiresAt}.`,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: searchAttributes.accountId, value: request.accountId },
        { key: searchAttributes.documentId, value: request.documentId },
        { key: searchAttributes.status, value: 'pending' },
      ],
    })
    .catch((error) => {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    });
  await markWorkflowStarted(db, request.id);
}

/** Starts the workflow of a committed request from what was stored of it: its recipients and documents. */
export async function resumeSigningRequest(db: Db, temporal: Client, taskQueue: string, request: SigningRequest) {
  const { recipients, documentCount } = await findRouting(db, request.id);
  await startSigningRequest(db, temporal, taskQueue, request, recipients, documentCount);
}

/** The sweeper's part: starts the workflows of requests committed `olderThanMs` ago or more whose api process died before it started them. */
export async function startOrphanedSigningRequests(
  db: Db,
  temporal: Client,
  taskQueue: string,
  { olderThanMs, limit }: { olderThanMs: number; limit: number },
) {
  const unstarted = await findOrphanedSigningRequests(db, new Date(Date.now() - olderThanMs), limit);
  for (const request of unstarted) await resumeSigningRequest(db, temporal, taskQueue, request);
  return unstarted.length;
}

/**
 * The updates, signal and query of a running signing request, as the api and the signer's page use them.
 * An update's refusal (already acted, not your turn, ended, completing) is a 409, a change the database
 * refused for good (nothing changed) a 400.
 */
export function signingRequestHandle(client: Client, requestId: string) {
  const handle = client.workflow.getHandle<typeof signingRequestWorkflow>(requestId);
  return {
    sign: (input: SignInput) => refusalsAsErrors(handle.executeUpdate(signUpdate, { args: [input] })),
    approve: (input: ActInput) => refusalsAsErrors(handle.executeUpdate(approveUpdate, { args: [input] })),
    viewDone: (input: ActInput) => refusalsAsErrors(handle.executeUpdate(viewDoneUpdate, { args: [input] })),
    decline: (input: DeclineInput) => refusalsAsErrors(handle.executeUpdate(declineUpdate, { args: [input] })),
    cancel: (reason?: string, actor?: Actor) => refusalsAsErrors(handle.executeUpdate(cancelUpdate, { args: [{ reason, actor }] })),
    remind: () => refusalsAsErrors(handle.executeUpdate(remindUpdate)),
    viewed: (view: { signerId: string } & ClientInfo) => handle.signal(viewedSignal, view),
    /** Within `ms`: a request whose worker is down must not hold up the api. */
    progress: (ms: number) => client.connection.withDeadline(Date.now() + ms, () => handle.query(progressQuery)),
  };
}

async function refusalsAsErrors<T>(update: Promise<T>): Promise<T> {
  try {
    return await update;
  } catch (error) {
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && (refusalTypes as readonly string[]).includes(cause.type ?? '')) throw conflict(cause.message);
    if (cause instanceof ApplicationFailure && cause.type === changeRefused)
      throw validationError(['body could not be recorded as given (the database refused it); nothing changed']);
    // The database said pending (callers check it first): a workflow not started yet (the sweeper starts
    // it), or one whose task is being retried after a worker died, answers in a moment.
    if ((error as Error).name === 'WorkflowNotFoundError' || isTemporarilyRefused(error)) {
      throw serverBusy('This signing request is busy for a moment (its worker is restarting); try again.');
    }
    throw error;
  }
}

// gRPC FAILED_PRECONDITION ("Workflow Task in failed state") and UNAVAILABLE, from the client or its cause.
function isTemporarilyRefused(error: unknown): boolean {
  for (let cause = error as { code?: unknown; cause?: unknown } | undefined; cause; cause = cause.cause as typeof cause) {
    if (cause.code === 9 || cause.code === 14) return true;
  }
  return false;
}
