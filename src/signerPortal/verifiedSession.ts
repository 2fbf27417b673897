import crypto from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config';
import { AppError } from '../errors';
import { hashToken, loadTokenSecret } from '../signingRequests/tokens';
import type { SigningContext } from '../signingRequests/links';

// What a signer who gave the right code holds: a cookie scoped to their link's path (/sign/<token>), so
// every endpoint of that link sees it and nothing else does. It is stateless: the expiry and an HMAC
// of the signer, the link and the expiry, so it opens only that signer's page on that request.

const COOKIE = 'signet_verified';
const SESSION_HOURS = 12;

export function verifiedSessions(config: Pick<Config, 'SIGNING_TOKEN_SECRET' | 'dataDir' | 'NODE_ENV' | 'publicUrl'>) {
  const key = crypto.createHmac('sha256', loadTokenSecret(config.SIGNING_TOKEN_SECRET, config.dataDir)).update('signer-session').digest();
  const mac = (signerId: string, token: string, expiresAt: string) =>
    crypto
      .createHmac('sha256', key)
      .update(`${signerId}:${hashToken(token)}:${expiresAt}`)
      .digest('base64url');
  const secure = () => config.NODE_ENV === 'production' || config.publicUrl.startsWith('https:');
  /** Whether this browser gave the right code for this signer through this link, within the session's hours. */
  const holds = (ctx: Context, signerId: string, token: string): boolean => {
    const [expiresAt, signature] = (ctx.cookies.get(COOKIE) ?? '').split('.');
    if (!expiresAt || !signature || !/^[0-9]{1,15}$/.test(expiresAt) || Number(expiresAt) <= Date.now()) return false;
    const expected = Buffer.from(mac(signerId, token, expiresAt));
    const given = Buffer.from(signature);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  };

  return {
    /** Sets the cookie on the answer to a right code. */
    start(ctx: Context, signerId: string, token: string) {
      const expiresAt = String(Date.now() + SESSION_HOURS * 3_600_000);
      const parts = [
        `${COOKIE}=${expiresAt}.${mac(signerId, token, expiresAt)}`,
        `Path=/sign/${token}`,
        'HttpOnly',
        'SameSite=Strict',
        `Max-Age=${SESSION_HOURS * 3600}`,
      ];
      if (secure()) parts.push('Secure');
      ctx.append('Set-Cookie', parts.join('; '));
    },

    holds,

    /**
     * Whether the page of this link may see the request: an embedded session by its own record (its page
     * holds the token in memory, and a framed page may get no cookie), any other link by this browser's cookie.
     */
    verified(ctx: Context, { signer, embeddedSession }: Pick<SigningContext, 'signer' | 'embeddedSession'>, token: string): boolean {
      return embeddedSession ? embeddedSession.verified : holds(ctx, signer.id, token);
    },
  };
}

export type VerifiedSessions = ReturnType<typeof verifiedSessions>;

/** The answer of every signer endpoint (but the verification's own) until the signer has given their code. */
export const verificationRequired = () =>
  new AppError(
    401,
    'verification_required',
    'Give the code that proves who you are first (POST /sign/{token}/verification); until then nothing of the request is shown.',
  );
