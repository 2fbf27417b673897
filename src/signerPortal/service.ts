import type { Db } from '../db';
import { AppError, conflict, notFound } from '../errors';
import { requestColumnsOf, requestDocuments, toSigner, toSigningRequest } from '../signingRequests/store';
import { hasActed } from '../domain/signingRequests';
import { hashToken, SIGNING_TOKEN } from '../signingRequests/tokens';

/** The signer a link token belongs to, with their request; 404 for an unknown token. */
export async function resolveSigningToken(db: Db, token: string) {
  if (!SIGNING_TOKEN.test(token)) throw notFound('Signing link');
  // Two round trips: the sign path waits for them before its update is even sent.
  const link = await db('signer_tokens as t')
    .join('signers as s', 's.id', 't.signer_id')
    .leftJoin('signer_verifications as v', 'v.signer_id', 's.id')
    .where('t.token_hash', hashToken(token))
    .first(
      's.*',
      't.expires_at as link_expires_at',
      'v.method as verification_method',
      'v.verified_at as verification_verified_at',
      'v.locked_until as verification_locked_until',
      't.embedded_link_hash',
      't.verified_at as session_verified_at',
    );
  if (!link) throw notFound('Signing link');
  const signer = toSigner(link);
  const [row, documents, earlier] = await Promise.all([
    db('signing_requests as r')
      .join('accounts as a', 'a.id', 'r.account_id')
      .where('r.id', signer.signingRequestId)
      .first(...requestColumnsOf('r'), 'a.name as sender_name', 'a.email as sender_email'),
    requestDocuments(db, [signer.signingRequestId]).then((byRequest) => byRequest.get(signer.signingRequestId) ?? []),
    // Recipients of an earlier step who have not done their part.
    db('signers')
      .where({ signing_request_id: signer.signingRequestId })
      .andWhere('routing_order', '<', signer.routingOrder)
      .whereNot('recipient_type', 'cc')
      .whereNotIn('status', ['signed', 'approved'])
      .whereNot((done) => done.where({ recipient_type: 'viewer', status: 'viewed' }))
      .count({ count: '*' }),
  ]);
  const request = toSigningRequest(row);
  return {
    signer,
    request,
    sender: { name: row.sender_name as string | null, email: row.sender_email as string },
    documents,
    linkExpiresAt: link.link_expires_at as Date,
    /** A session an embedded URL opened (its page holds the token), and whether its signer gave their code through it. */
    embeddedSession: link.embedded_link_hash ? { verified: link.session_verified_at !== null } : null,
    waitingOnOthers: Number(earlier[0].count) > 0,
  };
}

export type SigningContext = Awaited<ReturnType<typeof resolveSigningToken>>;

/** What a signer may still do through this link: an ended request is 409, an expired one 410. */
export function assertCanAct({ request, linkExpiresAt }: SigningContext) {
  if (request.status === 'expired' || linkExpiresAt.getTime() <= Date.now()) {
    throw new AppError(410, 'link_expired', 'This signing link has expired. Ask the sender for a new one.');
  }
  if (request.status !== 'pending') throw conflict(`This signing request is ${request.status}.`);
}

export function presentSignerView({ signer, request, sender, documents, waitingOnOthers }: SigningContext) {
  return {
    request: {
      id: request.id,
      title: request.title,
      message: request.message,
      status: request.status,
      signingOrder: request.signingOrder,
      expiresAt: request.expiresAt.toISOString(),
      sender,
      redirectUrl: request.redirectUrl,
    },
    signer: { id: signer.id, name: signer.name, email: signer.email, recipientType: signer.recipientType, status: signer.status, fields: signer.fields },
    // The first document as before, and every document in the order the signer reads them.
    document: { fileName: documents[0].fileName, pageCount: documents[0].pageCount },
    documents: documents.map((document) => ({ id: document.documentId, fileName: document.fileName, pageCount: document.pageCount })),
    yourTurn: request.status === 'pending' && !waitingOnOthers && signer.recipientType !== 'cc' && !hasActed(signer),
  };
}

/** One document of the signer's request as it was sent; 404 for any other. */
export async function getOriginalPdf(db: Db, { documents }: SigningContext, documentId = documents[0].documentId): Promise<Buffer> {
  if (!documents.some((document) => document.documentId === documentId)) throw notFound('Document');
  const file = await db('document_files').where({ document_id: documentId }).first('content');
  return file.content;
}
