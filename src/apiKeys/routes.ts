import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { linksById, routesOn } from '../api/route';
import type { RouteDeps } from '../api/routeDeps';
import { insufficientScope } from '../errors';
import { missingScopes, type KeyScopes } from '../domain/scopes';
import { memberOf } from '../domain/actors';
import { currentActor } from '../events/actingAs';
import { presentApiKey } from './presenter';
import { ApiKeyCreateSchema, ApiKeyIdParams, ApiKeyListSchema, ApiKeySchema, ApiKeyWithSecretSchema } from './schema';
import { createApiKey, listApiKeys, revokeApiKey } from './service';

// Every operation here needs a key holding every scope (src/api/scopes.ts): a scoped key can make no key,
// so none broader than itself. The check below keeps that true should the rule ever loosen.
const tag = 'API keys';

export function apiKeyRoutes({ router, db, openapi, idempotency }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn({ router, openapi, idempotency });

  route(
    {
      method: 'post',
      path: '/api-keys',
      operationId: 'createApiKey',
      tag,
      summary: 'Make an API key, with scopes and an expiry if you like',
      description: 'The answer carries the key itself (`secret`), shown only here: Signet keeps only its hash.',
      body: ApiKeyCreateSchema,
      status: 201,
      response: ApiKeyWithSecretSchema,
      responseDescription: 'Created',
      links: linksById('revokeApiKey'),
      errors: [400, 401, 403],
    },
    async ({ body }, ctx) => {
      const own: KeyScopes = ctx.state.apiKeyScopes ?? null;
      const requested = body.scopes ?? null;
      const beyond = requested === null ? (own === null ? [] : ['every scope']) : missingScopes(own, requested);
      if (beyond.length) throw insufficientScope(`A key can only make keys with scopes it holds; this one lacks ${beyond.join(', ')}.`);
      const expiresAt = body.expiresAt ? new Date(body.expiresAt) : null;
      // A key made by a key is its member's, as the first one: never beyond their role.
      const createdBy = memberOf(currentActor());
      const { apiKey, secret } = await createApiKey(db, account(ctx).id, body.name, { scopes: requested, expiresAt, createdBy });
      return { ...presentApiKey(apiKey), secret };
    },
  );

  route(
    {
      method: 'get',
      path: '/api-keys',
      operationId: 'listApiKeys',
      tag,
      summary: 'List the account’s API keys, newest first, revoked ones included (never their secrets)',
      response: ApiKeyListSchema,
      responseDescription: 'Every key of the account',
      errors: [401],
    },
    async (_input, ctx) => ({ data: (await listApiKeys(db, account(ctx).id)).reverse().map(presentApiKey) }),
  );

  route(
    {
      method: 'delete',
      path: '/api-keys/{id}',
      operationId: 'revokeApiKey',
      tag,
      summary: 'Revoke an API key: it stops working at once, for good',
      description: 'Revoking a revoked key changes nothing and answers it again. The key making the request may revoke itself.',
      params: ApiKeyIdParams,
      response: ApiKeySchema,
      responseDescription: 'The revoked key',
      errors: [401, 404],
    },
    async ({ params }, ctx) => presentApiKey(await revokeApiKey(db, params.id, account(ctx).id)),
  );
}
