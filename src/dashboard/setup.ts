import type { Db } from '../db';
import type { SearchBackend } from '../search/backend';
import { unlessUnavailable } from '../search/elasticsearch';
import type { DashboardBackend } from './backend';
import { createElasticsearchDashboard } from './elasticsearch';
import { createPostgresDashboard } from './postgres';
import { describeUsage } from './usage';

/**
 * The dashboard's numbers, beside search: aggregations over Elasticsearch's indices when search uses
 * Elasticsearch (a 503 while it is unavailable, as search answers), SQL over PostgreSQL otherwise; an
 * account's usage of its plan from PostgreSQL either way.
 */
export function createDashboardBackend(search: SearchBackend, db: Db): DashboardBackend {
  const usage: DashboardBackend['usage'] = (...args) => describeUsage(db, ...args);
  if (!search.elasticsearch) return { ...createPostgresDashboard(db), usage };
  const dashboard = createElasticsearchDashboard(search.elasticsearch.client, search.elasticsearch.prefix);
  return {
    stats: (...args) => unlessUnavailable(() => dashboard.stats(...args)),
    breakdown: (...args) => unlessUnavailable(() => dashboard.breakdown(...args)),
    trends: (...args) => unlessUnavailable(() => dashboard.trends(...args)),
    usage,
  };
}
