import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import { renewArchiveOnThread } from '../pdf/sealThread';
import { sealCertificateOf, timestampingOf, tsaUrlsOf, type SealConfig } from './sealing';
import { recordAuditStep } from './store';

// Evidence that does not expire: a B-LTA seal's newest document timestamp proves the file as it was
// while its authority's certificate was valid. Before that certificate ends (SEAL_ARCHIVE_RENEWAL_DAYS
// ahead), the archive renewal (workflows/archiveRenewal.ts, on a Temporal Schedule) adds fresh
// validation data and a new document timestamp, as an incremental update: the stored file is replaced
// in one transaction with its audit step and event, and the replaced copy's hash is kept, so that a
// copy handed out before still verifies as one Signet sealed.

export interface ArchiveDeps {
  db: Db;
  events: EventLog;
  config: SealConfig;
}

export interface ArchiveDue {
  requestId: string;
  documentId: string;
}

/** Sealed PDFs whose archive is due for renewal and was not made or renewed since `since` (a run's start), the longest overdue first. */
export async function findArchivesDue(db: Db, { limit, since }: { limit: number; since: Date }): Promise<ArchiveDue[]> {
  const rows: { signing_request_id: string; document_id: string }[] = await db('sealed_documents')
    .where('archive_renew_after', '<=', new Date())
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
  const row = await db('sealed_documents as s')
    .join('signing_requests as r', 'r.id', 's.signing_request_id')
    .where({ 's.signing_request_id': requestId, 's.document_id': documentId })
    .where('s.archive_renew_after', '<=', new Date())
    .first('s.content', 's.sha256', 's.archive_renewals', 'r.account_id');
  if (!row) return false;
  if (tsaUrlsOf(config).length === 0) throw new Error('an archive renewal needs a timestamp authority: set SEAL_TSA_URLS');
  const sealCertificate = await sealCertificateOf(config);
  const timestamping = (await timestampingOf({ ...config, SEAL_LEVEL: 'B-LTA' }, sealCertificate))!;
  const renewed = await renewArchiveOnThread({ pdf: row.content, sealCertificate, timestamping });
  return unitOfWork(db, async (trx) => {
    const replaced = await trx('sealed_documents')
      .where({ signing_request_id: requestId, document_id: documentId, sha256: row.sha256 })
      .update({
        content: renewed.pdf,
        sha256: renewed.sha256,
        archive_renew_after: renewed.archiveRenewAfter,
        archive_renewals: row.archive_renewals + 1,
        archive_renewed_at: new Date(),
      });
    if (replaced === 0) return false;
    await trx('sealed_document_versions').insert({ sha256: row.sha256, signing_request_id: requestId, document_id: documentId }).onConflict().ignore();
    await trx('signing_request_documents').where({ signing_request_id: requestId, document_id: documentId }).update({ sealed_sha256: renewed.sha256 });
    await trx('signing_requests').where({ id: requestId, sealed_sha256: row.sha256 }).update({ sealed_sha256: renewed.sha256 });
    const renewedAt = new Date().toISOString();
    const data = { documentId, previousSha256: row.sha256, sealedSha256: renewed.sha256, archiveRenewAfter: renewed.archiveRenewAfter };
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
