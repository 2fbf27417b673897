import type { Client } from '@temporalio/client';
import type { ClientInfo } from '../domain/signingRequests';
import { assertCanAct, type SigningContext } from './links';
import { signingRequestHandle } from './workflow';

/**
 * The signer's page was opened: the workflow records the view once. Only a signal, which nothing waits
 * for: the page shows whether or not it is recorded.
 */
export async function recordPageOpened(temporal: Client, context: SigningContext, client: ClientInfo) {
  if (context.request.status !== 'pending' || !['pending', 'notified'].includes(context.signer.status)) return;
  await signingRequestHandle(temporal, context.request.id).viewed({ signerId: context.signer.id, ...client });
}

/** A viewer's page has shown the documents: the viewer's step is done, once the workflow has it. */
export async function markViewed(temporal: Client, context: SigningContext, client: ClientInfo) {
  assertCanAct(context);
  await signingRequestHandle(temporal, context.request.id).viewDone({ signerId: context.signer.id, ...client });
}
