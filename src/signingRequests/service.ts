import { ApplicationFailure, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Account } from '../accounts/service';
import type { Config } from '../config';
import type { TextTagFinder } from '../pdf/textTags';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import { createDocumentFromCopy, lockDocument, pageSizesOf, type Document } from '../documents/service';
import { conflict, notFound, serverBusy, validationError } from '../errors';
import { newId } from '../ids';
import { hashToken, hashVerificationCode, loadTokenSecret, randomToken, verificationKey } from './tokens';
import { templateRequestProblems, templateSigners } from './fromTemplate';
import { copiesWithoutTags, readRequestTextTags, textTagProblems, withTaggedFields, type DocumentTags } from './fromTextTags';
import { findTemplate, findTemplateFile } from '../templates/store';
// Against the folders' order on purpose: requests start and update their workflow through the typed
// Temporal client, whose types name the workflow functions (docs/architecture.md, "Tiers").
import { signingRequestHandle, startSigningRequestWorkflow } from '../temporal/client';
import {
  changeRefused,
  firstStepOf,
  hasActed,
  refusalTypes,
  type RecipientType,
  type RoutedRecipient,
  type SigningRequestProgress,
  waitingOn,
} from '../domain/signingRequests';
import { mailHourSpent, openMailHour } from '../mail/allowance';
import { signedFileNames } from './lifecycle';
import { zipSync } from 'fflate';
import { invitationMailKey, remindable, remindedWithinTheHour } from './reminders';
import { requestLimitsFrom, tooManyDocuments, tooManyPages, type RequestField, type RequestLimits, type SignerField } from '../documents/fields';
import { plainHttpProblems, type SigningRequestCreateInput, type VerificationInput } from './schema';
import { findSigningRequest, requestColumns, toSigningRequest, type SigningRequest, type SigningRequestWithSigners } from './store';
import { releaseSignersOutOfTries } from './verification';

export const DAY_MS = 24 * 60 * 60 * 1000;

/** What the request services need, from the process's settings. */
export const signingDepsFrom = ({
  db,
  events,
  temporal,
  textTags,
  config,
}: {
  db: Db;
  events: EventLog;
  temporal: Client;
  textTags: TextTagFinder;
  config: Config;
}): SigningDeps => ({
  db,
  events,
  temporal,
  textTags,
  taskQueue: config.TEMPORAL_TASK_QUEUE,
  publicUrl: config.publicUrl,
  rateLimitMultiplier: config.RATE_LIMIT_MULTIPLIER,
  requestLimits: requestLimitsFrom(config),
  verificationKey: verificationKey(loadTokenSecret(config.SIGNING_TOKEN_SECRET, config.dataDir)),
  loopbackHttp: config.NODE_ENV !== 'production',
});
/** How long `progress` waits for a running workflow to answer. */
export const PROGRESS_QUERY_MS = 2000;

export interface SigningDeps {
  db: Db;
  events: EventLog;
  temporal: Client;
  /** Finds and takes out the text tags of the documents a request is made on (src/pdf/textTags.ts). */
  textTags: TextTagFinder;
  taskQueue: string;
  publicUrl: string;
  /** RATE_LIMIT_MULTIPLIER, which raises the plans' e-mails an hour too. */
  rateLimitMultiplier: number;
  requestLimits: RequestLimits;
  /** What signers' access codes are hashed with (tokens.ts). */
  verificationKey: Buffer;
  /** Whether return URLs and embedding origins may be plain http to the loopback (not with NODE_ENV=production). */
  loopbackHttp: boolean;
}

/**
 * Records the request and its signers, then starts its workflow (id = request id) before answering; the
 * sweeper covers a crash between the two. The document is locked for the transaction, so it cannot be
 * deleted while a request is being made on it, and every field is checked against its pages; or it is
 * made from a template in the same transaction. The invitations that go out first (every signer's, or
 * the first signer's in sequential order) are counted in the account's e-mails this hour, or the
 * request is refused with a 429.
 */
