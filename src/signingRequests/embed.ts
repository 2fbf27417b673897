import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import { conflict, notFound, validationError } from '../errors';
import { hasActed, progressFromDatabase, type ClientInfo } from '../domain/signingRequests';
import { plainHttpProblems, type EmbeddedSigningCreateInput } from './schema';
import type { SigningDeps } from './deps';
import { findSigningRequest, recordAuditStep } from './store';
import { findEmbeddedLink, findEmbeddedLinkToOpen, insertEmbeddedLink, insertSessionToken, markSessionVerified, useEmbeddedLink } from './tokenStore';
import { hashToken, randomToken, SIGNING_TOKEN } from './tokens';

// Embedded signing: an API client asks for a one-time URL for one signer and frames it in its own page,
// for the origins it names. Loading the URL uses nothing up: its page, framable by those origins alone,
// posts back to it from a frame, and that POST uses it up (one conditional update, so that of two at once
// one gets the session) and starts a session of that signer on that request: a link token that the page
// keeps in memory and never shows in its address. Only hashes of both tokens are stored.

/** How long an embedded session lasts once opened (and never past the request's expiry). */
export const EMBEDDED_SESSION_MS = 60 * 60 * 1000;

/** What the embedded page needs besides its session: who it is for, whom it may talk to, and where it goes after. */
export interface EmbeddedPage {
  signingRequestId: string;
  signerId: string;
  allowedOrigins: string[];
  returnUrl: string | null;
  locale: string | null;
}

/** An embedded URL looked at: still `usable` (with what its page may be framed by and wears), or `expired`. */
export type EmbeddedLinkState = { outcome: 'usable'; accountId: string; allowedOrigins: string[] } | { outcome: 'expired' };

/** An embedded URL used: a new session and its page, or `expired` (used already, or too late), which tells nothing more. */
export type EmbeddedOpening = { outcome: 'opened'; sessionToken: string; page: EmbeddedPage } | { outcome: 'expired' };

const allowedOriginsOf = (row: { allowed_origins: string | string[] }): string[] =>
  typeof row.allowed_origins === 'string' ? JSON.parse(row.allowed_origins) : row.allowed_origins;

/**
 * A one-time URL for a signer whose turn it is on a pending request of the account: 404 for another
 * account's request or signer, 409 when the signer cannot act now (as for POST …/link, and not before
 * their turn).
 */
export async function createEmbeddedSigningLink(
  { db, publicUrl, loopbackHttp }: SigningDeps,
  accountId: string,
  requestId: string,
  signerId: string,
  input: EmbeddedSigningCreateInput,
) {
  const problems = plainHttpProblems(loopbackHttp, [
    ...input.allowedOrigins.map((origin, index): [string, string] => [`allowedOrigins.${index}`, origin]),
    ['returnUrl', input.returnUrl],
  ]);
  if (problems.length > 0) throw validationError(problems);
  const found = await findSigningRequest(db, accountId, requestId);
  const signer = found.signers.find((candidate) => candidate.id === signerId);
  if (!signer) throw notFound('Signer');
  if (found.request.status !== 'pending') throw conflict(`This signing request is ${found.request.status}.`);
  if (signer.recipientType === 'cc') throw conflict('A cc recipient gets the sealed documents by e-mail, never a signing page.');
  if (hasActed(signer)) throw conflict(`This signer has already ${signer.status}.`);
  const { waitingFor } = progressFromDatabase(found);
  if (!waitingFor.includes(signer.id)) throw conflict(`It is not this signer’s turn yet: the request waits for ${waitingFor.join(', ')} first.`);
  const token = randomToken();
  const expiresAt = new Date(Date.now() + input.expiresInSeconds * 1000);
  await insertEmbeddedLink(db, {
    tokenHash: hashToken(token),
    signerId: signer.id,
    allowedOrigins: input.allowedOrigins,
    returnUrl: input.returnUrl ?? null,
    locale: input.locale ?? null,
    expiresAt,
  });
  return { url: `${publicUrl}/embed/${token}`, expiresAt: expiresAt.toISOString() };
}

/** An embedded URL as a GET finds it, changing nothing: a link checker's or a preview's load uses nothing up. */
export async function findEmbeddedSigningLink(db: Db, token: string): Promise<EmbeddedLinkState | undefined> {
  if (!SIGNING_TOKEN.test(token)) return undefined;
  const link = await findEmbeddedLink(db, hashToken(token));
  if (!link) return undefined;
  if (link.used_at || new Date(link.expires_at).getTime() <= Date.now()) return { outcome: 'expired' };
  return { outcome: 'usable', accountId: link.account_id, allowedOrigins: allowedOriginsOf(link) };
}

/**
 * Uses an embedded URL up, for the POST its page makes once it runs in a frame: the first within its time
 * gets a new session, an audit step of the request with the browser that made it (the signer reached the
 * page through the account's application, not an e-mailed link); any later one, or one too late,
 * `expired`; an unknown token nothing.
 */
export async function openEmbeddedSigningLink(db: Db, token: string, client: ClientInfo): Promise<EmbeddedOpening | undefined> {
  if (!SIGNING_TOKEN.test(token)) return undefined;
  const tokenHash = hashToken(token);
  const now = new Date();
  return unitOfWork(db, async (trx) => {
    const opened = await useEmbeddedLink(trx, tokenHash, now);
    const link = await findEmbeddedLinkToOpen(trx, tokenHash);
    if (!link) return undefined;
    if (!opened) return { outcome: 'expired' };
    const page: EmbeddedPage = {
      signingRequestId: link.signing_request_id,
      signerId: link.signer_id,
      allowedOrigins: allowedOriginsOf(link),
      returnUrl: link.return_url ?? link.redirect_url ?? null,
      locale: link.locale ?? null,
    };
    const sessionToken = randomToken();
    await insertSessionToken(trx, {
      tokenHash: hashToken(sessionToken),
      signerId: link.signer_id,
      expiresAt: new Date(Math.min(now.getTime() + EMBEDDED_SESSION_MS, new Date(link.request_expires_at).getTime())),
      embeddedLinkHash: tokenHash,
    });
    await recordAuditStep(trx, link.signing_request_id, {
      action: 'embedded_session_opened',
      key: `embedded_session_opened:${tokenHash}`,
      signerId: link.signer_id,
      actor: link.signer_email,
      client,
      data: { allowedOrigins: page.allowedOrigins },
    });
    return { outcome: 'opened', sessionToken, page };
  });
}

/** An embedded session whose signer gave the right code: its page shows the request from now on. */
export async function markEmbeddedSessionVerified(db: Db, sessionToken: string) {
  await markSessionVerified(db, hashToken(sessionToken), new Date());
}
