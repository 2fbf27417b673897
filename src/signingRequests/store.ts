import type { Plan } from '../domain/plans';
import type { Actor } from '../domain/actors';
import type { Db } from '../db';
import { toPage } from '../db/pagination';
import { conflict, notFound } from '../errors';
import type { ClientInfo, RecipientType, RequestStatus, RoutedRecipient, SignerStatus, SigningOrder, VerificationMethod } from '../domain/signingRequests';
import type { SignerField } from '../documents/fields';
import type { SealedPdf } from '../pdf/seal';

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
  signature: { type: 'typed' | 'drawn'; value: string; fieldValues?: Record<string, string>; hiddenFields?: number[] } | null;
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
  /** The bulk send that made it, and its row there; null for a request made on its own. */
  bulkSend: { id: string; row: number } | null;
  /** Who sent it (a member, or an API key and its member), null for requests sent before members. */
  sentBy: Actor | null;
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
  'bulk_send_id',
  'bulk_row',
  'sent_by',
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
  bulkSend: row.bulk_send_id ? { id: row.bulk_send_id, row: row.bulk_row } : null,
  sentBy: row.sent_by ?? null,
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

/** One request of an account that is still pending; 404 for another account's, 409 once it has ended. */
export async function findPendingSigningRequest(db: Db, accountId: string, id: string): Promise<SigningRequestWithSigners> {
  const found = await findSigningRequest(db, accountId, id);
  if (found.request.status !== 'pending') throw conflict(`This signing request is ${found.request.status}.`);
  return found;
}

/** A request of the account under this id, and whether its workflow was started: what a retry under an Idempotency-Key finds. */
export async function findMadeSigningRequest(db: Db, accountId: string, id: string) {
  const row = await db('signing_requests')
    .where({ id, account_id: accountId })
    .first(...requestColumns, 'workflow_started_at');
  return row && { request: toSigningRequest(row), workflowStarted: row.workflow_started_at !== null };
}

/** A request as it is made: its row, its documents in order, its recipients in signing order and their verifications. */
export interface NewSigningRequest {
  request: Record<string, unknown> & { id: string };
  documents: { id: string; sha256: string | null }[];
  signers: { id: string; name: string; email: string; recipientType: RecipientType; routingOrder: number; fields?: SignerField[] }[];
  verifications: { signerId: string; method: VerificationMethod; codeHash: string | null }[];
}

/** Writes a new request, its documents, signers and verifications, in the caller's transaction. */
export async function insertSigningRequest(trx: Db, { request, documents, signers, verifications }: NewSigningRequest): Promise<SigningRequest> {
  const [row] = await trx('signing_requests').insert(request).returning(requestColumns);
  await trx('signing_request_documents').insert(
    documents.map((document, index) => ({ signing_request_id: request.id, position: index + 1, document_id: document.id, original_sha256: document.sha256 })),
  );
  await trx('signers').insert(
    signers.map((signer, index) => ({
      id: signer.id,
      signing_request_id: request.id,
      name: signer.name,
      email: signer.email,
      order: index + 1,
      recipient_type: signer.recipientType,
      routing_order: signer.routingOrder,
      fields: signer.fields ? JSON.stringify(signer.fields) : null,
    })),
  );
  if (verifications.length > 0) {
    await trx('signer_verifications').insert(
      verifications.map((verification) => ({ signer_id: verification.signerId, method: verification.method, code_hash: verification.codeHash })),
    );
  }
  return toSigningRequest(row);
}

/** A request's recipients as its workflow routes them, in signing order, and how many documents it has. */
export async function findRouting(db: Db, requestId: string): Promise<{ recipients: RoutedRecipient[]; documentCount: number }> {
  const [rows, [{ count }]] = await Promise.all([
    db('signers').where({ signing_request_id: requestId }).orderBy('order').select('id', 'recipient_type', 'routing_order'),
    db('signing_request_documents').where({ signing_request_id: requestId }).count({ count: '*' }),
  ]);
  const recipients = rows.map((row) => ({ id: row.id as string, type: row.recipient_type as RecipientType, routingOrder: row.routing_order as number }));
  return { recipients, documentCount: Number(count) };
}

export async function markWorkflowStarted(db: Db, requestId: string) {
  await db('signing_requests').where({ id: requestId }).whereNull('workflow_started_at').update({ workflow_started_at: db.fn.now() });
}

/** Up to `limit` requests committed before `before` whose workflow was never started, oldest first. */
export async function findOrphanedSigningRequests(db: Db, before: Date, limit: number): Promise<SigningRequest[]> {
  const rows = await db('signing_requests')
    .whereNull('workflow_started_at')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .select(requestColumns);
  return rows.map(toSigningRequest);
}

/**
 * What a signer's link opens: the signer, their request and its sender, its documents, until when the
 * link works, the embedded session it is (if any), and whether recipients of an earlier step have yet
 * to do their part.
 */
