import type { Db } from '../db';
import { AppError, conflict, notFound } from '../errors';
import { hasActed } from '../domain/signingRequests';
import type { SigningDeps } from './deps';
import { findPendingSigningRequest, findSigningLink } from './store';
import { insertSignerToken } from './tokenStore';
import { hashToken, randomToken, SIGNING_TOKEN } from './tokens';

// A signer's links: the one in their e-mails (notifications.ts), fresh ones the sender asks for, and
// what a link opens.

/** A fresh signing link for one signer, for apps that show the signing page themselves. */
export async function createSigningLink({ db, publicUrl }: SigningDeps, accountId: string, requestId: string, signerId: string) {
  const { request, signers } = await findPendingSigningRequest(db, accountId, requestId);
  const signer = signers.find((candidate) => candidate.id === signerId);
  if (!signer) throw notFound('Signer');
  if (signer.recipientType === 'cc') throw conflict('A cc recipient gets the sealed documents by e-mail, never a signing link.');
  if (hasActed(signer)) throw conflict(`This signer has already ${signer.status}.`);
  const token = randomToken();
  await insertSignerToken(db, { tokenHash: hashToken(token), signerId: signer.id, expiresAt: request.expiresAt });
  return { url: `${publicUrl}/sign/${token}`, expiresAt: request.expiresAt.toISOString() };
}

/** The signer a link token belongs to, with their request; 404 for an unknown token. */
export async function resolveSigningToken(db: Db, token: string) {
  if (!SIGNING_TOKEN.test(token)) throw notFound('Signing link');
  const context = await findSigningLink(db, hashToken(token));
  if (!context) throw notFound('Signing link');
  return context;
}

export type SigningContext = Awaited<ReturnType<typeof resolveSigningToken>>;

/** What a signer may still do through this link: an ended request is 409, an expired one 410. */
export function assertCanAct({ request, linkExpiresAt }: Pick<SigningContext, 'request' | 'linkExpiresAt'>) {
  if (request.status === 'expired' || linkExpiresAt.getTime() <= Date.now()) {
    throw new AppError(410, 'link_expired', 'This signing link has expired. Ask the sender for a new one.');
  }
  if (request.status !== 'pending') throw conflict(`This signing request is ${request.status}.`);
}
