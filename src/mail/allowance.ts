import { hourlyEmailLimit, type Plan } from '../domain/plans';
import type { Db } from '../db';
import { hourlyLimitReached } from '../errors';
import { lockAccount } from '../accounts/store';
import { countMail, countMailSince, databaseNow, forgetMailBefore, nthMailSince } from './store';

const HOUR_MS = 60 * 60 * 1000;

/** The account a signing request's e-mails are sent for. */
export interface MailSender {
  id: string;
  plan: Plan;
}

/**
 * An account's e-mails in the sliding hour (its plan's emailsPerHour, times RATE_LIMIT_MULTIPLIER),
 * counted in account_mail_log by each e-mail's idempotency key, so that a retried send counts once.
 * Opened in the caller's transaction with the account's row locked: concurrent senders of one account
 * (api processes making requests, workers sending reminders) take their turn, and never more than is
 * left. What the account owes (see countOwedMail) counts without being refused. Without `lock`, only a
 * look (to refuse early what plainly cannot go): nothing may be taken then.
 */
export async function openMailHour(trx: Db, account: MailSender, multiplier: number, { lock = true } = {}) {
  if (lock) await lockAccount(trx, account.id);
  // The database's clock (the transaction's start), which also stamps what is counted.
  const now = await databaseNow(trx);
  const hourAgo = new Date(now.getTime() - HOUR_MS);
  if (lock) await forgetMailBefore(trx, account.id, hourAgo);
  const counted = await countMailSince(trx, account.id, hourAgo);
  const limit = hourlyEmailLimit(account.plan, multiplier);
  const remaining = Math.max(0, limit - counted);
  /** When `count` more e-mails fit: as soon as enough of those counted have left the hour. */
  const fitsAt = async (count: number) => {
    const leaving = Math.min(counted, count - remaining);
    const leftAt = leaving > 0 ? await nthMailSince(trx, account.id, hourAgo, leaving) : undefined;
    return new Date((leftAt ?? now).getTime() + HOUR_MS);
  };

  /** Counts the e-mails keyed `keys`; the caller took no more than `remaining`. */
  const take = async (keys: string[]) => {
    if (keys.length === 0) return;
    await countMail(trx, account.id, keys, now);
  };

  return {
    now,
    limit,
    remaining,
    fitsAt,
    take,
    /** Counts all of them, or none: a 429 with the rate-limit headers when they do not fit. `what` says what they are. */
    async takeAll(keys: string[], what: string) {
      if (keys.length > remaining) {
        const retryAt = await fitsAt(keys.length);
        const message =
          `${what} would send ${keys.length} e-mail(s); the ${account.plan} plan sends ${limit} an hour and ${remaining} are left. ` +
          (keys.length > limit ? 'That is more than an hour allows.' : `They fit from ${retryAt.toISOString()}.`);
        throw hourlyLimitReached(message, { limit, remaining, resetAt: await fitsAt(remaining + 1), retryAt });
      }
      await take(keys);
    },
  };
}

export type MailHour = Awaited<ReturnType<typeof openMailHour>>;

/** An e-mail the account owes (a later invitation, a closing mail): counted in the hour, never refused. */
export async function countOwedMail(db: Db, accountId: string, key: string) {
  await countMail(db, accountId, [key]);
}

/** The 429 of an account whose hour has no e-mail left. */
export const mailHourSpent = (plan: Plan, limit: number, retryAt: Date) =>
  hourlyLimitReached(`The ${plan} plan sends ${limit} e-mails an hour and none are left: the next can go at ${retryAt.toISOString()}.`, {
    limit,
    remaining: 0,
    resetAt: retryAt,
    retryAt,
  });
