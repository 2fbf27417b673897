import { routesOn } from '../api/route';
import type { RouteDeps } from '../api/routeDeps';
import { z } from '../api/validation';
import { hourlyLimit, plans, planNames, rateLimitedOperations } from '../domain/plans';
import type { Account } from './service';
// Against the folders' order on purpose: GET /account shows the usage read model, which counts
// documents and templates, both above accounts (docs/architecture.md, "Tiers").
import { describeUsage } from '../dashboard/usage';

const quota = z.object({ used: z.number().int(), limit: z.number().int().nullable().openapi({ description: 'null = unlimited' }) });

export const AccountSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    plan: z.enum(planNames),
    usage: z.object({
      periodResetsAt: z.string().openapi({ format: 'date-time' }),
      documents: quota,
      templates: quota,
    }),
    features: z.object({ webhooks: z.boolean() }),
    rateLimits: z.array(z.object({ operation: z.enum(rateLimitedOperations), limit: z.number().int(), window: z.literal('1h') })),
    createdAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Account');

export function accountRoutes({ router, db, config, openapi }: RouteDeps) {
  const route = routesOn(router, openapi);

  route(
    {
      method: 'get',
      path: '/account',
      operationId: 'getAccount',
      tag: 'Account',
      summary: 'Your plan, this month’s usage against its quotas, and the rate limits that apply',
      response: AccountSchema,
      responseDescription: 'The account',
      errors: [401],
    },
    async (_input, ctx) => {
      const account: Account = ctx.state.account;
      const usage = await describeUsage(db, account);
      return {
        id: account.id,
        email: account.email,
        plan: account.plan,
        usage,
        features: { webhooks: plans[account.plan].webhooks },
        rateLimits: rateLimitedOperations.map((operation) => ({
          operation,
          limit: hourlyLimit(account.plan, operation, config.RATE_LIMIT_MULTIPLIER),
          window: '1h',
        })),
        createdAt: account.createdAt.toISOString(),
      };
    },
  );
}
