import { ApplicationFailure, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Account } from '../accounts/service';
import type { Db } from '../db';
import { getDocument } from '../documents/service';
import { conflict, notFound } from '../errors';
import { newId } from '../ids';
import { toPage } from '../db/pagination';
import { hashToken, randomToken } from '../signing/tokens';
import { refusalTypes } from '../../workflows/definitions';
import type { SigningRequestCreateInput, SigningRequestListQuery } from './schema';
import { DAY_MS, startSigningRequestWorkflow } from './workflow';

export interface SigningDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  publicUrl: string;
}

/** Records the request and its signers, then starts its workflow (id = request id) before answering; the sweeper covers a crash between the two. */
export async function createSigningRequest({ db, temporal, taskQueue }: SigningDeps, account: Account, input: SigningRequestCreateInput) {
  const document = await getDocument(db, account.id, input.document_id);
  if (document.status !== 'ready') throw conflict('The document has no PDF yet: upload it with PUT /documents/{id}/file first.');
  const requestId = newId('signingRequest');
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : new Date(Date.now() + (input.expiresInDays ?? 30) * DAY_MS);
  const signerIds = input.signers.map(() => newId('signer'));
  await db.transaction(async (trx) => {
    await trx('signing_requests').insert({
      id: requestId,
      account_id: account.id,
      document_id: document.id,
      title: input.title,
      message: input.message ?? null,
      signing_order: input.signingOrder,
      expires_at: expiresAt,
      reminder_every_days: input.reminderEveryDays,
      original_sha256: document.sha256,
      signer_text: input.signers.map((signer) => `${signer.name} ${signer.email}`).join(' '),
    });
    await trx('signers').insert(
      input.signers.map((signer, index) => ({
        id: signerIds[index],
        signing_request_id: requestId,
        name: signer.name,
        email: signer.email,
        order: index + 1,
        fields: signer.fields ? JSON.stringify(signer.fields) : null,
      })),
    );
    await trx('audit_trail').insert({ signing_request_id: requestId, action: 'created', actor: account.email, idempotency_key: `created:${requestId}` });
  });
  await startSigningRequestWorkflow(
    db,
    temporal,
    taskQueue,
    { id: requestId, account_id: account.id, document_id: document.id, signing_order: input.signingOrder, expires_at: expiresAt, reminder_every_days: input.reminderEveryDays },
    signerIds,
  );
  return getSigningRequest(db, account.id, requestId);
}

export async function getSigningRequest(db: Db, accountId: string, id: string) {
  const request = await db('signing_requests').where({ id, account_id: accountId }).first();
  if (!request) throw notFound('Signing request');
  const signers = await db('signers').where({ signing_request_id: id }).orderBy('order');
  return { request, signers };
}

export type SigningRequestRecord = Awaited<ReturnType<typeof getSigningRequest>>;

/** Signing requests of an account by id, with their signers, in no particular order: what a search hit shows. */
export async function getSigningRequests(db: Db, accountId: string, ids: string[]): Promise<SigningRequestRecord[]> {
  if (ids.length === 0) return [];
  const requests = await db('signing_requests').where('account_id', accountId).whereIn('id', ids);
  const signers = await db('signers').whereIn('signing_request_id', ids).orderBy('order');
  return requests.map((request) => ({ request, signers: signers.filter((signer) => signer.signing_request_id === request.id) }));
}

export async function listSigningRequests(db: Db, accountId: string, query: SigningRequestListQuery) {
  const rows: ({ id: string } & Record<string, any>)[] = await db('signing_requests')
    .where({ account_id: accountId })
    .modify((builder) => {
      if (query.cursor) builder.where('id', '<', query.cursor);
      if (query.status) builder.where('status', query.status);
      if (query.documentId) builder.where('document_id', query.documentId);
      if (query.createdAfter) builder.where('created_at', '>=', query.createdAfter);
      if (query.createdBefore) builder.where('created_at', '<', query.createdBefore);
      if (query.signerEmail) {
        builder.whereIn('id', db('signers').select('signing_request_id').whereRaw('lower(email) = ?', [query.signerEmail.toLowerCase()]));
      }
    })
    .orderBy('id', 'desc')
    .limit(query.limit + 1);
  const page = toPage(rows, query.limit);
  const signers = await db('signers').whereIn('signing_request_id', page.data.map((row) => row.id)).orderBy('order');
  return { ...page, data: page.data.map((request) => ({ request, signers: signers.filter((signer) => signer.signing_request_id === request.id) })) };
}

/** Runs a workflow update, turning the workflow's refusals (already acted, not your turn, ended) into 409s. */
export async function runUpdate<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && (refusalTypes as readonly string[]).includes(cause.type ?? '')) throw conflict(cause.message);
    if ((error as Error).name === 'WorkflowNotFoundError') throw conflict('This signing request has ended.');
    throw error;
  }
}

export async function assertPending(db: Db, accountId: string, id: string) {
  const { request, signers } = await getSigningRequest(db, accountId, id);
  if (request.status !== 'pending') throw conflict(`This signing request is ${request.status}.`);
  return { request, signers };
}

export async function getAuditTrail(db: Db, accountId: string, id: string) {
  await getSigningRequest(db, accountId, id);
  return db('audit_trail as t')
    .leftJoin('signers as s', 's.id', 't.signer_id')
    .where('t.signing_request_id', id)
    .orderBy('t.id')
    .select('t.action', 't.actor', 't.signer_id', 's.email as signer_email', 't.ip_address', 't.user_agent', 't.data', 't.created_at');
}

export async function getSealedDocument(db: Db, accountId: string, id: string) {
  const { request } = await getSigningRequest(db, accountId, id);
  const sealed = await db('sealed_documents').where({ signing_request_id: id }).first('content');
  if (!sealed) throw conflict(`The sealed PDF exists once every signer has signed; this request is ${request.status}.`);
  const document = await db('documents').where({ id: request.document_id }).first('file_name');
  return { content: sealed.content as Buffer, fileName: `${document.file_name.replace(/\.pdf$/i, '')} (signed).pdf` };
}

/** A fresh signing link for one signer, for apps that show the signing page themselves. */
export async function createSigningLink({ db, publicUrl }: SigningDeps, accountId: string, requestId: string, signerId: string) {
  const { request, signers } = await assertPending(db, accountId, requestId);
  const signer = signers.find((candidate) => candidate.id === signerId);
  if (!signer) throw notFound('Signer');
  if (signer.status === 'signed' || signer.status === 'declined') throw conflict(`This signer has already ${signer.status}.`);
  const token = randomToken();
  await db('signer_tokens').insert({ token_hash: hashToken(token), signer_id: signer.id, expires_at: request.expires_at });
  return { url: `${publicUrl}/sign/${token}`, expiresAt: request.expires_at.toISOString() };
}
