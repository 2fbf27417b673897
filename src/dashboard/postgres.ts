import type { Db } from '../db';
import { requestStatuses, signerStatuses, stillToAct } from '../domain/signingRequests';
import {
  FINISHED_STATUSES,
  TOP_DECLINE_REASONS,
  TOP_SIGNERS,
  type DashboardAggregations,
  type DateRange,
  type MonthTrend,
  type RequestStatus,
  type SignerStatus,
} from './backend';

/** Counts keyed by status, every status present (zero when none). */
export function countsByStatus<Status extends string>(statuses: readonly Status[], rows: { status: string; count: number | string }[]) {
  const counts = Object.fromEntries(statuses.map((status) => [status, 0])) as Record<Status, number>;
  for (const row of rows) if (row.status in counts) counts[row.status as Status] += Number(row.count);
  return counts;
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((total, count) => total + count, 0);
const secondsToComplete = 'extract(epoch from completed_at - created_at)';

/** The dashboard in SQL: what answers it without Elasticsearch, and what Elasticsearch must agree with. */
export function createPostgresDashboard(db: Db): DashboardAggregations {
  const requests = (accountId: string, range: DateRange = {}) =>
    db('signing_requests')
      .where('account_id', accountId)
      .modify((builder) => {
        if (range.from) builder.where('created_at', '>=', range.from);
        if (range.to) builder.where('created_at', '<', range.to);
      });
  const signers = (accountId: string, range: DateRange = {}) =>
    db('signers as s')
      .join('signing_requests as r', 'r.id', 's.signing_request_id')
      .where('r.account_id', accountId)
      .modify((builder) => {
        if (range.from) builder.where('r.created_at', '>=', range.from);
        if (range.to) builder.where('r.created_at', '<', range.to);
      });
  const requestCounts = async (accountId: string, range?: DateRange) =>
    countsByStatus<RequestStatus>(requestStatuses, await requests(accountId, range).groupBy('status').select('status').count({ count: '*' }));
  const signerCounts = async (accountId: string, range?: DateRange) =>
    countsByStatus<SignerStatus>(signerStatuses, await signers(accountId, range).groupBy('s.status').select('s.status as status').count({ count: '*' }));
  // waitingOn (domain/signingRequests.ts) in SQL: on pending requests, the recipients still to act (its
  // types and statuses, as data) of their request's first step that has any.
  const waitedOn = (accountId: string, range: DateRange) =>
    db
      .from(
        signers(accountId, range)
          .where('r.status', 'pending')
          .whereIn(
            ['s.recipient_type', 's.status'],
            stillToAct.map(({ recipientType, status }) => [recipientType, status]),
          )
          .select(db.raw('lower(s.email) as email'), 's.routing_order', db.raw('min(s.routing_order) over (partition by s.signing_request_id) as first_step'))
          .as('to_act'),
      )
      .whereRaw('to_act.routing_order = to_act.first_step');

  return {
    async stats(accountId, monthStart) {
      const [documents, byStatus, times, signerStatus] = await Promise.all([
        db('documents')
          .where('account_id', accountId)
          .whereNull('deleted_at')
          .first(db.raw('count(*)::int as total'), db.raw('(count(*) filter (where created_at >= ?))::int as "thisMonth"', [monthStart])),
        requestCounts(accountId),
        requests(accountId)
          .where('status', 'completed')
          .first(db.raw(`percentile_cont(array[0.5, 0.9]) within group (order by ${secondsToComplete}) as seconds`)),
        signerCounts(accountId),
      ]);
      const [median, p90] = (times?.seconds as number[] | null) ?? [null, null];
      return {
        documents: { total: documents.total, thisMonth: documents.thisMonth },
        signingRequests: { total: sum(byStatus), byStatus },
        timeToComplete: { medianSeconds: median, p90Seconds: p90 },
        signers: { total: sum(signerStatus), byStatus: signerStatus },
      };
    },

    async breakdown(accountId, range) {
      const [requestsByStatus, signersByStatus, top, reasons] = await Promise.all([
        requestCounts(accountId, range),
        signerCounts(accountId, range),
        waitedOn(accountId, range)
          .groupBy('to_act.email')
          .select('to_act.email', db.raw('count(*)::int as "pendingRequests"'))
          .orderByRaw('count(*) desc, to_act.email collate "C" asc')
          .limit(TOP_SIGNERS),
        signers(accountId, range)
          .where('s.status', 'declined')
          .groupBy('s.decline_reason')
          .select('s.decline_reason as reason', db.raw('count(*)::int as count'))
          .orderByRaw('count(*) desc, s.decline_reason collate "C" asc nulls first')
          .limit(TOP_DECLINE_REASONS),
      ]);
      return { requestsByStatus, signersByStatus, topPendingSigners: top, declineReasons: reasons };
    },

    async trends(accountId, range) {
      const month = (column: string) => db.raw(`to_char(date_trunc('month', ${column} at time zone 'UTC'), 'YYYY-MM') as month`);
      const [documents, sent, finished] = await Promise.all([
        db('documents')
          .where('account_id', accountId)
          .whereNull('deleted_at')
          .where('created_at', '>=', range.start)
          .where('created_at', '<', range.end)
          .groupBy('month')
          .select(month('created_at'), db.raw('count(*)::int as count')),
        requests(accountId, { from: range.start, to: range.end }).groupBy('month').select(month('created_at'), db.raw('count(*)::int as count')),
        db('signing_requests')
          .where('account_id', accountId)
          .whereIn('status', FINISHED_STATUSES)
          .where('completed_at', '>=', range.start)
          .where('completed_at', '<', range.end)
          .groupBy('month', 'status')
          .select(
            month('completed_at'),
            'status',
            db.raw('count(*)::int as count'),
            db.raw(`percentile_cont(0.5) within group (order by ${secondsToComplete}) as median`),
          ),
      ]);
      const byMonth = new Map<string, MonthTrend>(
        range.months.map((key) => [
          key,
          { month: key, documentsCreated: 0, requestsSent: 0, completed: 0, declined: 0, expired: 0, medianTimeToCompleteSeconds: null },
        ]),
      );
      for (const row of documents) byMonth.get(row.month)!.documentsCreated = row.count;
      for (const row of sent) byMonth.get(row.month)!.requestsSent = row.count;
      for (const row of finished) {
        const trend = byMonth.get(row.month)!;
        trend[row.status as (typeof FINISHED_STATUSES)[number]] = row.count;
        if (row.status === 'completed') trend.medianTimeToCompleteSeconds = row.median;
      }
      return [...byMonth.values()];
    },
  };
}
