import ipaddr from 'ipaddr.js';
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

/**
 * A client address as a limiter key: IPv4 as it is (also when mapped into IPv6), IPv6 by its /64, the
 * network one subscriber is given, inside which changing address costs nothing.
 */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return address;
  const ipv6 = parsed as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress()) return ipv6.toIPv4Address().toString();
  return `${ipv6.parts
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}