export async function createSigningRequest(
  { db, events, temporal, textTags, taskQueue, rateLimitMultiplier, requestLimits, verificationKey: codeKey, loopbackHttp }: SigningDeps,
  account: Account,
  input: SigningRequestCreateInput,
  { requestId = newId('signingRequest') }: { requestId?: string } = {},
) {
  const insecure = plainHttpProblems(loopbackHttp, [['redirectUrl', input.redirectUrl]]);
  if (insecure.length > 0) throw validationError(insecure);
  // An id given (one derived from an Idempotency-Key) may have been made already, by a try whose process
  // died between its commit and its answer: that request is the answer, its workflow started if it was not.
  const made = await db('signing_requests')
    .where({ id: requestId, account_id: account.id })
    .first(...requestColumns, 'workflow_started_at');
  if (made) {
    if (!made.workflow_started_at) await resumeSigningRequest(db, temporal, taskQueue, toSigningRequest(made));
    return findSigningRequest(db, account.id, requestId);
  }
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : new Date(Date.now() + (input.expiresInDays ?? 30) * DAY_MS);
  const signerIds = input.signers.map(() => newId('signer'));
  // Read before the transaction: pdf.js reads every page of each document.
  const tags = input.template_id === undefined ? await readRequestTextTags(db, textTags, account.id, input) : new Map();
  const request = await unitOfWork(db, async (trx) => {
    const { documents, signers } = await documentsAndSigners(trx, events, account, input, requestLimits, tags);
    // Each recipient's step: its routingOrder, or the signing order's (parallel: one step; sequential: one each).
    const recipients: RoutedRecipient[] = signers.map((signer, index) => ({
      id: signerIds[index],
      type: signer.recipientType,
      routingOrder: signer.routingOrder ?? (input.signingOrder === 'sequential' ? index + 1 : 1),
    }));
    const [document] = documents;
    const [row] = await trx('signing_requests')
      .insert({
        id: requestId,
        account_id: account.id,
        document_id: document.id,
        title: input.title,
        message: input.message ?? null,
        signing_order: input.signingOrder,
        expires_at: expiresAt,
        reminder_every_days: input.reminderEveryDays,
        original_sha256: document.sha256,
        signer_text: signers.map((signer) => `${signer.name} ${signer.email}`).join(' '),
        redirect_url: input.redirectUrl ?? null,
      })
      .returning(requestColumns);
    await trx('signing_request_documents').insert(
      documents.map((each, index) => ({ signing_request_id: requestId, position: index + 1, document_id: each.id, original_sha256: each.sha256 })),
    );
    await trx('signers').insert(
      signers.map((signer, index) => ({
        id: signerIds[index],
        signing_request_id: requestId,
        name: signer.name,
        email: signer.email,
        order: index + 1,
        recipient_type: recipients[index].type,
        routing_order: recipients[index].routingOrder,
        fields: signer.fields ? JSON.stringify(signer.fields) : null,
      })),
    );
    const verified = signers.flatMap((signer, index) => (signer.verification ? [{ id: signerIds[index], ...signer.verification }] : []));
    if (verified.length > 0) {
      await trx('signer_verifications').insert(
        verified.map((signer) => ({
          signer_id: signer.id,
          method: signer.method,
          code_hash: signer.method === 'access_code' ? hashVerificationCode(codeKey, signer.id, signer.code) : null,
        })),
      );
    }
    await trx('audit_trail').insert({ signing_request_id: requestId, action: 'created', actor: account.email, idempotency_key: `created:${requestId}` });
    // Invited when it is made: the recipients of its first step.
    const invitedFirst = firstStepOf(recipients.filter((recipient) => recipient.type !== 'cc')).map((recipient) => recipient.id);
    await (await openMailHour(trx, account, rateLimitMultiplier)).takeAll(invitedFirst.map(invitationMailKey), 'This request');
    return { request: toSigningRequest(row), documentCount: documents.length, recipients };
  });
  await startSigningRequest(db, temporal, taskQueue, request.request, request.recipients, request.documentCount);
  return findSigningRequest(db, account.id, requestId);
}

/**
 * The documents a request is made on, in order, and its signers, with their fields, in signing order.
 * Each document is locked for the transaction (in id order, so that two requests on the same documents
 * cannot deadlock), so none can be deleted while the request is being made; every field is checked
 * against the pages of its document. A document with text tags (`tags`, read before) is sent as its copy
 * without them, its tags the fields of the signers they name (textTags: "fields"), or refused.
 */
