import type { Middleware } from 'koa';
import proxyAddr from 'proxy-addr';

/**
 * With TRUST_PROXY set: ctx.ip is the connecting address, or, when that is a proxy named there, the
 * address that proxy (and any trusted proxy before it) says it forwarded for. Nobody else's
 * X-Forwarded-For counts. Without it, Koa's own ctx.ip (proxy off) is already the connecting address.
 */
export function clientAddress(trustedProxies: string[]): Middleware {
  const trust = proxyAddr.compile(trustedProxies);
  return async (ctx, next) => {
    ctx.request.ip = proxyAddr(ctx.req, trust);
    await next();
  };
}
