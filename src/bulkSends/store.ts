import type { Db } from '../db';
import type { Actor } from '../domain/actors';
import { requestStatuses } from '../domain/signingRequests';
import { bulkRowStatuses, type BulkSendRow } from './schema';

// The bulk_sends and bulk_send_rows tables (migration 20261204021000_bulk_sends).

export interface BulkSendRecord {
  id: string;
  accountId: string;
  templateId: string;
  status: 'sending' | 'sent' | 'cancelled';
  rowCount: number;
  cancelSent: boolean;
  createdAt: Date;
  finishedAt: Date | null;
  workflowStartedAt: Date | null;
  /** Who made the job: each of its requests is sent by them. */
  sentBy: Actor | null;
}

type BulkSendRow_ = {
  id: string;
  account_id: string;
  template_id: string;
  status: BulkSendRecord['status'];
  row_count: number;
  cancel_sent: boolean;
  created_at: Date;
  finished_at: Date | null;
  workflow_started_at: Date | null;
  sent_by: Actor | null;
};
const recordOf = (row: BulkSendRow_): BulkSendRecord => ({
  id: row.id,
  accountId: row.account_id,
  templateId: row.template_id,
  status: row.status,
  rowCount: row.row_count,
  cancelSent: row.cancel_sent,
  createdAt: row.created_at,
  finishedAt: row.finished_at,
  workflowStartedAt: row.workflow_started_at,
  sentBy: row.sent_by ?? null,
});

/** Rows inserted at once: PostgreSQL takes at most 65,535 parameters a statement. */
const INSERT_CHUNK = 1000;

export async function insertBulkSend(
  trx: Db,
  job: { id: string; accountId: string; templateId: string; createdAt: Date; rows: BulkSendRow[]; sentBy: Actor | null },
) {
  await trx('bulk_sends').insert({
    id: job.id,
    sent_by: job.sentBy ? JSON.stringify(job.sentBy) : null,
    account_id: job.accountId,
    template_id: job.templateId,
    row_count: job.rows.length,
    created_at: job.createdAt,
  });
  for (let from = 0; from < job.rows.length; from += INSERT_CHUNK) {
    await trx('bulk_send_rows').insert(
      job.rows.slice(from, from + INSERT_CHUNK).map((row, index) => ({
        bulk_send_id: job.id,
        row: from + index,
        input: JSON.stringify(row),
        external_id: row.externalId ?? null,
      })),
    );
  }
}

export async function findBulkSend(db: Db, accountId: string | undefined, id: string): Promise<BulkSendRecord | undefined> {
  const row: BulkSendRow_ | undefined = await db('bulk_sends')
    .where({ id })
    .modify((builder) => accountId !== undefined && builder.where({ account_id: accountId }))
    .first();
  return row && recordOf(row);
}

export async function markBulkSendStarted(db: Db, id: string) {
  await db('bulk_sends').where({ id }).whereNull('workflow_started_at').update({ workflow_started_at: db.fn.now() });
}

/** Up to `limit` jobs committed before `before` whose workflow was never started, oldest first. */
export async function findOrphanedBulkSends(db: Db, before: Date, limit: number): Promise<BulkSendRecord[]> {
  const rows: BulkSendRow_[] = await db('bulk_sends').whereNull('workflow_started_at').where('created_at', '<', before).orderBy('created_at').limit(limit);
  return rows.map(recordOf);
}

type Count = { status: string; count: number };
const byStatus = <S extends string>(counts: Count[], statuses: readonly S[]) =>
  Object.fromEntries(statuses.map((status) => [status, counts.find((entry) => entry.status === status)?.count ?? 0])) as Record<S, number>;

/** The rows by status, and the requests of the sent rows by theirs. */
export async function countBulkSend(db: Db, id: string) {
  const rows: Count[] = await db('bulk_send_rows').where({ bulk_send_id: id }).groupBy('status').select('status', db.raw('count(*)::int as count'));
  const requests: Count[] = await db('signing_requests').where({ bulk_send_id: id }).groupBy('status').select('status', db.raw('count(*)::int as count'));
  return { rows: byStatus(rows, bulkRowStatuses), requests: byStatus(requests, requestStatuses) };
}

/** A job in the console's list: with its template's name (null once the template is deleted) and its rows by outcome. */
export type BulkSendSummary = BulkSendRecord & { templateName: string | null; rows: Record<(typeof bulkRowStatuses)[number], number> };