async function documentsAndSigners(
  trx: Db,
  events: EventLog,
  account: Account,
  input: SigningRequestCreateInput,
  limits: RequestLimits,
  tags: Map<string, DocumentTags>,
): Promise<{ documents: Document[]; signers: RequestRecipient[] }> {
  if (input.template_id !== undefined) return documentsFromTemplate(trx, events, account, input.template_id, input, limits);
  const ids = input.documents?.map((entry) => entry.document_id) ?? [input.document_id ?? ''];
  const tooMany = tooManyDocuments(ids.length, limits);
  if (tooMany) throw validationError([tooMany]);
  const locked = new Map<string, Document>();
  for (const id of [...ids].sort()) {
    const document = await lockDocument(trx, account.id, id);
    if (!document) throw notFound('Document');
    if (document.status !== 'ready') throw conflict(`The document ${id} has no PDF yet: upload it with PUT /documents/{id}/file first.`);
    locked.set(id, document);
  }
  const documents = ids.map((id) => locked.get(id)!);
  const tooLong = tooManyPages(
    documents.map((document) => document.pageCount ?? 0),
    limits,
  );
  if (tooLong) throw validationError([tooLong]);
  const pageSizes = new Map<string, [number, number][]>();
  for (const document of documents) pageSizes.set(document.id, await pageSizesOf(trx, document.id, undefined, { remember: true }));
  const problems = [...fieldProblems(input.signers, ids, pageSizes), ...textTagProblems(input, tags)];
  if (problems.length) throw validationError(problems);
  const copies = await copiesWithoutTags(
    trx,
    events,
    account,
    documents.map((document) => ({ document, pageSizes: pageSizes.get(document.id)! })),
    tags,
  );
  const idOf = (id: string) => copies.get(id)?.id ?? id;
  const signers = input.signers.map(({ fields, ...signer }) => ({
    ...signer,
    // Stored with the id of their document (its copy without tags), given or not.
    fields: fields?.map(({ document_id, ...field }) => ({ ...field, documentId: idOf(document_id ?? ids[0]) })),
  }));
  return { documents: documents.map((document) => copies.get(document.id) ?? document), signers: withTaggedFields(input, tags, signers, idOf) };
}

/**
 * A new document from each of the template's PDFs, each counted against the monthly document quota, and
 * one recipient per role, in the roles' order, of its role's kind and step, a signer with its role's
 * fields on those documents and the values prefilled in them.
 */
async function documentsFromTemplate(trx: Db, events: EventLog, account: Account, templateId: string, input: SigningRequestCreateInput, limits: RequestLimits) {
  const template = await findTemplate(trx, account.id, templateId);
  if (!template) throw notFound('Template');
  const problems = templateRequestProblems(template, input);
  // The template kept within them when it was made; the settings may have been lowered since.
  if (template.documents.length > limits.maxDocuments)
    problems.push(`template_id must name a template of at most ${limits.maxDocuments} documents (REQUEST_MAX_DOCUMENTS); it has ${template.documents.length}`);
  const pages = template.documents.reduce((sum, document) => sum + document.pageSizes.length, 0);
  if (pages > limits.maxPages)
    problems.push(`template_id must name a template of at most ${limits.maxPages} pages in all (REQUEST_MAX_PAGES); it has ${pages}`);
  if (problems.length) throw validationError(problems);
  const documents: Document[] = [];
  for (const [index, each] of template.documents.entries()) {
    documents.push(
      await createDocumentFromCopy(trx, events, account, {
        // A template of one document names it after itself, as it always has.
        fileName: template.documents.length === 1 ? `${template.name}.pdf` : each.fileName,
        content: await findTemplateFile(trx, template.id, index + 1),
        pageSizes: each.pageSizes,
        sha256: each.sha256,
      }),
    );
  }
  const signers = templateSigners(
    template,
    input,
    documents.map((document) => document.id),
  );
  return { documents, signers };
}

/**
 * Starts the workflow of a committed request and notes that it did. Safe to repeat: a second start
 * finds the first. The sweeper calls it for requests whose api process died before the start.
 */
export async function startSigningRequest(
  db: Db,
  temporal: Client,
  taskQueue: string,
  request: SigningRequest,
  recipients: RoutedRecipient[],
  documentCount: number,
) {
  await startSigningRequestWorkflow(
    temporal,
    taskQueue,
    {
      requestId: request.id,
      signingOrder: request.signingOrder,
      signerIds: recipients.map((recipient) => recipient.id),
      recipients,
      expiresAt: request.expiresAt.toISOString(),
      reminderEveryMs: request.reminderEveryDays * DAY_MS,
    },
    { accountId: request.accountId, documentId: request.documentId, title: request.title, documentCount },
  );
  await db('signing_requests').where({ id: request.id }).whereNull('workflow_started_at').update({ workflow_started_at: db.fn.now() });
}

/** Starts the workflow of a committed request from what was stored of it: its recipients and documents. */
export async function resumeSigningRequest(db: Db, temporal: Client, taskQueue: string, request: SigningRequest) {
  const recipients = (await db('signers').where({ signing_request_id: request.id }).orderBy('order').select('id', 'recipient_type', 'routing_order')).map(
    (row) => ({ id: row.id as string, type: row.recipient_type as RecipientType, routingOrder: row.routing_order as number }),
  );
  const [{ count }] = await db('signing_request_documents').where({ signing_request_id: request.id }).count({ count: '*' });
  await startSigningRequest(db, temporal, taskQueue, request, recipients, Number(count));
}

