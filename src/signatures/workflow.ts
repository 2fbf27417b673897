import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Db } from '../db';
import { searchAttributes, type SigningOrder, type SigningRequestInput } from '../../workflows/definitions';

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface CommittedRequest {
  id: string;
  account_id: string;
  document_id: string;
  signing_order: SigningOrder;
  expires_at: Date;
  reminder_every_days: number;
}

/**
 * Starts the workflow of a committed signing request (workflow id = request id) and notes that it did.
 * Safe to repeat: a second start finds the first. The sweeper calls it for requests whose api process
 * died between the commit and the start.
 */
export async function startSigningRequestWorkflow(db: Db, temporal: Client, taskQueue: string, request: CommittedRequest, signerIds: string[]) {
  const input: SigningRequestInput = {
    requestId: request.id,
    signingOrder: request.signing_order,
    signerIds,
    expiresAt: request.expires_at.toISOString(),
    reminderEveryMs: request.reminder_every_days * DAY_MS,
  };
  try {
    await temporal.workflow.start('signingRequestWorkflow', {
      workflowId: request.id,
      taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: [
        { key: searchAttributes.accountId, value: request.account_id },
        { key: searchAttributes.documentId, value: request.document_id },
        { key: searchAttributes.status, value: 'pending' },
      ],
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  await db('signing_requests').where({ id: request.id }).whereNull('workflow_started_at').update({ workflow_started_at: db.fn.now() });
}
