import { progressFromDatabase } from '../domain/signingRequests';
import type { SigningDeps } from './deps';
import { findSigningRequest } from './store';
import { signingRequestHandle } from './workflow';

/** How long `progress` waits for a running workflow to answer. */
export const PROGRESS_QUERY_MS = 2000;

/** The request with `progress`: from its workflow while it runs, from the database once it has finished (or the workflow does not answer). */
export async function getSigningRequest({ db, temporal }: Pick<SigningDeps, 'db' | 'temporal'>, accountId: string, id: string) {
  const found = await findSigningRequest(db, accountId, id);
  let progress = progressFromDatabase(found);
  if (found.request.status === 'pending') {
    progress = await signingRequestHandle(temporal, id)
      .progress(PROGRESS_QUERY_MS)
      .catch(() => progress);
  }
  return { ...found, progress };
}
