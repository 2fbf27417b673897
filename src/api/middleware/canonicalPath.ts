import type { Middleware } from 'koa';

// A byte that has a spelling of its own in a path: unreserved characters (RFC 3986), and the slash and
// backslash, which decoded would cut the path differently than it reads.
const UNRESERVED_OR_SEPARATOR = /[A-Za-z0-9\-._~/\\]/;

/**
 * Whether a raw (undecoded) request path is spelled the one way our routers and their guards read it:
 * it starts with `/`, has no empty segment but an optional trailing slash, no `.` or `..` segment, no
 * backslash, and percent-encodes only what must be, each `%` with two hex digits. `%2e`, `%2F`, `%5C`
 * and `%61` are refused, not decoded: what another component (a proxy, a file server) would make of them
 * is not ours to guess, and no client of ours sends them.
 */
export function isCanonicalPath(path: string): boolean {
  if (!path.startsWith('/') || path.includes('\\')) return false;
  const segments = path.slice(1).split('/');
  if (segments.at(-1) === '') segments.pop(); // a trailing slash: the routes take it or leave it, guards alike
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..') return false;
    for (const [escape] of segment.matchAll(/%(.{0,2})/g)) {
      if (!/^%[0-9A-Fa-f]{2}$/.test(escape)) return false;
      if (UNRESERVED_OR_SEPARATOR.test(String.fromCharCode(parseInt(escape.slice(1), 16)))) return false;
    }
  }
  return true;
}

/**
 * First in the app, before any router: a path that is not canonical is answered 404 (the same answer,
 * in the usual error body, as any path no route has), so no router and no guard ever sees another spelling.
 */
export function canonicalPath(): Middleware {
  return async (ctx, next) => {
    if (isCanonicalPath(ctx.path)) await next();
  };
}
