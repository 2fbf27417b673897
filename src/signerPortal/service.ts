import type { Db } from '../db';
import { AppError, conflict, notFound } from '../errors';
import { toSigner, toSigningRequest } from '../signingRequests/store';
import { hashToken, SIGNING_TOKEN } from '../signingRequests/tokens';

/** The signer a link token belongs to, with their request; 404 for an unknown token. */
export async function resolveSigningToken(db: Db, token: string) {
  if (!SIGNING_TOKEN.test(token)) throw notFound('Signing link');
  // Two round trips, not four: the sign path waits for them before its update is even sent.
  const link = await db('signer_tokens as t')
    .join('signers as s', 's.id', 't.signer_id')
    .where('t.token_hash', hashToken(token))
    .first('s.*', 't.expires_at as link_expires_at');
  if (!link) throw notFound('Signing link');
  const signer = toSigner(link);
  const [row, earlier] = await Promise.all([
    db('signing_requests as r')
      .join('accounts as a', 'a.id', 'r.account_id')
      .join('documents as d', 'd.id', 'r.document_id')
      .where('r.id', signer.signingRequestId)
      .first('r.*', 'a.name as sender_name', 'a.email as sender_email', 'd.file_name', 'd.page_count'),
    db('signers')
      .where({ signing_request_id: signer.signingRequestId })
      .andWhere('order', '<', signer.order)
      .whereNot('status', 'signed')
      .count({ count: '*' }),
  ]);
  const request = toSigningRequest(row);
  return {
    signer,
    request,
    sender: { name: row.sender_name as string | null, email: row.sender_email as string },
    document: { fileName: row.file_name as string, pageCount: row.page_count as number | null },
    linkExpiresAt: link.link_expires_at as Date,
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

export function presentSignerView({ signer, request, sender, document, waitingOnOthers }: SigningContext) {
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
    document,
    yourTurn: request.status === 'pending' && !waitingOnOthers && !['signed', 'declined'].includes(signer.status),
  };
}

export async function getOriginalPdf(db: Db, documentId: string): Promise<Buffer> {
  const file = await db('document_files').where({ document_id: documentId }).first('content');
  return file.content;
}
