import Router, { type RouterOptions } from '@koa/router';

/**
 * Every router of the app is made here, case-sensitive. @koa/router compiles a route's path with
 * path-to-regexp, which ignores case unless `sensitive`, but turns a `router.use()` middleware (an API
 * key check, the console's session and CSRF check, a loopback check) into a RegExp of its own that
 * never ignores case: on a router left case-insensitive, /DEV/MAIL matched the route and skipped its
 * guard. Case-sensitive, a guard and the routes it covers see one path the same way; the app refuses
 * other spellings of a path (`//`, dot segments, encoded slashes) before any router (canonicalPath.ts).
 */
export function createRouter(options: Omit<RouterOptions, 'sensitive'> = {}) {
  return new Router({ ...options, sensitive: true });
}
