import crypto from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config';
import type { Db } from '../db';
import { loadTokenSecret } from '../signingRequests/tokens';
import { hashLinkToken, newLinkToken } from '../members/linkTokens';
import { deleteSession, findLiveSession, insertSession } from '../members/peopleStore';

// Console sessions. The cookie holds a random token and its HMAC (so a forged cookie costs no lookup);
// the database holds only the token's SHA-256, so a leaked table opens no session.
// CSRF: every form carries a token derived from what the browser's cookies bind it to (the session, or
// before login a random pre-session nonce); a cross-site page can read neither cookie nor token.

export const SESSION_COOKIE = 'signet_session';
export const PRE_SESSION_COOKIE = 'signet_presession';
/** A browser a person has logged in from (OWASP's device cookie): its failed logins are counted apart from strangers'. */
export const DEVICE_COOKIE = 'signet_device';
const SESSION_DAYS = 14;
const DEVICE_DAYS = 365;
const COOKIE_PATH = '/app';

export interface Session {
  tokenHash: string;
  userId: string;
}

/** CONSOLE_SESSION_SECRET, else a key derived from the signing-token secret (generated into DATA_DIR outside production). */
export function consoleSecret(config: Pick<Config, 'CONSOLE_SESSION_SECRET' | 'SIGNING_TOKEN_SECRET' | 'dataDir'>): Buffer {
  if (config.CONSOLE_SESSION_SECRET) return Buffer.from(config.CONSOLE_SESSION_SECRET, 'utf8');
  return crypto.createHmac('sha256', loadTokenSecret(config.SIGNING_TOKEN_SECRET, config.dataDir)).update('console-session').digest();
}

/** One Set-Cookie value. Written by hand: Koa's cookies refuse `Secure` behind a TLS-terminating proxy. */
export function serializeCookie(name: string, value: string, options: { secure: boolean; maxAgeSeconds?: number }) {
  const parts = [`${name}=${value}`, `Path=${COOKIE_PATH}`, 'HttpOnly', 'SameSite=Lax'];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

export function createSessions(db: Db, config: Config) {
  const secret = consoleSecret(config);
  const secure = config.NODE_ENV === 'production' || config.publicUrl.startsWith('https:');
  const mac = (purpose: string, value: string) => crypto.createHmac('sha256', secret).update(`${purpose}:${value}`).digest('base64url');
  const equal = (a: string, b: string) => a.length === b.length && crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));

  /** The value of a signed cookie, or undefined when it is missing or its signature is wrong. */
  const readSigned = (ctx: Context, name: string) => {
    const [value, signature] = (ctx.cookies.get(name) ?? '').split('.');
    return value && signature && equal(signature, mac(name, value)) ? value : undefined;
  };
  const setSigned = (ctx: Context, name: string, value: string, maxAgeSeconds?: number) =>
    ctx.append('Set-Cookie', serializeCookie(name, `${value}.${mac(name, value)}`, { secure, maxAgeSeconds }));

  return {
    async start(ctx: Context, userId: string): Promise<Session> {
      const token = newLinkToken();
      const tokenHash = hashLinkToken(token);
      await insertSession(db, { tokenHash, userId, expiresAt: new Date(Date.now() + SESSION_DAYS * 86_400_000) });
      setSigned(ctx, SESSION_COOKIE, token, SESSION_DAYS * 86_400);
      return { tokenHash, userId };
    },

    async current(ctx: Context): Promise<Session | undefined> {
      const token = readSigned(ctx, SESSION_COOKIE);
      if (!token) return undefined;
      const row = await findLiveSession(db, hashLinkToken(token));
      return row ? { tokenHash: row.token_hash, userId: row.user_id } : undefined;
    },

    async end(ctx: Context, session: Session | undefined) {
      if (session) await deleteSession(db, session.tokenHash);
      ctx.append('Set-Cookie', serializeCookie(SESSION_COOKIE, '', { secure, maxAgeSeconds: 0 }));
    },

    /**
     * Marks this browser as one the person proved to be themselves on (a login, a sign-up, a reset).
     * `stamp` names their current password: a new one (a reset) makes every older cookie a stranger's.
     */
    trustDevice(ctx: Context, userId: string, stamp: string) {
      const known = this.trustedDevice(ctx);
      const id = known?.userId === userId ? known.id : crypto.randomBytes(16).toString('base64url');
      setSigned(ctx, DEVICE_COOKIE, `${userId}~${id}~${stamp}`, DEVICE_DAYS * 86_400);
    },

    /** The person this browser has logged in as before, the browser's id and the password's stamp then, from its signed device cookie. */
    trustedDevice(ctx: Context): { userId: string; id: string; stamp: string } | undefined {
      const [userId, id, stamp] = (readSigned(ctx, DEVICE_COOKIE) ?? '').split('~');
      return userId && id && stamp ? { userId, id, stamp } : undefined;
    },

    /** The CSRF token of this browser: bound to its session, or else to a pre-session nonce set now if missing. */
    csrfToken(ctx: Context, session: Session | undefined): string {
      if (session) return mac('csrf-session', session.tokenHash);
      let nonce = readSigned(ctx, PRE_SESSION_COOKIE);
      if (!nonce) {
        nonce = crypto.randomBytes(16).toString('base64url');
        setSigned(ctx, PRE_SESSION_COOKIE, nonce);
      }
      return mac('csrf-presession', nonce);
    },

    csrfMatches: (expected: string, presented: unknown) => typeof presented === 'string' && equal(expected, presented),
  };
}

export type Sessions = ReturnType<typeof createSessions>;
