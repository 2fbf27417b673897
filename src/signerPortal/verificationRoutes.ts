import type { Context } from 'koa';
import type { Config } from '../config';
import type { Db } from '../db';
import type { EventLog } from '../events/service';
import type { Logger } from '../logger';
import { AppError, conflict, rateLimitExceeded, retryAfterHeader } from '../errors';
import { createMailTransport, mailSender } from '../mail';
import { verificationCodeMail } from '../mail/templates';
import { mailBrandOfAccount } from '../accounts/branding';
import { markEmbeddedSessionVerified } from '../signingRequests/embed';
import { loadTokenSecret, verificationKey } from '../signingRequests/tokens';
import { findSignerVerification } from '../signingRequests/verificationStore';
import {
  issueEmailCode,
  lockOf,
  tellSendersOfLocks,
  tryVerificationCode,
  EMAIL_CODE_EVERY_MS,
  type VerificationLock,
  type Verifying,
} from '../signingRequests/verification';
import type { routesOn } from '../api/route';
import { TokenParams, VerificationStateSchema, VerifySchema } from './schema';
import { assertCanAct, resolveSigningToken, type SigningContext } from '../signingRequests/links';
import type { VerifiedSessions } from './verifiedSession';

type Route = ReturnType<typeof routesOn>;
type ClientOf = (ctx: Context) => { ipAddress: string; userAgent?: string };

// Past every allowed try, waiting is no use: no Retry-After, and the signer is told whom to turn to.
const locked = ({ lockedUntil, untilSenderActs }: VerificationLock) =>
  untilSenderActs
    ? new AppError(
        429,
        'verification_locked',
        'Too many wrong codes: this page stays locked until the sender sends you the link again. Contact the person who sent you this request.',
        { extra: { lockedUntil: lockedUntil.toISOString(), lockedUntilSenderActs: true } },
      )
    : new AppError(429, 'verification_locked', `Five wrong codes: this page is locked until ${lockedUntil.toISOString()}. The sender has been told.`, {
        headers: retryAfterHeader(lockedUntil),
        extra: { lockedUntil: lockedUntil.toISOString(), lockedUntilSenderActs: false },
      });

/** "for 1 hour", "for 15 minutes", or "until the sender sends you the link again". */
const lockLength = (lockMs: number | null) => {
  if (lockMs === null) return 'until the sender sends you the link again';
  const minutes = lockMs / 60_000;
  if (minutes < 60) return `for ${minutes} minutes`;
  return minutes === 60 ? 'for 1 hour' : `for ${minutes / 60} hours`;
};

/** "ada@example.com" as "a••@example.com": enough for the signer to know where to look, not an address to harvest. */
const maskedEmail = (email: string) => {
  const [local, domain] = [email.slice(0, email.lastIndexOf('@')), email.slice(email.lastIndexOf('@') + 1)];
  return `${local.slice(0, 1)}${'•'.repeat(Math.max(2, local.length - 1))}@${domain}`;
};

const verifying = ({ request, signer, documents }: SigningContext): Verifying => ({
  accountId: request.accountId,
  requestId: request.id,
  requestExpiresAt: request.expiresAt,
  signer: { id: signer.id, name: signer.name, email: signer.email },
  documents,
});

/**
 * The signer's verification, the only endpoints of a link that answer before it: what the signer must
 * give, a new e-mailed code, and a try. A right try sets the page's session (verifiedSession.ts).
 */