/** An account's latest jobs, newest first. */
export async function listBulkSends(db: Db, accountId: string, limit: number): Promise<BulkSendSummary[]> {
  const jobs: (BulkSendRow_ & { template_name: string | null })[] = await db('bulk_sends as b')
    .leftJoin('templates as t', function () {
      this.on('t.id', 'b.template_id').andOnNull('t.deleted_at');
    })
    .where('b.account_id', accountId)
    .orderBy('b.id', 'desc') // ids sort by the time they were made
    .limit(limit)
    .select('b.*', 't.name as template_name');
  const counts: (Count & { bulk_send_id: string })[] = jobs.length
    ? await db('bulk_send_rows')
        .whereIn(
          'bulk_send_id',
          jobs.map((job) => job.id),
        )
        .groupBy('bulk_send_id', 'status')
        .select('bulk_send_id', 'status', db.raw('count(*)::int as count'))
    : [];
  return jobs.map((job) => ({
    ...recordOf(job),
    templateName: job.template_name,
    rows: byStatus(
      counts.filter((count) => count.bulk_send_id === job.id),
      bulkRowStatuses,
    ),
  }));
}

/** The next queued rows, in order. */
export const findQueuedRows = (db: Db, id: string, limit: number): Promise<{ row: number; input: BulkSendRow }[]> =>
  db('bulk_send_rows').where({ bulk_send_id: id, status: 'queued' }).orderBy('row').limit(limit).select('row', 'input');

/** A row's outcome. A request made wins over a cancel that came meanwhile: the row says what exists. */
export async function markRowSent(db: Db, id: string, row: number, requestId: string) {
  await db('bulk_send_rows')
    .where({ bulk_send_id: id, row })
    .whereIn('status', ['queued', 'cancelled'])
    .update({ status: 'sent', signing_request_id: requestId, error: null });
}

export async function markRowFailed(db: Db, id: string, row: number, error: string) {
  await db('bulk_send_rows').where({ bulk_send_id: id, row, status: 'queued' }).update({ status: 'failed', error });
}

/** Cancels the job's queued rows; answers false when it had ended already. */
export async function cancelQueuedRows(trx: Db, id: string, cancelSent: boolean): Promise<boolean> {
  const changed = await trx('bulk_sends').where({ id, status: 'sending' }).update({ status: 'cancelled', cancel_sent: cancelSent });
  if (!changed) return false;
  await trx('bulk_send_rows').where({ bulk_send_id: id, status: 'queued' }).update({ status: 'cancelled' });
  return true;
}

/** Marks the job finished once no row is queued; answers whether this call finished it. */
export async function finishBulkSend(trx: Db, id: string): Promise<boolean> {
  const changed = await trx('bulk_sends')
    .where({ id })
    .whereNull('finished_at')
    .whereNotExists(trx('bulk_send_rows').where({ bulk_send_id: id, status: 'queued' }).select(trx.raw('1')))
    .update({ finished_at: trx.fn.now(), status: trx.raw(`case when status = 'sending' then 'sent' else status end`) });
  return changed > 0;
}

/** The pending requests of sent rows, for a cancel that asked for them too. */
export const findPendingRequestsOf = (db: Db, id: string, limit: number): Promise<{ id: string }[]> =>
  db('signing_requests').where({ bulk_send_id: id, status: 'pending' }).orderBy('id').limit(limit).select('id');

/** A page of the job's rows with their outcomes, by row number. */
export async function listBulkRows(db: Db, id: string, query: { limit: number; cursor?: string; status?: string }) {
  const rows: {
    row: number;
    external_id: string | null;
    status: string;
    signing_request_id: string | null;
    request_status: string | null;
    error: string | null;
  }[] = await db('bulk_send_rows as b')
    .leftJoin('signing_requests as r', 'r.id', 'b.signing_request_id')
    .where('b.bulk_send_id', id)
    .modify((builder) => {
      if (query.cursor !== undefined) builder.where('b.row', '>', Number(query.cursor));
      if (query.status !== undefined) builder.where('b.status', query.status);
    })
    .orderBy('b.row')
    .limit(query.limit + 1)
    .select('b.row', 'b.external_id', 'b.status', 'b.signing_request_id', 'r.status as request_status', 'b.error');
  const hasMore = rows.length > query.limit;
  const data = rows.slice(0, query.limit);
  return { data, hasMore, nextCursor: hasMore ? String(data[data.length - 1].row) : null };
}
