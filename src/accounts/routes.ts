import { jsonBody } from '../api/middleware/body';
import { routesOn } from '../api/route';
import type { RouteDeps } from '../api/routeDeps';
import { z } from '../api/validation';
import { hourlyLimit, plans, planNames, rateLimitedOperations } from '../domain/plans';
import type { Account } from './service';
import { MAX_LOGO_BYTES } from './logo';
import { BrandingSchema, BrandingUpdateSchema, getBranding, presentBranding, updateBranding } from './branding';

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

/**
 * This month's usage of an account's plan: a read model over documents and templates, which sit above
 * accounts, so it is handed in where the app is assembled (the dashboard's, src/dashboard/usage.ts).
 */
export interface UsageReader {
  usage(account: Account): Promise<z.output<typeof AccountSchema>['usage']>;
}

export function accountRoutes({ router, db, config, openapi, idempotency, dashboard }: RouteDeps & { dashboard: UsageReader }) {
  const route = routesOn({ router, openapi, idempotency });

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
      return {
        id: account.id,
        email: account.email,
        plan: account.plan,
        usage: await dashboard.usage(account),
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

  route(
    {
      method: 'get',
      path: '/account/branding',
      operationId: 'getAccountBranding',
      tag: 'Account',
      summary: 'Your brand: the name, logo, accent colour, e-mail footer and support address signers see in place of Signet’s',
      response: BrandingSchema,
      responseDescription: 'The brand (every field null when none is set)',
      errors: [401],
    },
    async (_input, ctx) => presentBranding(await getBranding(db, (ctx.state.account as Account).id), config.publicUrl),
  );

  route(
    {
      method: 'patch',
      path: '/account/branding',
      operationId: 'updateAccountBranding',
      tag: 'Account',
      summary: 'Set your brand: each field given is set, null clears it',
      description:
        'The signing page, its verification and every e-mail to signers show the brand: with a name set, “Signet” appears nowhere a signer sees. ' +
        'A colour with too little contrast against white, a logo that is not a PNG or an SVG, too large, or a PNG whose header claims more than ' +
        '2000 × 2000 pixels are refused with 400, each naming its rule.',
      body: BrandingUpdateSchema,
      parseBody: jsonBody(MAX_LOGO_BYTES),
      response: BrandingSchema,
      responseDescription: 'The brand as set',
      errors: [400, 401],
    },
    async ({ body }, ctx) => presentBranding(await updateBranding(db, (ctx.state.account as Account).id, body), config.publicUrl),
  );
}
