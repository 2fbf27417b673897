import type { Client } from '@temporalio/client';
import type { ClientInfo } from '../domain/signingRequests';
import { assertCanAct, type SigningContext } from './links';
import { signingRequestHandle } from './workflow';

/** The signer (or approver) of a link declines, with a reason: the request ends for everyone. */
export async function declineRequest(temporal: Client, context: SigningContext, reason: string, client: ClientInfo) {
  assertCanAct(context);
  await signingRequestHandle(temporal, context.request.id).decline({ signerId: context.signer.id, reason, ...client });
}