export async function findSigningLink(db: Db, tokenHash: string) {
  // Two round trips: the sign path waits for them before its update is even sent.
  const link = await db('signer_tokens as t')
    .join('signers as s', 's.id', 't.signer_id')
    .leftJoin('signer_verifications as v', 'v.signer_id', 's.id')
    .where('t.token_hash', tokenHash)
    .first(
      's.*',
      't.expires_at as link_expires_at',
      'v.method as verification_method',
      'v.verified_at as verification_verified_at',
      'v.locked_until as verification_locked_until',
      't.embedded_link_hash',
      't.verified_at as session_verified_at',
    );
  if (!link) return undefined;
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
  return {
    signer,
    request: toSigningRequest(row),
    sender: { name: row.sender_name as string | null, email: row.sender_email as string },
    documents,
    linkExpiresAt: link.link_expires_at as Date,
    /** A session an embedded URL opened (its page holds the token), and whether its signer gave their code through it. */
    embeddedSession: link.embedded_link_hash ? { verified: link.session_verified_at !== null } : null,
    waitingOnOthers: Number(earlier[0].count) > 0,
  };
}

/** The sealed PDFs of a request, by document id. */
export async function findSealedContents(db: Db, requestId: string): Promise<Map<string, Buffer>> {
  const rows = await db('sealed_documents').where({ signing_request_id: requestId }).select('document_id', 'content');
  return new Map(rows.map((row) => [row.document_id as string, row.content as Buffer]));
}

/** One document's sealed PDF, if it is sealed. */
export async function findSealedContent(db: Db, requestId: string, documentId: string): Promise<Buffer | undefined> {
  const row = await db('sealed_documents').where({ signing_request_id: requestId, document_id: documentId }).first('content');
  return row?.content;
}

/**
 * The sealed documents whose sealed PDF has this SHA-256, now or before an archive renewal replaced it
 * (one, but for a PDF sealed twice in one request), with their request's completion.
 */
export async function findSealedDocumentsByHash(db: Db, sha256: string) {
  const versions = db('sealed_document_versions').where({ sha256 }).select('signing_request_id', 'document_id');
  const rows: { signing_request_id: string; document_id: string; completed_at: Date | null; file_name: string }[] = await db('sealed_documents as s')
    .join('signing_requests as r', 'r.id', 's.signing_request_id')
    .join('documents as d', 'd.id', 's.document_id')
    .where('s.sha256', sha256)
    .orWhereIn(['s.signing_request_id', 's.document_id'], versions)
    .orderBy(['s.signing_request_id', 's.document_id'])
    .limit(20)
    .select('s.signing_request_id', 's.document_id', 'r.completed_at', 'd.file_name');
  return rows.map((row) => ({ signingRequestId: row.signing_request_id, documentId: row.document_id, completedAt: row.completed_at, fileName: row.file_name }));
}

/** Whether a certificate (hex SHA-256 of its DER) ever sealed a document here: the current seal certificate, or one rotated out. */
export async function isSealCertificate(db: Db, sha256: string): Promise<boolean> {
  return (await db('seal_certificates').where({ sha256 }).first('sha256')) !== undefined;
}

/** The SHA-256 of each sealed PDF of a request, by document id. */
export async function findSealedHashes(db: Db, requestId: string): Promise<Map<string, string>> {
  const rows = await db('sealed_documents').where({ signing_request_id: requestId }).select('document_id', 'sha256');
  return new Map(rows.map((row) => [row.document_id as string, row.sha256 as string]));
}

/** One document's sealed PDF, kept once: a retry that sealed it again keeps the first. Its seal certificate is noted among those ever used. */
export async function insertSealedDocument(db: Db, requestId: string, documentId: string, sealed: SealedPdf) {
  await db('seal_certificates').insert({ sha256: sealed.certificateSha256, subject: sealed.certificateSubject }).onConflict('sha256').ignore();
  await db('sealed_documents')
    .insert({
      signing_request_id: requestId,
      document_id: documentId,
      content: sealed.pdf,
      sha256: sealed.sha256,
      seal_level: sealed.level,
      seal_certificate_sha256: sealed.certificateSha256,
      archive_renew_after: sealed.archive?.renewAfter ?? null,
      archive_algorithms: sealed.archive?.algorithms ?? null,
    })
    .onConflict(['signing_request_id', 'document_id'])
    .ignore();
}

/** Notes a document's sealed SHA-256 on the request's packet. */
export async function recordSealedHash(trx: Db, requestId: string, documentId: string, sealedSha256: string) {
  await trx('signing_request_documents').where({ signing_request_id: requestId, document_id: documentId }).update({ sealed_sha256: sealedSha256 });
}

/** Changes a request from pending to `status`; false (and nothing written) when it is no longer pending. */
export const endSigningRequest = async (trx: Db, requestId: string, status: RequestStatus, extra: Record<string, unknown> = {}) =>
  (await trx('signing_requests')
    .where({ id: requestId, status: 'pending' })
    .update({ status, completed_at: trx.fn.now(), updated_at: trx.fn.now(), ...extra })) > 0;

