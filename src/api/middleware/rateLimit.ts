import type { Context, Middleware } from 'koa';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../../db';
import { hourlyLimit, type Plan, type RateLimitedOperation } from '../../domain/plans';
import { rateLimitExceeded, rateLimitHeaders, retryAfterHeader } from '../../errors';
import { clientKey } from './clientAddress';

const HOUR_SECONDS = 3600;

// Hourly fixed windows per account and operation (limits in src/domain/plans.ts), counted in PostgreSQL so that every
// api process shares them. `multiplier` lets operators (and the benchmark) raise every limit. Routes without an
// account (public verification) are limited per client address instead (`rateLimit.perClientAddress`).
export function createRateLimiter(db: Db, multiplier: number) {
  const limiters = new Map<string, RateLimiterPostgres>();
  const limiterFor = (operation: RateLimitedOperation, plan: Plan) => {
    const key = `${operation}|${plan}`;
    let limiter = limiters.get(key);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: db,
        storeType: 'knex',
        tableName: 'rate_limits',
        tableCreated: true,
        keyPrefix: `${operation}|${plan}`,
        points: hourlyLimit(plan, operation, multiplier),
        duration: HOUR_SECONDS,
      });
      limiters.set(key, limiter);
    }
    return limiter;
  };

  /** Counts one request on `key`: the rate headers set, or 429 with them and Retry-After, its message `exceeded` and when to retry. */
  async function consume(ctx: Context, limiter: RateLimiterPostgres, key: string, exceeded: string) {
    let result: RateLimiterRes;
    let limited = false;
    try {
      result = await limiter.consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      result = rejection;
      limited = true;
    }
    const resetAt = new Date(Date.now() + result.msBeforeNext);
    const headers = rateLimitHeaders({ limit: limiter.points, remaining: result.remainingPoints, resetAt });
    if (limited) {
      const retry = retryAfterHeader(resetAt);
      throw rateLimitExceeded(`${exceeded} Retry in ${retry['Retry-After']} s.`, { ...headers, ...retry });
    }
    ctx.set(headers);
  }

  function rateLimit(operation: RateLimitedOperation): Middleware {
    return async (ctx, next) => {
      const account: { id: string; plan: Plan } = ctx.state.account;
      const limiter = limiterFor(operation, account.plan);
      await consume(ctx, limiter, account.id, `Rate limit of ${limiter.points} requests per hour for ${operation} exceeded on the ${account.plan} plan.`);
      await next();
    };
  }

  /** `pointsPerHour` requests an hour per client address (an IPv6 address by its /64) for `name`, a route without an account. */
  rateLimit.perClientAddress = (name: string, pointsPerHour: number): Middleware => {
    let limiter: RateLimiterPostgres | undefined; // made on first use, as limiterFor's: declaring a route touches no database
    return async (ctx, next) => {
      limiter ??= new RateLimiterPostgres({
        storeClient: db,
        storeType: 'knex',
        tableName: 'rate_limits',
        tableCreated: true,
        keyPrefix: `${name}|address`,
        points: pointsPerHour,
        duration: HOUR_SECONDS,
      });
      await consume(ctx, limiter, clientKey(ctx.ip), `Rate limit of ${pointsPerHour} requests per hour from one client address for ${name} exceeded.`);
      await next();
    };
  };
  return rateLimit;
}

export type RateLimit = ReturnType<typeof createRateLimiter>;
