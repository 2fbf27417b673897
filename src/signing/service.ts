import type { Db } from '../db';
import { AppError, conflict, notFound } from '../errors';
import { hashToken } from './tokens';

/** The signer a link token belongs to, with their request; 404 for an unknown token, 410 for an expired link. */
export async function resolveSigningToken(db: Db, token: string) {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) throw notFound('Signing link');
  const row = await db('signer_tokens as t')
    .join('signers as s', 's.id', 't.signer_id')
    .join('signing_requests as r', 'r.id', 's.signing_request_id')
    .join('accounts as a', 'a.id', 'r.account_id')
    .join('documents as d', 'd.id', 'r.document_id')
    .where('t.token_hash', hashToken(token))
    .first(
      't.expires_at as link_expires_at',
      's.*',
      'r.id as request_id',
      'r.title',
      'r.message',
      'r.status as request_status',
      'r.signing_order',
      'r.expires_at',
      'a.name as sender_name',
      'a.email as sender_email',
      'd.id as document_id',
      'd.file_name',
      'd.page_count',
    );
  if (!row) throw notFound('Signing link');
  const earlier = await db('signers').where({ signing_request_id: row.request_id }).andWhere('order', '<', row.order).whereNot('status', 'signed').count({ count: '*' });
  const waitingOnOthers = row.signing_order === 'sequential' && Number(earlier[0].count) > 0;
  return { ...row, waitingOnOthers };
}

export type SigningContext = Awaited<ReturnType<typeof resolveSigningToken>>;

/** What a signer may still do through this link: an ended request is 409, an expired one 410. */
export function assertCanAct(context: SigningContext) {
  if (context.request_status === 'expired' || context.link_expires_at.getTime() <= Date.now()) {
    throw new AppError(410, 'link_expired', 'This signing link has expired. Ask the sender for a new one.');
  }
  if (context.request_status !== 'pending') throw conflict(`This signing request is ${context.request_status}.`);
}

export function presentSignerView(context: SigningContext) {
  return {
    request: {
      id: context.request_id,
      title: context.title,
      message: context.message,
      status: context.request_status,
      signingOrder: context.signing_order,
      expiresAt: context.expires_at.toISOString(),
      sender: { name: context.sender_name, email: context.sender_email },
    },
    signer: { id: context.id, name: context.name, email: context.email, status: context.status, fields: context.fields },
    document: { fileName: context.file_name, pageCount: context.page_count },
    yourTurn: context.request_status === 'pending' && !context.waitingOnOthers && !['signed', 'declined'].includes(context.status),
  };
}

export async function getOriginalPdf(db: Db, documentId: string): Promise<Buffer> {
  const file = await db('document_files').where({ document_id: documentId }).first('content');
  return file.content;
}
