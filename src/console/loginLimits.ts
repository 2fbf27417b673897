import crypto from 'node:crypto';
import type { Context } from 'koa';
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Db } from '../db';
import { clientKey, emailKey, tooMany, windowLimiter } from './limits';
import { findLogin, passwordMatches, type Login, type User } from '../members/people';
import type { Sessions } from './sessions';
import { deleteRateLimits } from '../members/peopleStore';

// Console logins. Every attempt takes its points before the password is checked, each in one atomic
// statement (INSERT … ON CONFLICT DO UPDATE … RETURNING), so parallel guesses cannot all pass a count
// read before any of them was added; a right password gives them back. Who is limited (OWASP: locking an
// account out for everyone lets anyone lock its owner out):
// - a client address guessing one person's password, and a client address trying many e-mails;
// - guesses for one e-mail from any number of client addresses, together: past that, only a browser the
//   person has logged in from before is let in (its signed device cookie, OWASP's "device cookies");
// - such a browser counts its own failures, and no other count applies to it: no stranger can lock an
//   owner out of their own browser. Its cookie names the password it was trusted under: after a reset,
//   whoever's browser it was (a squatter's, a lost laptop's) is a stranger again.
// A successful password reset clears the counts of its e-mail (it proves the inbox).

const WINDOW_SECONDS = 15 * 60;
export const FAILED_LOGINS_PER_EMAIL_AND_CLIENT = 10;
export const FAILED_LOGINS_PER_CLIENT = 100;
export const FAILED_LOGINS_PER_EMAIL = 50;
export const FAILED_LOGINS_PER_DEVICE = 10;

interface Count {
  limiter: RateLimiterPostgres;
  key: string;
  /** Why it refuses, for the 429's message. */
  refusal: string;
  /** A right password clears it (the failures of this client for this person) or only gives its point back. */
  onSuccess: 'clear' | 'give back';
}

/** Names a password without telling anything of it: its hash's hash, shortened. */
const stampOf = (login: Login) =>
  crypto
    .createHash('sha256')
    .update(login.passwordHash ?? '')
    .digest('base64url')
    .slice(0, 16);

export function createLoginLimits(db: Db, sessions: Sessions) {
  const byEmailAndClient = windowLimiter(db, 'console-login-email-client', FAILED_LOGINS_PER_EMAIL_AND_CLIENT, WINDOW_SECONDS);
  const byClient = windowLimiter(db, 'console-login-client', FAILED_LOGINS_PER_CLIENT, WINDOW_SECONDS);
  const byEmail = windowLimiter(db, 'console-login-email', FAILED_LOGINS_PER_EMAIL, WINDOW_SECONDS);
  const byDevice = windowLimiter(db, 'console-login-device', FAILED_LOGINS_PER_DEVICE, WINDOW_SECONDS);

  function countsFor(ctx: Context, email: string, login: Login | undefined): Count[] {
    const device = sessions.trustedDevice(ctx);
    if (login && device?.userId === login.user.id && device.stamp === stampOf(login)) {
      return [{ limiter: byDevice, key: `${login.user.id}:${device.id}`, refusal: 'Too many failed attempts.', onSuccess: 'clear' }];
    }
    const [person, client] = [emailKey(email), clientKey(ctx.ip)];
    return [
      { limiter: byEmailAndClient, key: `${person}:${client}`, refusal: 'Too many failed attempts.', onSuccess: 'clear' },
      { limiter: byClient, key: client, refusal: 'Too many failed attempts from this network.', onSuccess: 'give back' },
      {
        limiter: byEmail,
        key: person,
        refusal:
          'Too many failed attempts for this e-mail from elsewhere. Log in from a browser you have logged in from before, or set a new password with “Forgot your password?”.',
        onSuccess: 'give back',
      },
    ];
  }

  return {
    /**
     * The person with this e-mail and password, or null (the failure stays counted). 429 with
     * Retry-After past a limit, before the password is checked, whether or not the e-mail is known.
     * A success marks this browser as the person's.
     */
    async logIn(ctx: Context, email: string, password: string): Promise<User | null> {
      const login = await findLogin(db, { email });
      const counts = countsFor(ctx, email, login);
      for (const count of counts) {
        try {
          await count.limiter.consume(count.key);
        } catch (refused) {
          if (!(refused instanceof RateLimiterRes)) throw refused;
          throw tooMany(count.refusal, refused.msBeforeNext);
        }
      }
      const matches = await passwordMatches(login, password); // scrypt's work whether or not the e-mail is known
      if (!login || !matches) return null;
      await Promise.all(counts.map((count) => (count.onSuccess === 'clear' ? count.limiter.delete(count.key) : count.limiter.reward(count.key, 1))));
      sessions.trustDevice(ctx, login.user.id, stampOf(login));
      return login.user;
    },

    /** Marks this browser as the person's after they proved who they are another way (a sign-up, a reset). */
    async trustBrowser(ctx: Context, user: User) {
      const login = await findLogin(db, { userId: user.id });
      if (login) sessions.trustDevice(ctx, user.id, stampOf(login));
    },

    /** Forgets the failed logins for this person's e-mail, from every client and browser. */
    async clear(user: User) {
      const person = emailKey(user.email);
      await deleteRateLimits(db, byEmail.getKey(person), [`${byEmailAndClient.getKey(person)}:`, `${byDevice.getKey(user.id)}:`]);
    },
  };
}

export type LoginLimits = ReturnType<typeof createLoginLimits>;