/** A request's audit trail, oldest first, as its certificate of completion lists it. */
export async function findAuditSteps(db: Db, requestId: string): Promise<{ at: Date; type: string; actor?: string }[]> {
  const steps = await db('audit_trail').where({ signing_request_id: requestId }).orderBy('id').select('created_at', 'action', 'actor');
  return steps.map((step) => ({ at: step.created_at, type: step.action, actor: step.actor ?? undefined }));
}

// A signer's part. Each update is conditional on the signer's status (and, where it says so, on the
// request still being pending): false when it matched no row, and nothing was written.

const requestIsPending = (trx: Db, requestId: string) => trx('signing_requests').where({ id: requestId, status: 'pending' }).select(trx.raw('1'));

/** A signer who had not viewed the request yet has now. */
export const markSignerViewed = async (trx: Db, signerId: string) =>
  (await trx('signers').where({ id: signerId }).whereIn('status', ['pending', 'notified']).update({ status: 'viewed', viewed_at: trx.fn.now() })) > 0;

/** A signature, unless the signer has signed or declined already or the request has ended. */
export const recordSignerSignature = async (
  trx: Db,
  requestId: string,
  signerId: string,
  sign: { signedAt: Date; signature: NonNullable<Signer['signature']>; ipAddress: string | null; userAgent: string | null },
) =>
  (await trx('signers')
    .where({ id: signerId })
    .whereNotIn('status', ['signed', 'declined'])
    .whereExists(requestIsPending(trx, requestId))
    .update({
      status: 'signed',
      signed_at: sign.signedAt,
      signature: JSON.stringify(sign.signature),
      ip_address: sign.ipAddress,
      user_agent: sign.userAgent,
    })) > 0;

/**
 * A signer's answers added to the request's signer_text, so that search finds what they filled in, as it finds their
 * name. Its caller locks the row before the signer's (lockSigningRequest), in the order a decline takes them.
 */
export const appendSignerText = (trx: Db, requestId: string, words: string) =>
  trx('signing_requests')
    .where({ id: requestId })
    .update({ signer_text: trx.raw(`signer_text || ' ' || ?`, [words]) });

/** The request's row, locked until the transaction ends. */
export const lockSigningRequest = (trx: Db, requestId: string) => trx('signing_requests').where({ id: requestId }).forNoKeyUpdate().first('id');

/** A decline, unless the signer has signed or declined already. */
export async function markSignerDeclined(
  trx: Db,
  signerId: string,
  decline: { declinedAt: Date; reason: string | null; ipAddress: string | null; userAgent: string | null },
) {
  await trx('signers').where({ id: signerId }).whereNotIn('status', ['signed', 'declined']).update({
    status: 'declined',
    declined_at: decline.declinedAt,
    decline_reason: decline.reason,
    ip_address: decline.ipAddress,
    user_agent: decline.userAgent,
  });
}

/** A part that is a status and nothing more (an approval, a viewer's view), from one of `from`, while the request is pending. */
export const recordSignerPart = async (
  trx: Db,
  requestId: string,
  signerId: string,
  part: { status: 'approved' | 'viewed'; from: string[]; at: 'approved_at' | 'viewed_at'; when: Date; ipAddress: string | null; userAgent: string | null },
) =>
  (await trx('signers')
    .where({ id: signerId })
    .whereIn('status', part.from)
    .whereExists(requestIsPending(trx, requestId))
    .update({ status: part.status, [part.at]: part.when, ip_address: part.ipAddress, user_agent: part.userAgent })) > 0;

// A signer's e-mails

/** A signer invited now; false when they were invited already. */
export const markSignerNotified = async (trx: Db, signerId: string) =>
  (await trx('signers').where({ id: signerId, status: 'pending' }).update({ status: 'notified', notified_at: trx.fn.now() })) > 0;

/** The first e-mail to a signer starts their hour; a later call does not move it. */
export async function markFirstMailed(trx: Db, signerId: string) {
  await trx('signers').where({ id: signerId }).whereNull('last_mailed_at').update({ last_mailed_at: trx.fn.now() });
}

export async function markSignerMailed(trx: Db, signerId: string, at: Date) {
  await trx('signers').where({ id: signerId }).update({ last_mailed_at: at });
}

/** Locks, in signing order, those of `signerIds` on the request who have neither signed nor declined, and tells when each was last e-mailed. */
export async function lockSignersToRemind(trx: Db, requestId: string, signerIds: string[]): Promise<{ id: string; lastMailedAt: Date | null }[]> {
  const rows = await trx('signers')
    .whereIn('id', signerIds)
    .where({ signing_request_id: requestId })
    .whereNotIn('status', ['signed', 'declined'])
    .orderBy('order')
    .forUpdate()
    .select('id', 'last_mailed_at');
  return rows.map((row) => ({ id: row.id, lastMailedAt: row.last_mailed_at }));
}

/** The signers of the audit steps written under these idempotency keys. */
export const findSignersOfAuditSteps = (trx: Db, keys: string[]): Promise<string[]> => trx('audit_trail').whereIn('idempotency_key', keys).pluck('signer_id');
