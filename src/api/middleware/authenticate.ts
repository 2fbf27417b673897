import type { Middleware } from 'koa';
import type { ApiKeyAuthenticator } from '../../apiKeys/cache';
import { unauthorized } from '../../errors';

export function authenticate(apiKeys: ApiKeyAuthenticator): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    if (!header) throw unauthorized('Missing Authorization header: send Authorization: Bearer <API_KEY>.');
    const match = /^Bearer ([^\s]+)$/.exec(header);
    if (!match) throw unauthorized('Malformed Authorization header: expected Bearer <API_KEY>.');
    const result = await apiKeys.authenticate(match[1]);
    if (!result) throw unauthorized('Unknown or revoked API key.');
    ctx.state.account = result.account;
    ctx.state.apiKeyId = result.keyId;
    await next();
  };
}
