import type { Knex } from 'knex';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import { renewArchiveOnThread } from '../pdf/sealThread';
import { isArchiveDue, weakenedAlgorithms, type ArchivePolicy } from '../pdf/archiveDue';
import { archivePolicyOf, sealCertificateOf, timestampingOf, tsaUrlsOf, type SealConfig } from './sealing';
import { recordAuditStep } from './store';

// Evidence that does not expire: a B-LTA seal's newest document timestamp proves the file as it was
// while its authority's certificate was valid and the algorithms it rests on were trusted. Before the
// earlier of the two ends (SEAL_ARCHIVE_RENEWAL_DAYS ahead; the algorithms' days are
// SEAL_ALGORITHM_SUNSETS, and a day configured later catches files sealed before), the archive renewal
// (workflows/archiveRenewal.ts, on a Temporal Schedule) adds fresh validation data and a new document
// timestamp, as an incremental update: the stored file is replaced in one transaction with its audit
// step and event, and the replaced copy's hash is kept, so that a copy handed out before still verifies
// as one Signet sealed.

export interface ArchiveDeps {
  db: Db;
  events: EventLog;
  config: SealConfig;
}

/** The authority's new timestamp would itself be due at once: no file is renewed with it (the same for every file). */
export class ArchiveTimestampTooWeak extends Error {
  readonly name = 'ArchiveTimestampTooWeak';
}

export interface ArchiveDue {
  requestId: string;
  documentId: string;
}

/** The rows due for renewal (as isArchiveDue decides it of one file): the day noted has come, or an algorithm noted weakens within the margin. */
const dueBy =
  (policy: ArchivePolicy, table = 'sealed_documents') =>
  (due: Knex.QueryBuilder) =>
    due.where(`${table}.archive_renew_after`, '<=', new Date()).orWhereRaw(`${table}.archive_algorithms && ?::text[]`, [weakenedAlgorithms(policy)]);

/**
 * Sealed PDFs whose archive is due for renewal (by the day noted, or resting on an algorithm that weakens
 * within the margin) and was not made or renewed since `since` (a run's start), the longest overdue first.
 */
export async function findArchivesDue(db: Db, policy: ArchivePolicy, { limit, since }: { limit: number; since: Date }): Promise<ArchiveDue[]> {
  const rows: { signing_request_id: string; document_id: string }[] = await db('sealed_documents')
    .where(dueBy(policy))
    .whereNotNull('archive_renew_after')
    .whereRaw('coalesce(archive_renewed_at, created_at) < ?', [since])
    .orderBy('archive_renew_after')
    .limit(limit)
    .select('signing_request_id', 'document_id');
  return rows.map((row) => ({ requestId: row.signing_request_id, documentId: row.document_id }));
}

/**
 * Renews one sealed PDF's archive; false when it was not due (renewed already, by a retry whose answer
 * was lost, or by another worker). Safe to repeat: the replacement is conditional on the file it renewed.
 */
export async function renewSealedArchive({ db, events, config }: ArchiveDeps, { requestId, documentId }: ArchiveDue): Promise<boolean> {
  const policy = archivePolicyOf(config);
  const row = await db('sealed_documents as s')
    .join('signing_requests as r', 'r.id', 's.signing_request_id')
    .where({ 's.signing_request_id': requestId, 's.document_id': documentId })
    .where(dueBy(policy, 's'))
    .first('s.content', 's.sha256', 's.archive_renewals', 'r.account_id');
  if (!row) return false;
  if (tsaUrlsOf(config).length === 0) throw new Error('an archive renewal needs a timestamp authority: set SEAL_TSA_URLS');
  const sealCertificate = await sealCertificateOf(config);
  const timestamping = (await timestampingOf({ ...config, SEAL_LEVEL: 'B-LTA' }, sealCertificate))!;
  const renewed = await renewArchiveOnThread({ pdf: row.content, sealCertificate, timestamping });
  // A timestamp as weak or as short-lived as the one it renews would be renewed again at every run: the
  // file is kept as it is, and the run ends on this until the authority is one that lasts.
  if (isArchiveDue(renewed.archive, policy)) {
    throw new ArchiveTimestampTooWeak(
      `the new document timestamp would be due for renewal at once (${renewed.archive.because}, SEAL_ARCHIVE_RENEWAL_DAYS=${policy.renewalMarginDays}): ` +
        'set SEAL_TSA_URLS to an authority whose certificate and algorithms last longer',
    );
  }
  return unitOfWork(db, async (trx) => {
    const replaced = await trx('sealed_documents')
      .where({ signing_request_id: requestId, document_id: documentId, sha256: row.sha256 })
      .update({
        content: renewed.pdf,
        sha256: renewed.sha256,
        archive_renew_after: renewed.archive.renewAfter,
        archive_algorithms: renewed.archive.algorithms,
        archive_renewals: row.archive_renewals + 1,
        archive_renewed_at: new Date(),
      });
    if (replaced === 0) return false;
    await trx('sealed_document_versions').insert({ sha256: row.sha256, signing_request_id: requestId, document_id: documentId }).onConflict().ignore();
    await trx('signing_request_documents').where({ signing_request_id: requestId, document_id: documentId }).update({ sealed_sha256: renewed.sha256 });
    await trx('signing_requests').where({ id: requestId, sealed_sha256: row.sha256 }).update({ sealed_sha256: renewed.sha256 });
    const renewedAt = new Date().toISOString();
    const data = { documentId, previousSha256: row.sha256, sealedSha256: renewed.sha256, archiveRenewAfter: renewed.archive.renewAfter };
    await recordAuditStep(trx, requestId, { action: 'archive_renewed', key: `archive_renewed:${documentId}:${row.sha256}`, data });
    await events.record(
      trx,
      row.account_id,
      'document.archive_renewed',
      { ...data, signingRequestId: requestId, renewedAt },
      `${requestId}:${documentId}:archive:${row.sha256}`,
    );
    return true;
  });
}
