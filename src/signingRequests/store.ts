import type { Plan } from '../domain/plans';
import type { Db } from '../db';
import { toPage } from '../db/pagination';
import { notFound } from '../errors';
import type { ClientInfo, RecipientType, RequestStatus, SignerStatus, SigningOrder, VerificationMethod } from '../domain/signingRequests';
import type { SignerField } from '../documents/fields';

// Rows of signing_requests and signers, mapped once to the camelCase objects everything else uses.

export interface Signer {
  id: string;
  signingRequestId: string;
  name: string;
  email: string;
  order: number;
  recipientType: RecipientType;
  /** The step: recipients with the same number act in parallel. */
  routingOrder: number;
  status: SignerStatus;
  fields: SignerField[] | null;
  notifiedAt: Date | null;
  /** When the last invitation or reminder went to them: the next reminder waits an hour from it. */
  lastMailedAt: Date | null;
  viewedAt: Date | null;
  signedAt: Date | null;
  approvedAt: Date | null;
  declinedAt: Date | null;
  declineReason: string | null;
  signature: { type: 'typed' | 'drawn'; value: string; fieldValues?: Record<string, string> } | null;
  ipAddress: string | null;
  userAgent: string | null;
  /** How they prove who they are before their page shows anything; null when the sender asked for nothing. */
  verification: SignerVerificationState | null;
}

export interface SignerVerificationState {
  method: VerificationMethod;
  verifiedAt: Date | null;
  lockedUntil: Date | null;
}

/** The signers table joined with each signer's verification, as toSigner reads it. */
export const signersWithVerification = (db: Db) =>
  db('signers as s')
    .leftJoin('signer_verifications as v', 'v.signer_id', 's.id')
    .select('s.*', 'v.method as verification_method', 'v.verified_at as verification_verified_at', 'v.locked_until as verification_locked_until');

