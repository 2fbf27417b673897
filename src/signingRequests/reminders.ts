import { hourlyLimitReached } from '../errors';

/** The idempotency keys of the e-mails with a signer's link (also their keys in the account's hour of e-mails). */
export const invitationMailKey = (signerId: string) => `invitation:${signerId}:0`;
export const reminderMailKey = (signerId: string, round: number) => `reminder:${signerId}:${round}`;

/** A signer gets at most one e-mail with their link an hour: a reminder waits this long after the invitation or the last reminder. */
export const REMINDER_GAP_MS = 60 * 60 * 1000;

/**
 * Of `signers` (in signing order), those a reminder may go to at `now`, and when the first of the
 * others may have one (null when none waits). A signer not invited yet is neither: their invitation is
 * on its way. Scheduled reminders and reminders asked for through the API or the console go by this
 * one rule.
 */
export function remindable<T extends { lastMailedAt: Date | null }>(signers: T[], now: Date) {
  const invited = signers.filter((signer) => signer.lastMailedAt !== null);
  const mayGoAt = (signer: T) => signer.lastMailedAt!.getTime() + REMINDER_GAP_MS;
  const ready = invited.filter((signer) => mayGoAt(signer) <= now.getTime());
  const waiting = invited.filter((signer) => mayGoAt(signer) > now.getTime()).map(mayGoAt);
  return { ready, nextAt: waiting.length ? new Date(Math.min(...waiting)) : null };
}

/** The 429 of a remind that finds every signer reminded (or invited) within the hour. */
export const remindedWithinTheHour = (nextAt: Date) =>
  hourlyLimitReached(
    `Each signer gets at most one e-mail with their link an hour, the invitation included: the next reminder can go at ${nextAt.toISOString()}.`,
    {
      limit: 1,
      remaining: 0,
      resetAt: nextAt,
      retryAt: nextAt,
    },
  );
