import type { Middleware } from 'koa';
import proxyAddr from 'proxy-addr';

/**
 * ctx.ip is the connecting address, or, when that is a proxy named in TRUST_PROXY, the address that
 * proxy (and any trusted proxy before it) says it forwarded for. Nobody else's X-Forwarded-For counts.
 */
export function clientAddress(trustedProxies: string[]): Middleware {
  const trust = proxyAddr.compile(trustedProxies);
  return async (ctx, next) => {
    ctx.request.ip = trustedProxies.length ? proxyAddr(ctx.req, trust) : (ctx.req.socket.remoteAddress ?? '');
    await next();
  };
}
