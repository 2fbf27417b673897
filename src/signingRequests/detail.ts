import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import { progressFromDatabase } from '../domain/signingRequests';
import { PROGRESS_QUERY_MS } from './get';
import { findAuditTrail, findSigningRequest } from './store';
import { signingRequestHandle } from './workflow';

/**
 * A request with its recipients, where it stands and its audit trail, as of one moment: read in one
 * read-only REPEATABLE READ transaction, so that a change committed meanwhile (an invitation: a signer's
 * notified_at and its `invitation_sent` step, written together) is in every part of the answer or in none.
 * Where it stands is read from the same rows (waitingOn); the workflow is asked only how a seal goes,
 * which only it knows.
 */
export async function getSigningRequestDetail({ db, temporal }: { db: Db; temporal: Client }, accountId: string, id: string) {
  const { found, steps } = await db.transaction(
    async (trx) => {
      const read = await findSigningRequest(trx, accountId, id);
      return { found: read, steps: await findAuditTrail(trx, accountId, id) };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
  const progress = progressFromDatabase(found);
  if (progress.stage === 'sealing') {
    const running = await signingRequestHandle(temporal, id)
      .progress(PROGRESS_QUERY_MS)
      .catch(() => null);
    if (running?.stage === 'sealing') progress.sealing = running.sealing;
  }
  return { ...found, progress, steps };
}
