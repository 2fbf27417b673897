import type { Account } from '../accounts/service';
import type { Db } from '../db';
import { actorLabel, type Actor } from '../domain/actors';
import { currentActor } from '../events/actingAs';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import { createDocumentFromCopy, lockDocument, pageSizesOf, type Document } from '../documents/service';
import { tooManyDocuments, tooManyPages, type RequestField, type RequestLimits } from '../documents/fields';
import { conflict, notFound, validationError } from '../errors';
import { newId } from '../ids';
import { openMailHour } from '../mail/allowance';
import { findTemplate, findTemplateFile } from '../templates/store';
import { firstStepOf, type RoutedRecipient } from '../domain/signingRequests';
import { templateRequestProblems, templateSigners, type RequestRecipient } from './fromTemplate';
import { copiesWithoutTags, readRequestTextTags, textTagProblems, withTaggedFields, type DocumentTags } from './fromTextTags';
import { invitationMailKey } from './reminders';
import { plainHttpProblems, type SigningRequestCreateInput } from './schema';
import type { SigningDeps } from './deps';
import { findMadeSigningRequest, findSigningRequest, insertSigningRequest, recordAuditStep } from './store';
import { hashVerificationCode } from './tokens';
import { resumeSigningRequest, startSigningRequest } from './workflow';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Records the request and its signers, then starts its workflow (id = request id) before answering; the
 * sweeper covers a crash between the two (startOrphanedSigningRequests). The document is locked for the
 * transaction, so it cannot be deleted while a request is being made on it, and every field is checked
 * against its pages; or it is made from a template in the same transaction. The invitations that go out first (every signer's, or
 * the first signer's in sequential order) are counted in the account's e-mails this hour, or the
 * request is refused with a 429.
 */
export async function createSigningRequest(
  { db, events, temporal, textTags, taskQueue, rateLimitMultiplier, requestLimits, verificationKey: codeKey, loopbackHttp }: SigningDeps,
  account: Account,
  input: SigningRequestCreateInput,
  { requestId = newId('signingRequest'), bulk }: { requestId?: string; bulk?: { id: string; row: number; sentBy: Actor | null } } = {},
) {
  const insecure = plainHttpProblems(loopbackHttp, [['redirectUrl', input.redirectUrl]]);
  if (insecure.length > 0) throw validationError(insecure);
  // An id given (one derived from an Idempotency-Key) may have been made already, by a try whose process
  // died between its commit and its answer: that request is the answer, its workflow started if it was not.
  const made = await findMadeSigningRequest(db, account.id, requestId);
  if (made) {
    if (!made.workflowStarted) await resumeSigningRequest(db, temporal, taskQueue, made.request);
    return findSigningRequest(db, account.id, requestId);
  }
  // Who sends it: the member or API key of this request (a bulk send's rows, the job's maker: sentBy).
  const sentBy = bulk?.sentBy ?? currentActor() ?? null;
  const expiresAt = input.expiresAt ? new Date(input.expiresAt) : new Date(Date.now() + (input.expiresInDays ?? 30) * DAY_MS);
  const signerIds = input.signers.map(() => newId('signer'));
  // Read before the transaction: pdf.js reads every page of each document.
  const tags = input.template_id === undefined ? await readRequestTextTags(db, textTags, account.id, input) : new Map();
  const created = await unitOfWork(db, async (trx) => {
    const { documents, signers } = await documentsAndSigners(trx, events, account, input, requestLimits, tags);
    // Each recipient's step: its routingOrder, or the signing order's (parallel: one step; sequential: one each).
    const recipients: RoutedRecipient[] = signers.map((signer, index) => ({
      id: signerIds[index],
      type: signer.recipientType,
      routingOrder: signer.routingOrder ?? (input.signingOrder === 'sequential' ? index + 1 : 1),
    }));
    const [document] = documents;
    const request = await insertSigningRequest(trx, {
      request: {
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
        sent_by: sentBy ? JSON.stringify(sentBy) : null,
        ...(bulk ? { bulk_send_id: bulk.id, bulk_row: bulk.row } : {}),
      },
      documents,
      signers: signers.map((signer, index) => ({
        ...signer,
        id: signerIds[index],
        recipientType: recipients[index].type,
        routingOrder: recipients[index].routingOrder,
      })),
      verifications: signers.flatMap((signer, index) => {
        const verification = signer.verification;
        if (!verification) return [];
        const signerId = signerIds[index];
        return [
          {
            signerId,
            method: verification.method,
            codeHash: verification.method === 'access_code' ? hashVerificationCode(codeKey, signerId, verification.code) : null,
          },
        ];
      }),
    });
    await recordAuditStep(trx, requestId, { action: 'created', key: `created:${requestId}`, actor: actorLabel(sentBy, account.email) });
    // Invited when it is made: the recipients of its first step.
    const invitedFirst = firstStepOf(recipients.filter((recipient) => recipient.type !== 'cc')).map((recipient) => recipient.id);
    await (await openMailHour(trx, account, rateLimitMultiplier)).takeAll(invitedFirst.map(invitationMailKey), 'This request');
    return { request, documentCount: documents.length, recipients };
  });
  await startSigningRequest(db, temporal, taskQueue, created.request, created.recipients, created.documentCount);
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
