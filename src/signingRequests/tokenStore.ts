import type { Db } from '../db';

// The queries of signer_tokens (a signer's links and embedded sessions) and embedded_signing_links. Only
// hashes of tokens are stored. Each takes a Db, which may be the caller's transaction.

/** A signer's link: its token's hash, until when it works. A retry that issues the same token adds nothing. */
export const insertSignerToken = (db: Db, link: { tokenHash: string; signerId: string; expiresAt: Date }) =>
  db('signer_tokens').insert({ token_hash: link.tokenHash, signer_id: link.signerId, expires_at: link.expiresAt }).onConflict('token_hash').ignore();

/** A session an embedded URL opened: a link token of the signer, until `expiresAt`, named by the URL's hash. */
export async function insertSessionToken(trx: Db, session: { tokenHash: string; signerId: string; expiresAt: Date; embeddedLinkHash: string }) {
  await trx('signer_tokens').insert({
    token_hash: session.tokenHash,
    signer_id: session.signerId,
    expires_at: session.expiresAt,
    embedded_link_hash: session.embeddedLinkHash,
  });
}

/** An embedded session whose signer gave the right code. */
export async function markSessionVerified(db: Db, tokenHash: string, at: Date) {
  await db('signer_tokens').where({ token_hash: tokenHash }).whereNotNull('embedded_link_hash').update({ verified_at: at });
}

export async function insertEmbeddedLink(
  db: Db,
  link: { tokenHash: string; signerId: string; allowedOrigins: string[]; returnUrl: string | null; locale: string | null; expiresAt: Date },
) {
  await db('embedded_signing_links').insert({
    token_hash: link.tokenHash,
    signer_id: link.signerId,
    allowed_origins: JSON.stringify(link.allowedOrigins),
    return_url: link.returnUrl,
    locale: link.locale,
    expires_at: link.expiresAt,
  });
}

/** An embedded URL as a GET sees it: for whom it may be framed, whether it was used, until when it works, and its request's account. */
export const findEmbeddedLink = (db: Db, tokenHash: string) =>
  db('embedded_signing_links as l')
    .join('signers as s', 's.id', 'l.signer_id')
    .join('signing_requests as r', 'r.id', 's.signing_request_id')
    .where('l.token_hash', tokenHash)
    .first('l.allowed_origins', 'l.used_at', 'l.expires_at', 'r.account_id');

/** Uses an embedded URL up if it is unused and its time has not run out at `now`; false when it matched no row. */
export const useEmbeddedLink = async (trx: Db, tokenHash: string, now: Date) =>
  (await trx('embedded_signing_links').where({ token_hash: tokenHash }).whereNull('used_at').andWhere('expires_at', '>', now).update({ used_at: now })) === 1;

/** An embedded URL with its signer and request, as its session is opened from it. */
export const findEmbeddedLinkToOpen = (trx: Db, tokenHash: string) =>
  trx('embedded_signing_links as l')
    .join('signers as s', 's.id', 'l.signer_id')
    .join('signing_requests as r', 'r.id', 's.signing_request_id')
    .where('l.token_hash', tokenHash)
    .first('l.*', 's.signing_request_id', 's.email as signer_email', 'r.expires_at as request_expires_at', 'r.redirect_url');
