import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { routesOn } from '../api/route';
import type { RouteDeps } from '../api/routeDeps';
import type { DashboardBackend } from './backend';
import { listActivity } from './activity';
import { ActivityPageSchema, ActivityQuerySchema, BreakdownQuerySchema, BreakdownSchema, StatsSchema, TrendsQuerySchema, TrendsSchema } from './schema';
import { getBreakdown, getStats, getTrends } from './service';

const tag = 'Dashboard';

export function dashboardRoutes({ router, db, openapi, idempotency, dashboard }: RouteDeps & { dashboard: DashboardBackend }) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn({ router, openapi, idempotency });
  const deps = { db, dashboard };

  route(
    {
      method: 'get',
      path: '/dashboard/stats',
      operationId: 'getDashboardStats',
      tag,
      summary: 'Documents, signing requests and signers at a glance, and usage against the plan',
      response: StatsSchema,
      responseDescription: 'The statistics',
      errors: [401, 503],
    },
    async (_input, ctx) => getStats(deps, account(ctx)),
  );

  route(
    {
      method: 'get',
      path: '/dashboard/activity',
      operationId: 'listActivity',
      tag,
      summary: 'The activity feed: the account’s events, newest first',
      query: ActivityQuerySchema,
      response: ActivityPageSchema,
      responseDescription: 'A page of events',
      errors: [400, 401],
    },
    async ({ query }, ctx) => listActivity(db, account(ctx).id, query),
  );

  route(
    {
      method: 'get',
      path: '/dashboard/signing-breakdown',
      operationId: 'getSigningBreakdown',
      tag,
      summary: 'Signing requests and signers by status, who is holding things up, and why people decline',
      query: BreakdownQuerySchema,
      response: BreakdownSchema,
      responseDescription: 'The breakdown',
      errors: [400, 401, 503],
    },
    async ({ query }, ctx) => getBreakdown(deps, account(ctx).id, query),
  );

  route(
    {
      method: 'get',
      path: '/dashboard/trends',
      operationId: 'getDashboardTrends',
      tag,
      summary: 'Per calendar month (UTC): documents created, requests sent, completed, declined, expired, median time to complete',
      query: TrendsQuerySchema,
      response: TrendsSchema,
      responseDescription: 'One entry per month, oldest first; months with nothing have zeros',
      errors: [400, 401, 503],
    },
    async ({ query }, ctx) => getTrends(deps, account(ctx).id, query.months),
  );
}
