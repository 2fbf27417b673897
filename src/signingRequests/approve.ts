import type { Client } from '@temporalio/client';
import type { ClientInfo } from '../domain/signingRequests';
import { assertCanAct, type SigningContext } from './links';
import { signingRequestHandle } from './workflow';

/** The approver of a link approves: nothing to place, answered once the workflow has it. */
export async function approveRequest(temporal: Client, context: SigningContext, client: ClientInfo) {
  assertCanAct(context);
  await signingRequestHandle(temporal, context.request.id).approve({ signerId: context.signer.id, ...client });
}
