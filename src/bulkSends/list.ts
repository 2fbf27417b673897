import type { Db } from '../db';
import { bulkRowStatuses } from './schema';
import type { BulkSendRecord } from './store';

// An account's bulk sends, newest first, each with its template's name and its rows by outcome (the console's list).

export interface BulkSendSummary {
  id: string;
  templateId: string;
  /** Null once the template is deleted. */
  templateName: string | null;
  status: BulkSendRecord['status'];
  rowCount: number;
  rows: Record<(typeof bulkRowStatuses)[number], number>;
  createdAt: Date;
  finishedAt: Date | null;
}

export async function listBulkSends(db: Db, accountId: string, limit: number): Promise<BulkSendSummary[]> {
  const jobs: {
    id: string;
    template_id: string;
    template_name: string | null;
    status: BulkSendRecord['status'];
    row_count: number;
    created_at: Date;
    finished_at: Date | null;
  }[] = await db('bulk_sends as b')
    .leftJoin('templates as t', function () {
      this.on('t.id', 'b.template_id').andOnNull('t.deleted_at');
    })
    .where('b.account_id', accountId)
    // Ids sort by the time they were made.
    .orderBy('b.id', 'desc')
    .limit(limit)
    .select('b.id', 'b.template_id', 't.name as template_name', 'b.status', 'b.row_count', 'b.created_at', 'b.finished_at');
  const counts: { bulk_send_id: string; status: string; count: number }[] = jobs.length
    ? await db('bulk_send_rows')
        .whereIn(
          'bulk_send_id',
          jobs.map((job) => job.id),
        )
        .groupBy('bulk_send_id', 'status')
        .select('bulk_send_id', 'status', db.raw('count(*)::int as count'))
    : [];
  return jobs.map((job) => ({
    id: job.id,
    templateId: job.template_id,
    templateName: job.template_name,
    status: job.status,
    rowCount: job.row_count,
    rows: Object.fromEntries(
      bulkRowStatuses.map((status) => [status, counts.find((count) => count.bulk_send_id === job.id && count.status === status)?.count ?? 0]),
    ) as BulkSendSummary['rows'],
    createdAt: job.created_at,
    finishedAt: job.finished_at,
  }));
}