export interface SigningRequest {
  id: string;
  accountId: string;
  documentId: string;
  title: string;
  message: string | null;
  status: RequestStatus;
  signingOrder: SigningOrder;
  expiresAt: Date;
  reminderEveryDays: number;
  originalSha256: string;
  sealedSha256: string | null;
  cancelReason: string | null;
  /** Where signers go once they have acted (with ?event=…), or null. */
  redirectUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** One document of a request's packet, in the order signers see them. */
export interface RequestDocument {
  documentId: string;
  position: number;
  fileName: string;
  pageCount: number | null;
  originalSha256: string;
  sealedSha256: string | null;
}

/** A document as every event of its request names it. */
export const eventDocument = ({ documentId, fileName }: Pick<RequestDocument, 'documentId' | 'fileName'>) => ({ documentId, fileName });

export interface SigningRequestWithSigners {
  request: SigningRequest;
  signers: Signer[];
  documents: RequestDocument[];
}

export const toSigner = (row: Record<string, any>): Signer => ({
  id: row.id,
  signingRequestId: row.signing_request_id,
  name: row.name,
  email: row.email,
  order: row.order,
  recipientType: row.recipient_type,
  routingOrder: row.routing_order,
  status: row.status,
  fields: row.fields,
  notifiedAt: row.notified_at,
  lastMailedAt: row.last_mailed_at,
  viewedAt: row.viewed_at,
  signedAt: row.signed_at,
  approvedAt: row.approved_at,
  declinedAt: row.declined_at,
  declineReason: row.decline_reason,
  signature: row.signature,
  ipAddress: row.ip_address,
  userAgent: row.user_agent,
  verification: row.verification_method
    ? { method: row.verification_method, verifiedAt: row.verification_verified_at, lockedUntil: row.verification_locked_until }
    : null,
});

/**
 * The columns toSigningRequest reads. Never `*`: search_vector holds the words of every document's text
 * (up to 200,000 characters' worth), which no reader of a request needs.
 */
export const requestColumns = [
  'id',
  'account_id',
  'document_id',
  'title',
  'message',
  'status',
  'signing_order',
  'expires_at',
  'reminder_every_days',
  'original_sha256',
  'sealed_sha256',
  'cancel_reason',
  'redirect_url',
  'created_at',
  'updated_at',
  'completed_at',
];

/** requestColumns of signing_requests under the alias `as` (r.id, r.account_id, …). */
export const requestColumnsOf = (as: string) => requestColumns.map((column) => `${as}.${column}`);

export const toSigningRequest = (row: Record<string, any>): SigningRequest => ({
  id: row.id,
  accountId: row.account_id,
  documentId: row.document_id,
  title: row.title,
  message: row.message,
  status: row.status,
  signingOrder: row.signing_order,
  expiresAt: row.expires_at,
  reminderEveryDays: row.reminder_every_days,
  originalSha256: row.original_sha256,
  sealedSha256: row.sealed_sha256,
  cancelReason: row.cancel_reason,
  redirectUrl: row.redirect_url ?? null,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  completedAt: row.completed_at,
});

/**
 * The requests `rows` finds, each with its signers and documents. Given the ids the rows are asked for, the
 * three are read at once: one round trip, not two (a signer's every action loads its request so). What is
 * read for an id the rows leave out (another account's) is dropped.
 */
async function withSigners(db: Db, rows: PromiseLike<Record<string, any>[]>, ids?: string[]): Promise<SigningRequestWithSigners[]> {
  const signersAndDocuments = async (of: string[]) => {
    const signers = signersWithVerification(db).whereIn('s.signing_request_id', of).orderBy('s.order');
    // A transaction is one connection, which runs one query at a time: there they take turns.
    if (db.isTransaction) return [await signers, await requestDocuments(db, of)] as const;
    return Promise.all([signers, requestDocuments(db, of)]);
  };
  const [found, early] = db.isTransaction
    ? [await rows, ids ? await signersAndDocuments(ids) : undefined]
    : await Promise.all([rows, ids ? signersAndDocuments(ids) : undefined]);
  if (found.length === 0) return [];
  const [signers, documents] = early ?? (await signersAndDocuments(found.map((row) => row.id as string)));
  return found.map((row) => ({
    request: toSigningRequest(row),
    signers: signers.filter((signer) => signer.signing_request_id === row.id).map(toSigner),
    documents: documents.get(row.id) ?? [],
  }));
}

/** The documents of each request, in their order. */
export async function requestDocuments(db: Db, requestIds: string[]): Promise<Map<string, RequestDocument[]>> {
  const rows = await db('signing_request_documents as rd')
    .join('documents as d', 'd.id', 'rd.document_id')
    .whereIn('rd.signing_request_id', requestIds)
    .orderBy(['rd.signing_request_id', 'rd.position'])
    .select('rd.signing_request_id', 'rd.position', 'rd.document_id', 'rd.original_sha256', 'rd.sealed_sha256', 'd.file_name', 'd.page_count');
  const byRequest = new Map<string, RequestDocument[]>();
  for (const row of rows) {
    const list = byRequest.get(row.signing_request_id) ?? [];
    list.push({
      documentId: row.document_id,
      position: row.position,
      fileName: row.file_name,
      pageCount: row.page_count,
      originalSha256: row.original_sha256,
      sealedSha256: row.sealed_sha256,
    });
    byRequest.set(row.signing_request_id, list);
  }
  return byRequest;
}

/** The row a `.first()` finds, as the rows withSigners takes. */
const oneRow = (row: PromiseLike<Record<string, any> | undefined>) => Promise.resolve(row).then((found) => (found ? [found] : []));

/** One request of an account with its signers; 404 for another account's. */
export async function findSigningRequest(db: Db, accountId: string, id: string): Promise<SigningRequestWithSigners> {
  const [found] = await withSigners(db, oneRow(db('signing_requests').where({ id, account_id: accountId }).first(requestColumns)), [id]);
  if (!found) throw notFound('Signing request');
  return found;
}

/** Requests of an account by id, in no particular order: what search hits show. */
export async function findSigningRequests(db: Db, accountId: string, ids: string[]) {
  if (ids.length === 0) return [];
  return withSigners(db, db('signing_requests').where('account_id', accountId).whereIn('id', ids).select(requestColumns), ids);
}

export interface SigningRequestFilters {
  limit: number;
  cursor?: string;
  status?: RequestStatus;
  documentId?: string;
  signerEmail?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

export async function listSigningRequests(db: Db, accountId: string, query: SigningRequestFilters) {
  const rows: ({ id: string } & Record<string, any>)[] = await db('signing_requests')
    .where({ account_id: accountId })
    .modify((builder) => {
      if (query.cursor) builder.where('id', '<', query.cursor);
      if (query.status) builder.where('status', query.status);
      if (query.documentId) builder.whereIn('id', db('signing_request_documents').select('signing_request_id').where('document_id', query.documentId));
      if (query.createdAfter) builder.where('created_at', '>=', query.createdAfter);
      if (query.createdBefore) builder.where('created_at', '<', query.createdBefore);
      if (query.signerEmail) {
        builder.whereIn('id', db('signers').select('signing_request_id').whereRaw('lower(email) = ?', [query.signerEmail.toLowerCase()]));
      }
    })
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .select(requestColumns);
  const page = toPage(rows, query.limit);
  return { ...page, data: await withSigners(db, Promise.resolve(page.data)) };
}

/** What the lifecycle's commands work from: the request, its signers and documents, its owner and its account's plan. */
export async function loadForLifecycle(db: Db, requestId: string) {
  // One promise of the row: a query builder run twice would be two queries.
  const found = Promise.resolve(
    db('signing_requests as r')
      .join('accounts as a', 'a.id', 'r.account_id')
      .where('r.id', requestId)
      .first(...requestColumnsOf('r'), 'a.email as account_email', 'a.name as account_name', 'a.plan as account_plan'),
  );
  const [row, [loaded]] = await Promise.all([found, withSigners(db, oneRow(found), [requestId])]);
  if (!row || !loaded) throw new Error(`signing request ${requestId} not found`);
  const { request, signers, documents } = loaded;
  return {
    request,
    signers,
    documents,
    owner: { email: row.account_email as string, name: row.account_name as string | null },
    plan: row.account_plan as Plan,
  };
}

type AuditStep = { action: string; key: string; signerId?: string; actor?: string; client?: ClientInfo; data?: object };

// One step of the audit trail, written once: a retry finds its idempotency key and adds nothing.
export const recordAuditStep = (trx: Db, requestId: string, step: AuditStep) =>
  trx('audit_trail')
    .insert({
      signing_request_id: requestId,
      signer_id: step.signerId ?? null,
      action: step.action,
      actor: step.actor ?? 'signet',
      ip_address: step.client?.ipAddress ?? null,
      user_agent: step.client?.userAgent ?? null,
      data: step.data ? JSON.stringify(step.data) : null,
      idempotency_key: step.key,
    })
    .onConflict('idempotency_key')
    .ignore();

export async function findAuditTrail(db: Db, accountId: string, id: string) {
  await findSigningRequest(db, accountId, id);
  const steps = await db('audit_trail as t')
    .leftJoin('signers as s', 's.id', 't.signer_id')
    .where('t.signing_request_id', id)
    .orderBy('t.id')
    .select('t.action', 't.actor', 't.signer_id', 's.email as signer_email', 't.ip_address', 't.user_agent', 't.data', 't.created_at');
  return steps.map((step) => ({
    action: step.action as string,
    actor: step.actor as string | null,
    signerId: step.signer_id as string | null,
    signerEmail: step.signer_email as string | null,
    ipAddress: step.ip_address as string | null,
    userAgent: step.user_agent as string | null,
    data: step.data as unknown,
    at: step.created_at as Date,
  }));
}