export function verificationRoutes({
  route,
  signerSide,
  db,
  events,
  config,
  logger,
  sessions,
  client,
}: {
  route: Route;
  signerSide: { tag: string; params: typeof TokenParams; servers: { url: string }[]; security: never[] };
  db: Db;
  events: EventLog;
  config: Config;
  logger: Logger;
  sessions: VerifiedSessions;
  client: ClientOf;
}) {
  const key = verificationKey(loadTokenSecret(config.SIGNING_TOKEN_SECRET, config.dataDir));
  const mail = createMailTransport(config, db);
  const sender = mailSender(config);
  // After the lock has committed with its event; a failure here is the sweeper's to retry.
  const tellTheSender = (signerId: string) =>
    tellSendersOfLocks({ db, mail, config }, { signerId }).catch((error) =>
      logger.warn({ err: error, signerId }, 'could not e-mail the sender of a verification lock; the sweeper will'),
    );

  const state = async (ctx: Context, context: SigningContext, token: string) => {
    const verification = await findSignerVerification(db, context.signer.id);
    const now = new Date();
    const emailed = verification?.method === 'email_code';
    const lock = verification && lockOf(verification, now);
    return {
      method: verification?.method ?? null,
      verified: !verification || sessions.verified(ctx, context, token),
      lockedUntil: lock ? lock.lockedUntil.toISOString() : null,
      lockedUntilSenderActs: lock?.untilSenderActs ?? false,
      sentTo: emailed ? maskedEmail(context.signer.email) : null,
      codeExpiresAt: emailed && verification.codeExpiresAt && !verification.codeUsedAt ? verification.codeExpiresAt.toISOString() : null,
      nextCodeAt:
        emailed && verification.codeSentAt ? new Date(Math.max(now.getTime(), verification.codeSentAt.getTime() + EMAIL_CODE_EVERY_MS)).toISOString() : null,
    };
  };

  route(
    {
      ...signerSide,
      method: 'get',
      path: '/sign/{token}/verification',
      operationId: 'getSignerVerification',
      summary: 'What the signer must give before the page shows anything, and whether this browser has given it',
      response: VerificationStateSchema,
      errors: [404],
    },
    async ({ params }, ctx) => {
      const context = await resolveSigningToken(db, params.token);
      ctx.set('Cache-Control', 'no-store');
      return state(ctx, context, params.token);
    },
  );

  route(
    {
      ...signerSide,
      method: 'post',
      path: '/sign/{token}/verification/code',
      operationId: 'sendVerificationCode',
      summary: 'E-mail the signer a new 6-digit code (valid 10 minutes; at most one a minute); the last one stops working',
      response: VerificationStateSchema,
      responseDescription: 'Sent',
      errors: [404, 409, 429],
    },
    async ({ params }, ctx) => {
      const context = await resolveSigningToken(db, params.token);
      assertCanAct(context);
      if (context.signer.verification?.method !== 'email_code') throw conflict('This signer is not verified by an e-mailed code.');
      const issued = await issueEmailCode({ db, key }, verifying(context), client(ctx));
      if (issued.outcome === 'locked') throw locked(issued);
      if (issued.outcome === 'too_soon') {
        throw rateLimitExceeded(`A new code can be sent once a minute: the next at ${issued.retryAt.toISOString()}.`, retryAfterHeader(issued.retryAt));
      }
      const brand = await mailBrandOfAccount(db, context.request.accountId, config.publicUrl);
      await mail.send({
        idempotencyKey: issued.mailKey,
        to: context.signer.email,
        toName: context.signer.name,
        ...sender,
        ...(brand.fromName ? { fromName: brand.fromName } : {}),
        ...verificationCodeMail({ signerName: context.signer.name, sender: context.sender, code: issued.code, expiresAt: issued.expiresAt, brand }),
      });
      return state(ctx, context, params.token);
    },
  );

  route(
    {
      ...signerSide,
      method: 'post',
      path: '/sign/{token}/verification',
      operationId: 'verifySigner',
      summary: 'Give the access code or the e-mailed code; the right one opens the page in this browser (a cookie on the link’s path)',
      description:
        'A wrong code is 403 verification_failed with triesLeft. Wrong codes count over the request’s whole life, a right one resets nothing: ' +
        'every fifth locks the page (429 verification_locked with lockedUntil and Retry-After) for 15 minutes, then 1 hour, then 4 hours, and the ' +
        'twentieth until the sender reminds the signer (lockedUntilSenderActs, no Retry-After); each lock records signer.verification_locked and ' +
        'e-mails the sender. Every try is a step of the audit trail.',
      body: VerifySchema,
      response: VerificationStateSchema,
      responseDescription: 'Verified: the page’s endpoints answer in this browser',
      errors: [400, 403, 404, 429],
    },
    async ({ params, body }, ctx) => {
      const context = await resolveSigningToken(db, params.token);
      const tried = await tryVerificationCode({ db, events, key }, verifying(context), body.code, client(ctx));
      if (tried.outcome === 'locked') {
        if (tried.justLocked) await tellTheSender(context.signer.id);
        throw locked(tried);
      }
      if (tried.outcome === 'wrong') {
        const left = tried.triesLeft === 1 ? '1 try' : `${tried.triesLeft} tries`;
        throw new AppError(
          403,
          'verification_failed',
          `The code is wrong, expired or used already. ${left} left before the page locks ${lockLength(tried.nextLockMs)}.`,
          { extra: { triesLeft: tried.triesLeft } },
        );
      }
      if (context.embeddedSession) await markEmbeddedSessionVerified(db, params.token);
      else sessions.start(ctx, context.signer.id, params.token);
      ctx.set('Cache-Control', 'no-store');
      return { ...(await state(ctx, context, params.token)), verified: true };
    },
  );
}
