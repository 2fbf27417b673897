import crypto from 'node:crypto';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../db';
import { rateLimitExceeded } from '../errors';
import { normalizeEmail } from '../members/people';

// The REST API's limiter keys a client address the same way (public verification).
export { clientKey } from '../api/middleware/clientAddress';

// The console's own limits (sign-ups, log-ins, reset links): counts per key in fixed windows, kept in
// PostgreSQL's rate_limits table like the REST API's, so every api process shares them.

export const windowLimiter = (db: Db, keyPrefix: string, points: number, seconds: number) =>
  new RateLimiterPostgres({ storeClient: db, storeType: 'knex', tableName: 'rate_limits', tableCreated: true, keyPrefix, points, duration: seconds });

/** An e-mail as a limiter key: one per person whatever the letter case, and not the address itself. */
export const emailKey = (email: string) => crypto.createHash('sha256').update(normalizeEmail(email)).digest('hex');

/** 429 with Retry-After: "<what> Try again in N minutes." */
export function tooMany(what: string, msBeforeNext: number) {
  const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return rateLimitExceeded(`${what} Try again in ${Math.ceil(retryAfter / 60)} minutes.`, { 'Retry-After': String(retryAfter) });
}

/** Counts one attempt on each [limiter, key] in turn; past any of them, `what` as a 429. */
export async function countAttempt(what: string, ...counts: [RateLimiterPostgres, string][]) {
  try {
    for (const [limiter, key] of counts) await limiter.consume(key);
  } catch (refused) {
    if (!(refused instanceof RateLimiterRes)) throw refused;
    throw tooMany(what, refused.msBeforeNext);
  }
}
