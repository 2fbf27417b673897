import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { jsonContent as json, pickErrors } from '../api/openapi';
import type { RouteDeps } from '../api/routeDeps';
import { parseInput } from '../api/validation';
import { listActivity } from './activity';
import { ActivityPageSchema, ActivityQuerySchema, BreakdownQuerySchema, BreakdownSchema, StatsSchema, TrendsQuerySchema, TrendsSchema } from './schema';
import { getBreakdown, getStats, getTrends } from './service';

export function dashboardRoutes({ router, db, openapi, search }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const deps = { db, search };

  openapi.registerPath({
    method: 'get',
    path: '/dashboard/stats',
    tags: ['Dashboard'],
    summary: 'Documents, signing requests and signers at a glance, and usage against the plan',
    responses: { 200: { description: 'The statistics', ...json(StatsSchema) }, ...pickErrors(401, 503) },
  });
  router.get('/dashboard/stats', async (ctx) => {
    ctx.body = await getStats(deps, account(ctx));
  });

  openapi.registerPath({
    method: 'get',
    path: '/dashboard/activity',
    tags: ['Dashboard'],
    summary: 'The activity feed: the account’s events, newest first',
    request: { query: ActivityQuerySchema },
    responses: { 200: { description: 'A page of events', ...json(ActivityPageSchema) }, ...pickErrors(400, 401) },
  });
  router.get('/dashboard/activity', async (ctx) => {
    ctx.body = await listActivity(db, account(ctx).id, parseInput(ActivityQuerySchema, ctx.query));
  });

  openapi.registerPath({
    method: 'get',
    path: '/dashboard/signing-breakdown',
    tags: ['Dashboard'],
    summary: 'Signing requests and signers by status, who is holding things up, and why people decline',
    request: { query: BreakdownQuerySchema },
    responses: { 200: { description: 'The breakdown', ...json(BreakdownSchema) }, ...pickErrors(400, 401, 503) },
  });
  router.get('/dashboard/signing-breakdown', async (ctx) => {
    ctx.body = await getBreakdown(deps, account(ctx).id, parseInput(BreakdownQuerySchema, ctx.query));
  });

  openapi.registerPath({
    method: 'get',
    path: '/dashboard/trends',
    tags: ['Dashboard'],
    summary: 'Per calendar month (UTC): documents created, requests sent, completed, declined, expired, median time to complete',
    request: { query: TrendsQuerySchema },
    responses: { 200: { description: 'One entry per month, oldest first; months with nothing have zeros', ...json(TrendsSchema) }, ...pickErrors(400, 401, 503) },
  });
  router.get('/dashboard/trends', async (ctx) => {
    const { months } = parseInput(TrendsQuerySchema, ctx.query);
    ctx.body = await getTrends(deps, account(ctx).id, months);
  });
}
