import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Account } from '../accounts/service';
import type { RateLimit } from '../api/middleware/rateLimit';
import type { RouteDeps } from '../api/routeDeps';
import type { DashboardBackend } from '../dashboard/backend';
import type { SearchBackend } from '../search/backend';
import type { Webhooks } from '../webhooks/setup';
import type { LoginLimits } from './loginLimits';
import type * as pages from './pages';
import type { User } from '../members/people';
import type { Sessions } from './sessions';

// The console's shared kit: what routes.ts gives each area of the console (requests, templates,
// webhooks…), in a file of its own so that the areas and routes.ts do not import each other.

/** The REST API's dependencies, less what only the REST API has (its router and OpenAPI registry). */
export type ConsoleDeps = Omit<RouteDeps, 'router' | 'openapi'> & { search: SearchBackend; dashboard: DashboardBackend; webhooks: Webhooks };

/** What an area of the console (requests, templates, webhooks) is given to register its pages. */
export interface ConsoleKit {
  router: Router;
  deps: ConsoleDeps;
  /** The REST API's per-plan rate limiter, keyed by the session's account. */
  rateLimit: RateLimit;
  /** A logged-in person; a write (any POST) also needs the account's address proven. */
  requireLogin: Middleware;
  /** A logged-in person, proven address or not: for API keys and the verification's own forms. */
  requireLoginOnly: Middleware;
  frame: (ctx: Context, current?: string) => pages.Frame;
  page: (ctx: Context, body: string, status?: number) => void;
  account: (ctx: Context) => Account;
  /** The logged-in person, if any. */
  user: (ctx: Context) => User | undefined;
  /** The urlencoded form body (already parsed by the CSRF check). */
  form: (ctx: Context) => Record<string, string>;
  /** After a form post: 303 to the page that shows its result. */
  seeOther: (ctx: Context, location: string) => void;
  /** The console's sessions: start one when a person proves who they are. */
  sessions: Sessions;
  /** Password checks with their limits on failures. */
  logins: LoginLimits;
}

export const seeOther = (ctx: Context, location: string) => {
  ctx.status = 303;
  ctx.redirect(location);
};