/** Every field must lie on a page that exists in its document, inside its box: sealing draws it there. */
function fieldProblems(signers: { fields?: RequestField[] }[], documentIds: string[], sizesOf: Map<string, [number, number][]>): string[] {
  const problems: string[] = [];
  signers.forEach((signer, s) =>
    signer.fields?.forEach((field, f) => {
      const at = `signers.${s}.fields.${f}`;
      const pageSizes = sizesOf.get(field.document_id ?? documentIds[0]);
      // Checked once the documents are found, so that a field naming a document that does not exist is not found first.
      if (!pageSizes) return void problems.push(`${at}.document_id must be one of the request’s documents`);
      const size = pageSizes[field.page - 1];
      if (!size) return void problems.push(`${at}.page must be at most ${pageSizes.length}: the document has ${pageSizes.length} page(s)`);
      const [width, height] = size;
      if (field.x + field.width > width || field.y + field.height > height) {
        problems.push(`${at} must lie inside page ${field.page} (${round(width)} × ${round(height)} points)`);
      }
    }),
  );
  return problems;
}

const round = (points: number) => Math.round(points * 100) / 100;

/** A recipient as a request is made with it: its kind, its step when given, and a signer's fields. */
interface RequestRecipient {
  name: string;
  email: string;
  recipientType: RecipientType;
  routingOrder?: number;
  fields?: SignerField[];
  verification?: VerificationInput;
}

/** The request with `progress`: from its workflow while it runs, from the database once it has finished (or the workflow does not answer). */
export async function getSigningRequest({ db, temporal }: SigningDeps, accountId: string, id: string) {
  const found = await findSigningRequest(db, accountId, id);
  let progress = progressFromDatabase(found);
  if (found.request.status === 'pending') {
    progress = await signingRequestHandle(temporal, id)
      .progress(PROGRESS_QUERY_MS)
      .catch(() => progress);
  }
  return { ...found, progress };
}

/** What the database alone tells: enough for lists, and for a request whose workflow has finished. */
export function progressFromDatabase({ request, signers }: SigningRequestWithSigners): SigningRequestProgress {
  if (request.status !== 'pending') return { stage: 'finished', waitingFor: [], sealing: null };
  const waiting = waitingOn(request.status, signers);
  if (waiting.length === 0) return { stage: 'sealing', waitingFor: [], sealing: null };
  return { stage: 'awaiting_signers', waitingFor: waiting.map((signer) => signer.id), sealing: null };
}

/**
 * Runs a workflow update, turning the workflow's refusals (already acted, not your turn, ended, completing)
 * into 409s, and a change the database refused for good (nothing changed) into a 400.
 */
export async function runUpdate<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && (refusalTypes as readonly string[]).includes(cause.type ?? '')) throw conflict(cause.message);
    if (cause instanceof ApplicationFailure && cause.type === changeRefused)
      throw validationError(['body could not be recorded as given (the database refused it); nothing changed']);
    // The database said pending (callers check it first): a workflow not started yet (the sweeper starts
    // it), or one whose task is being retried after a worker died, answers in a moment.
    if ((error as Error).name === 'WorkflowNotFoundError' || isTemporarilyRefused(error)) {
      throw serverBusy('This signing request is busy for a moment (its worker is restarting); try again.');
    }
    throw error;
  }
}

// gRPC FAILED_PRECONDITION ("Workflow Task in failed state") and UNAVAILABLE, from the client or its cause.
function isTemporarilyRefused(error: unknown): boolean {
  for (let cause = error as { code?: unknown; cause?: unknown } | undefined; cause; cause = cause.cause as typeof cause) {
    if (cause.code === 9 || cause.code === 14) return true;
  }
  return false;
}

async function assertPending(db: Db, accountId: string, id: string) {
  const found = await findSigningRequest(db, accountId, id);
  if (found.request.status !== 'pending') throw conflict(`This signing request is ${found.request.status}.`);
  return found;
}

export async function cancelSigningRequest(deps: SigningDeps, accountId: string, id: string, reason?: string) {
  await assertPending(deps.db, accountId, id);
  await runUpdate(() => signingRequestHandle(deps.temporal, id).cancel(reason));
  return getSigningRequest(deps, accountId, id);
}

/**
 * A reminder round by the request's workflow (sendReminders decides whom, under the hourly limits): 200
 * naming whom it reminded, or a 429 with the rate-limit headers when it could remind nobody. What plainly
 * cannot go (every signer mailed within the hour, or no e-mail left this hour) is refused before the
 * workflow, so that a flood of reminds costs its history nothing. A signer reminded who had spent every
 * wrong code allowed may try again (releaseSignersOutOfTries): the sender's act, never a scheduled reminder's.
 */
