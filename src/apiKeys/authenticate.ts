import type { Middleware } from 'koa';
import type { ApiKeyAuthenticator } from './cache';
import { emailUnverified, unauthorized } from '../errors';
import { actingAs } from '../events/actingAs';

// An account whose address is not proven yet (a console sign-up before its link) only reads: whatever
// writes may send mail or reach others under that address, and refusing every write keeps a new endpoint
// safe without anyone remembering to list it.
const READS = new Set(['GET', 'HEAD']);

export function authenticate(apiKeys: ApiKeyAuthenticator): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    if (!header) throw unauthorized('Missing Authorization header: send Authorization: Bearer <API_KEY>.');
    const match = /^Bearer ([^\s]+)$/.exec(header);
    if (!match) throw unauthorized('Malformed Authorization header: expected Bearer <API_KEY>.');
    const result = await apiKeys.authenticate(match[1]);
    if (!result) throw unauthorized('Unknown or revoked API key.');
    // Here, not in the lookup: a key found in the cache a second before its expiry is refused a second after.
    if (result.expiresAt && result.expiresAt.getTime() <= Date.now()) {
      throw unauthorized(`This API key expired at ${result.expiresAt.toISOString()}: make a new one (POST /api/v1/api-keys or the console).`);
    }
    ctx.state.account = result.account;
    ctx.state.apiKeyId = result.keyId;
    ctx.state.apiKeyScopes = result.scopes; // checked per operation by the route kit (src/api/scopes.ts)
    if (!result.account.emailVerified && !READS.has(ctx.method)) throw emailUnverified();
    await actingAs(result.actor, next);
  };
}
