import type { Middleware } from 'koa';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../../db';
import { hourlyLimit, type Plan, type RateLimitedOperation } from '../../domain/plans';
import { rateLimitExceeded, rateLimitHeaders, retryAfterHeader } from '../../errors';

const HOUR_SECONDS = 3600;

// Hourly fixed windows per account and operation (limits in src/domain/plans.ts), counted in PostgreSQL so that every
// api process shares them. `multiplier` lets operators (and the benchmark) raise every limit.
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

  return function rateLimit(operation: RateLimitedOperation): Middleware {
    return async (ctx, next) => {
      const account: { id: string; plan: Plan } = ctx.state.account;
      const limiter = limiterFor(operation, account.plan);
      let result: RateLimiterRes;
      let limited = false;
      try {
        result = await limiter.consume(account.id);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        result = rejection;
        limited = true;
      }
      const resetAt = new Date(Date.now() + result.msBeforeNext);
      const headers = rateLimitHeaders({ limit: limiter.points, remaining: result.remainingPoints, resetAt });
      if (limited) {
        const retry = retryAfterHeader(resetAt);
        throw rateLimitExceeded(
          `Rate limit of ${limiter.points} requests per hour for ${operation} exceeded on the ${account.plan} plan. Retry in ${retry['Retry-After']} s.`,
          { ...headers, ...retry },
        );
      }
      ctx.set(headers);
      await next();
    };
  };
}

export type RateLimit = ReturnType<typeof createRateLimiter>;