export async function remindSigners({ db, temporal, rateLimitMultiplier }: SigningDeps, account: Account, id: string) {
  const remindableNow = async () => {
    const found = await assertPending(db, account.id, id);
    const { waitingFor } = progressFromDatabase(found);
    return remindable(
      found.signers.filter((signer) => waitingFor.includes(signer.id)),
      new Date(),
    );
  };
  const { ready, nextAt } = await remindableNow();
  if (ready.length === 0 && nextAt) throw remindedWithinTheHour(nextAt);
  const hour = await openMailHour(db, account, rateLimitMultiplier, { lock: false });
  if (hour.remaining === 0) {
    // A remind that committed since the signers were read may have spent the hour on these very signers:
    // then they are why nothing goes, as the workflow would say, whichever of two reminds at once came second.
    const again = await remindableNow();
    if (again.ready.length === 0 && again.nextAt) throw remindedWithinTheHour(again.nextAt);
    throw mailHourSpent(account.plan, hour.limit, await hour.fitsAt(1));
  }
  const { remindedSignerIds, limitedBy } = await runUpdate(() => signingRequestHandle(temporal, id).remind());
  if (remindedSignerIds.length === 0 && limitedBy?.limit === 'signer') throw remindedWithinTheHour(new Date(limitedBy.retryAt));
  if (remindedSignerIds.length === 0 && limitedBy?.limit === 'account') throw mailHourSpent(account.plan, limitedBy.perHour, new Date(limitedBy.retryAt));
  await releaseSignersOutOfTries(db, { requestId: id, signerIds: remindedSignerIds, actor: account.email });
  return { remindedSignerIds };
}

/** One document's sealed PDF; 404 for a document not in the request, 409 before the request is completed. */
export async function getSealedDocument(db: Db, accountId: string, id: string, documentId: string) {
  const { request, documents } = await findSigningRequest(db, accountId, id);
  const index = documents.findIndex((document) => document.documentId === documentId);
  if (index < 0) throw notFound('Document');
  const sealed = await db('sealed_documents').where({ signing_request_id: id, document_id: documentId }).first('content');
  if (!sealed || request.status !== 'completed') throw notSealedYet(request.status);
  return { content: sealed.content as Buffer, fileName: signedFileNames(documents)[index] };
}

/** The sealed PDF of a request with one document; a ZIP of every sealed PDF, in order, when it has several. */
export async function getSealedDocuments(db: Db, accountId: string, id: string) {
  const { request, documents } = await findSigningRequest(db, accountId, id);
  if (request.status !== 'completed') throw notSealedYet(request.status);
  const rows = await db('sealed_documents').where({ signing_request_id: id }).select('document_id', 'content');
  const names = signedFileNames(documents);
  const contents = documents.map((document) => rows.find((row) => row.document_id === document.documentId)?.content as Buffer | undefined);
  if (contents.some((content) => !content)) throw notSealedYet(request.status);
  if (documents.length === 1) return { content: contents[0]!, fileName: names[0], type: 'application/pdf' };
  // Stored, not deflated: sealed PDFs are compressed already, and a signature covers their exact bytes.
  const zip = zipSync(Object.fromEntries(names.map((name, index) => [name, [contents[index]!, { level: 0 }]])), { mtime: request.completedAt ?? new Date() });
  return {
    content: Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength),
    fileName: `${request.title.replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_')} (signed).zip`,
    type: 'application/zip',
  };
}

const notSealedYet = (status: string) => conflict(`The sealed PDF exists once every signer has signed; this request is ${status}.`);

/** A fresh signing link for one signer, for apps that show the signing page themselves. */
export async function createSigningLink({ db, publicUrl }: SigningDeps, accountId: string, requestId: string, signerId: string) {
  const { request, signers } = await assertPending(db, accountId, requestId);
  const signer = signers.find((candidate) => candidate.id === signerId);
  if (!signer) throw notFound('Signer');
  if (signer.recipientType === 'cc') throw conflict('A cc recipient gets the sealed documents by e-mail, never a signing link.');
  if (hasActed(signer)) throw conflict(`This signer has already ${signer.status}.`);
  const token = randomToken();
  await db('signer_tokens').insert({ token_hash: hashToken(token), signer_id: signer.id, expires_at: request.expiresAt });
  return { url: `${publicUrl}/sign/${token}`, expiresAt: request.expiresAt.toISOString() };
}
