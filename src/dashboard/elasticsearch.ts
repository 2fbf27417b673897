import type { Client } from '@elastic/elasticsearch';
import { requestStatuses, signerStatuses } from '../domain/signingRequests';
import { SEARCH_REQUEST_OPTIONS } from '../search/elasticsearch';
import { aliasOf } from '../search/esIndices';
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
import { countsByStatus } from './postgres';

type Aggregations = Record<string, any>;
type Bucket = { key: string | number; key_as_string?: string; doc_count: number } & Aggregations;

/** Marks a declined signer without a reason in the terms aggregation (sorts before any real reason, as NULLs do in SQL). */
const NO_REASON = '\u0000';
const byKey = (buckets: Bucket[]) => buckets.map((bucket) => ({ status: String(bucket.key), count: bucket.doc_count }));
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((total, count) => total + count, 0);
const orderByCount = [{ _count: 'desc' }, { _key: 'asc' }];
const createdIn = (range: DateRange) =>
  range.from || range.to ? [{ range: { createdAt: { gte: range.from?.toISOString(), lt: range.to?.toISOString() } } }] : [];
const percentile = (values: Record<string, number | null> | undefined, key: string) => values?.[key] ?? null;

/** The dashboard from Elasticsearch aggregations: the same numbers as the SQL of dashboard/postgres.ts. */
export function createElasticsearchDashboard(client: Client, prefix: string): DashboardAggregations {
  const aggregate = async (type: 'document' | 'signing_request', filter: object[], aggs: object): Promise<{ total: number; aggregations: Aggregations }> => {
    const response = await client.search(
      { index: aliasOf(prefix, type), size: 0, track_total_hits: true, query: { bool: { filter } }, aggs } as never,
      SEARCH_REQUEST_OPTIONS,
    );
    const total = typeof response.hits.total === 'number' ? response.hits.total : (response.hits.total?.value ?? 0);
    return { total, aggregations: (response.aggregations ?? {}) as Aggregations };
  };
  const account = (accountId: string) => ({ term: { accountId } });
  const statusAggs = {
    byStatus: { terms: { field: 'status', size: requestStatuses.length } },
    signers: { nested: { path: 'signerStates' }, aggs: { byStatus: { terms: { field: 'signerStates.status', size: signerStatuses.length } } } },
  };

  return {
    async stats(accountId, monthStart) {
      const [documents, requests] = await Promise.all([
        aggregate('document', [account(accountId)], { thisMonth: { filter: { range: { createdAt: { gte: monthStart.toISOString() } } } } }),
        aggregate('signing_request', [account(accountId)], {
          ...statusAggs,
          completed: { filter: { term: { status: 'completed' } }, aggs: { seconds: { percentiles: { field: 'secondsToComplete', percents: [50, 90] } } } },
        }),
      ]);
      const byStatus = countsByStatus<RequestStatus>(requestStatuses, byKey(requests.aggregations.byStatus.buckets));
      const signers = countsByStatus<SignerStatus>(signerStatuses, byKey(requests.aggregations.signers.byStatus.buckets));
      const seconds = requests.aggregations.completed.seconds.values;
      return {
        documents: { total: documents.total, thisMonth: documents.aggregations.thisMonth.doc_count },
        signingRequests: { total: requests.total, byStatus },
        timeToComplete: { medianSeconds: percentile(seconds, '50.0'), p90Seconds: percentile(seconds, '90.0') },
        signers: { total: sum(signers), byStatus: signers },
      };
    },

    async breakdown(accountId, range) {
      const { aggregations } = await aggregate('signing_request', [account(accountId), ...createdIn(range)], {
        ...statusAggs,
        // Whom each request waits on was decided as it was copied (waitedOn), by the rule PostgreSQL's SQL follows.
        waiting: {
          nested: { path: 'signerStates' },
          aggs: {
            waitedOn: {
              filter: { term: { 'signerStates.waitedOn': true } },
              aggs: { top: { terms: { field: 'signerStates.email', size: TOP_SIGNERS, order: orderByCount } } },
            },
          },
        },
        declines: {
          nested: { path: 'signerStates' },
          aggs: {
            declined: {
              filter: { term: { 'signerStates.status': 'declined' } },
              aggs: { reasons: { terms: { field: 'signerStates.declineReason', size: TOP_DECLINE_REASONS, order: orderByCount, missing: NO_REASON } } },
            },
          },
        },
      });
      return {
        requestsByStatus: countsByStatus<RequestStatus>(requestStatuses, byKey(aggregations.byStatus.buckets)),
        signersByStatus: countsByStatus<SignerStatus>(signerStatuses, byKey(aggregations.signers.byStatus.buckets)),
        topPendingSigners: aggregations.waiting.waitedOn.top.buckets.map((bucket: Bucket) => ({
          email: String(bucket.key),
          pendingRequests: bucket.doc_count,
        })),
        declineReasons: aggregations.declines.declined.reasons.buckets.map((bucket: Bucket) => ({
          reason: bucket.key === NO_REASON ? null : String(bucket.key),
          count: bucket.doc_count,
        })),
      };
    },

    async trends(accountId, range) {
      const within = (field: string) => ({ range: { [field]: { gte: range.start.toISOString(), lt: range.end.toISOString() } } });
      const monthly = (field: string, aggs?: object) => ({
        date_histogram: { field, calendar_interval: 'month', time_zone: 'UTC', format: 'yyyy-MM' },
        ...(aggs ? { aggs } : {}),
      });
      const [documents, requests] = await Promise.all([
        aggregate('document', [account(accountId), within('createdAt')], { months: monthly('createdAt') }),
        aggregate('signing_request', [account(accountId)], {
          sent: { filter: within('createdAt'), aggs: { months: monthly('createdAt') } },
          finished: {
            filter: { bool: { filter: [within('completedAt'), { terms: { status: FINISHED_STATUSES } }] } },
            aggs: {
              months: monthly('completedAt', {
                byStatus: {
                  terms: { field: 'status', size: FINISHED_STATUSES.length },
                  aggs: { median: { percentiles: { field: 'secondsToComplete', percents: [50] } } },
                },
              }),
            },
          },
        }),
      ]);
      const byMonth = new Map<string, MonthTrend>(
        range.months.map((key) => [
          key,
          { month: key, documentsCreated: 0, requestsSent: 0, completed: 0, declined: 0, expired: 0, medianTimeToCompleteSeconds: null },
        ]),
      );
      const month = (bucket: Bucket) => byMonth.get(bucket.key_as_string!);
      for (const bucket of documents.aggregations.months.buckets as Bucket[]) if (month(bucket)) month(bucket)!.documentsCreated = bucket.doc_count;
      for (const bucket of requests.aggregations.sent.months.buckets as Bucket[]) if (month(bucket)) month(bucket)!.requestsSent = bucket.doc_count;
      for (const bucket of requests.aggregations.finished.months.buckets as Bucket[]) {
        const trend = month(bucket);
        if (!trend) continue;
        for (const status of bucket.byStatus.buckets as Bucket[]) {
          trend[status.key as (typeof FINISHED_STATUSES)[number]] = status.doc_count;
          if (status.key === 'completed') trend.medianTimeToCompleteSeconds = percentile(status.median.values, '50.0');
        }
      }
      return [...byMonth.values()];
    },
  };
}
