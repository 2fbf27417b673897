import type { Middleware } from 'koa';
import type { Db } from '../../db';
import { authenticateApiKey } from '../../apiKeys/service';
import { unauthorized } from '../../errors';

export function authenticate(db: Db): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    if (!header) throw unauthorized('Missing Authorization header: send Authorization: Bearer <API_KEY>.');
    const match = /^Bearer ([^\s]+)$/.exec(header);
    if (!match) throw unauthorized('Malformed Authorization header: expected Bearer <API_KEY>.');
    const result = await authenticateApiKey(db, match[1]);
    if (!result) throw unauthorized('Unknown or revoked API key.');
    ctx.state.account = result.account;
    ctx.state.apiKeyId = result.keyId;
    await next();
  };
}
