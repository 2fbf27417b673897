import type { Db } from '../db';
import { AppError, conflict, notFound } from '../errors';
import { requestDocuments, toSigner, toSigningRequest } from '../signingRequests/store';
import { hashToken, SIGNING_TOKEN } from '../signingRequests/tokens';

/** The signer a link token belongs to, with their request; 404 for an unknown token. */
export async function resolveSigningToken(db: Db, token: string) {
  if (!SIGNING_TOKEN.test(token)) throw notFound('Signing link');
  const link = await db('signer_tokens')
    .where({ token_hash: hashToken(token) })
    .first('signer_id', 'expires_at');
  if (!link) throw notFound('Signing link');
  const signer = toSigner(await db('signers').where({ id: link.signer_id }).first());
  const row = await db('signing_requests as r')
    .join('accounts as a', 'a.id', 'r.account_id')
    .where('r.id', signer.signingRequestId)
    .first('r.*', 'a.name as sender_name', 'a.email as sender_email');
  const request = toSigningRequest(row);
  const documents = (await requestDocuments(db, [request.id])).get(request.id) ?? [];
  const earlier = await db('signers')
    .where({ signing_request_id: request.id })
    .andWhere('order', '<', signer.order)
    .whereNot('status', 'signed')
    .count({ count: '*' });
  return {
    signer,
    request,
    sender: { name: row.sender_name as string | null, email: row.sender_email as string },
    documents,
    linkExpiresAt: link.expires_at as Date,
    waitingOnOthers: request.signingOrder === 'sequential' && Number(earlier[0].count) > 0,
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
    },
    signer: { id: signer.id, name: signer.name, email: signer.email, status: signer.status, fields: signer.fields },
    // The first document as before, and every document in the order the signer reads them.
    document: { fileName: documents[0].fileName, pageCount: documents[0].pageCount },
    documents: documents.map((document) => ({ id: document.documentId, fileName: document.fileName, pageCount: document.pageCount })),
    yourTurn: request.status === 'pending' && !waitingOnOthers && !['signed', 'declined'].includes(signer.status),
  };
}

/** One document of the signer's request as it was sent; 404 for any other. */
export async function getOriginalPdf(db: Db, { documents }: SigningContext, documentId = documents[0].documentId): Promise<Buffer> {
  if (!documents.some((document) => document.documentId === documentId)) throw notFound('Document');
  const file = await db('document_files').where({ document_id: documentId }).first('content');
  return file.content;
}
