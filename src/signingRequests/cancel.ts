import { currentActor } from '../events/actingAs';
import { getSigningRequest } from './get';
import type { SigningDeps } from './deps';
import { findPendingSigningRequest } from './store';
import { signingRequestHandle } from './workflow';

/** Cancels a pending request through its workflow (which refuses once it is completing) and answers the request as it now stands. */
export async function cancelSigningRequest(deps: SigningDeps, accountId: string, id: string, reason?: string) {
  await findPendingSigningRequest(deps.db, accountId, id);
  await signingRequestHandle(deps.temporal, id).cancel(reason, currentActor());
  return getSigningRequest(deps, accountId, id);
}
