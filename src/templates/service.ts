import crypto from 'node:crypto';
import { plans } from '../domain/plans';
import type { Account } from '../accounts/service';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import { getDocumentFile, pageSizesOf } from '../documents/service';
import { AppError, notFound, quotaExceeded, validationError } from '../errors';
import type { EventLog } from '../events/service';
import { type EventType } from '../domain/events';
import { newId } from '../ids';
import type { PageRenderer } from '../pdf/pageRenderer';
import { removeTagsIfAny, type TextTagFinder, type TextTagRemoval, type TextTagScan } from '../pdf/textTags';
import { tooManyDocuments, tooManyPages, type RequestLimits } from '../documents/fields';
import { validProperties, type z } from '../api/validation';
import {
  inSigningOrder,
  layoutOf,
  layoutProblems,
  limitProblems,
  roleOf,
  withTaggedFields,
  type LayoutDraft,
  type RoleInput,
  type TemplateField,
} from './layout';
import {
  MAX_ROLES,
  MAX_TEMPLATE_FIELDS,
  TemplateCreateSchema,
  TemplateFieldInputSchema,
  TemplateRoleInputSchema,
  TemplateUpdateSchema,
  type TemplateCreateInput,
  type TemplateUpdateInput,
} from './schema';
import {
  countLiveTemplates,
  findTemplate,
  findTemplateFile,
  insertTemplate,
  listTemplateRows,
  markTemplateDeleted,
  updateTemplateRow,
  type DocumentChange,
  type NewTemplateDocument,
  type Template,
} from './store';
import { lockAccount } from '../accounts/store';

export interface TemplateDeps {
  db: Db;
  events: EventLog;
  /** Finds text tags in PDFs, in child processes (src/pdf/textTags.ts). */
  textTags: TextTagFinder;
  /** Renders pages, in child processes (src/pdf/pageRenderer.ts). */
  pages: PageRenderer;
  /** A template is sent as a request, so it keeps within a request's limits. */
  requestLimits: RequestLimits;
}

/**
 * Refuses a new template once the account has as many live templates as its plan allows. The route checks
 * before the body is read; the creating transaction checks again with `lock`, which serialises concurrent
 * creations (on the account's row) so that two cannot both take the last place.
 */
export async function assertTemplateQuota(db: Db, account: Account, { lock = false } = {}) {
  const limit = plans[account.plan].templates;
  if (limit === null) return;
  if (lock) await lockAccount(db, account.id);
  const used = await countLiveTemplates(db, account.id);
  if (used >= limit) throw quotaExceeded(`The ${account.plan} plan allows ${limit} templates; delete one to make another.`, { limit, used });
}

/** A document a template copies: the account's, with its PDF. */
interface SourceDocument {
  id: string;
  fileName: string;
  content: Buffer;
  pageSizes: [number, number][];
  sha256: string;
}

async function readSourceDocument(db: Db, accountId: string, documentId: string): Promise<SourceDocument> {
  const { document, content } = await getDocumentFile(db, accountId, documentId);
  return { id: document.id, fileName: document.fileName, content, pageSizes: await pageSizesOf(db, documentId, content), sha256: document.sha256! };
}

/** The one document of documentId, or the problem that says why not (a 400, as it has always been). */
async function readDocumentIdSource(db: Db, accountId: string, documentId: string): Promise<{ source?: SourceDocument; problem?: string }> {
  try {
    return { source: await readSourceDocument(db, accountId, documentId) };
  } catch (error) {
    if (!(error instanceof AppError) || (error.status !== 404 && error.status !== 409)) throw error;
    return {
      problem: error.status === 404 ? 'documentId must name a document of this account' : 'documentId must name a document whose PDF has been uploaded',
    };
  }
}

/** Why a list of documents cannot be a template's, before any is read: one listed twice, or more than a request's limit. */
function documentListProblems(ids: string[], limits: RequestLimits): string[] {
  const problems: string[] = [];
  ids.forEach((id, index) => {
    if (ids.indexOf(id) < index) problems.push(`documents.${index}.document_id is a duplicate: each document is copied once`);
  });
  const tooMany = tooManyDocuments(ids.length, limits);
  return tooMany ? [...problems, tooMany] : problems;
}

/**
 * The documents of `documents`, in order: one of another account, or not there, is a 404, and one without
 * its PDF a 409, as in a request. With `lenient` (the rules of a body whose shape is wrong) those are left
 * out (undefined) instead.
 */
async function readDocumentsSources(db: Db, accountId: string, ids: string[], lenient: boolean): Promise<(SourceDocument | undefined)[]> {
  const sources: (SourceDocument | undefined)[] = [];
  for (const id of ids) {
    try {
      sources.push(await readSourceDocument(db, accountId, id));
    } catch (error) {
      if (!lenient || !(error instanceof AppError) || (error.status !== 404 && error.status !== 409)) throw error;
      sources.push(undefined);
    }
  }
  return sources;
}

const templateEventData = (template: Template) => ({
  templateId: template.id,
  name: template.name,
  roles: template.roles.map((role) => role.name),
  fieldCount: template.fields.length,
  sourceDocumentId: template.sourceDocumentId,
  documents: template.documents.map((document) => ({ documentId: document.sourceDocumentId, fileName: document.fileName })),
  createdAt: template.createdAt.toISOString(),
  updatedAt: template.updatedAt.toISOString(),
});

const recordTemplateEvent = (trx: Db, events: EventLog, template: Template, type: Extract<EventType, `template.${string}`>) =>
  events.record(trx, template.accountId, type, templateEventData(template));

/** A field as given (or as far as it could be read): on the document its document_id names. */
type GivenField = Partial<Omit<TemplateField, 'document'>> & { document_id?: string };

/**
 * The fields, each on its document's 1-based position among `ids` (0 when it names none, a problem then);
 * a field may leave out document_id when there is one document. With `ids` unknown (a body whose
 * documents could not be read) no field is placed and nothing is said.
 */
function onDocuments<Field extends GivenField>(fields: Field[], ids: (string | null)[] | undefined) {
  const problems: string[] = [];
  const placed = fields.map(({ document_id, ...field }, index) => {
    if (ids === undefined) return { ...field, document: 0 };
    if (document_id === undefined) {
      if (ids.length > 1) problems.push(`fields.${index}.document_id is required when the template has several documents`);
      return { ...field, document: ids.length > 1 ? 0 : 1 };
    }
    const position = ids.indexOf(document_id) + 1;
    if (position === 0) problems.push(`fields.${index}.document_id must be one of the template’s documents: "${document_id}" is not`);
    return { ...field, document: position };
  });
  return { placed, problems };
}

/** What a create request gives: all of it, or (for a body whose shape is wrong) what could be read. */
interface TemplateSource<Layout extends LayoutDraft> {
  documentId?: string;
  documents?: { document_id: string }[];
  detectFields?: boolean;
  /** Read the tags of each PDF even without detectFields, to take them out of the template's copies. */
  removeTags?: boolean;
  /** The layout of the roles and fields given, the fields on the documents of these ids (undefined: not known). */
  layoutOn: (ids: string[] | undefined) => { layout: Layout; problems: string[] };
}

/**
 * The rules of a new template, checked at once against its documents' pages, with the fields of the text
 * tags of each when `detectFields`, read by `readTags` (which also takes them out of the PDF for the
 * template's copy).
 */
async function checkTemplateSource<Layout extends LayoutDraft, Scan extends TextTagScan>(
  { db, requestLimits }: Pick<TemplateDeps, 'db' | 'requestLimits'>,
  account: Account,
  given: TemplateSource<Layout>,
  readTags: (pdf: Uint8Array) => Promise<Scan>,
  { lenient = false } = {},
) {
  const problems: string[] = [];
  let sources: (SourceDocument | undefined)[] = [];
  if (given.documents !== undefined) {
    const ids = given.documents.map((entry) => entry.document_id);
    const early = documentListProblems(ids, requestLimits);
    if (early.length > 0) return { sources: [], removals: [], layout: given.layoutOn(undefined).layout, problems: early };
    sources = await readDocumentsSources(db, account.id, ids, lenient);
    const tooLong = tooManyPages(
      sources.map((source) => source?.pageSizes.length ?? 0),
      requestLimits,
    );
    if (tooLong) problems.push(tooLong);
  } else if (given.documentId !== undefined) {
    const { source, problem } = await readDocumentIdSource(db, account.id, given.documentId);
    sources = [source];
    if (problem) problems.push(problem);
  }
  const ids = given.documents?.map((entry) => entry.document_id) ?? (given.documentId === undefined ? undefined : [given.documentId]);
  const removals = given.detectFields || given.removeTags ? await Promise.all(sources.map((source) => source && readTags(source.content))) : [];
  const several = sources.length > 1;
  const tagged = (given.detectFields ? removals : []).flatMap((removal, index) =>
    (removal?.fields ?? []).map((field) => ({ ...field, document: index + 1, of: several ? `documents.${index}` : undefined })),
  );
  const placed = given.layoutOn(ids);
  const layout = withTaggedFields(placed.layout, tagged);
  problems.push(
    ...placed.problems,
    ...layoutProblems(
      layout,
      sources.map((source) => source?.pageSizes),
    ),
  );
  return { sources, removals, layout, problems };
}

/**
 * The rules of createTemplate checked as far as they can be on a body whose shape is wrong: the roles and
 * the properties of fields that passed their schemas, against the PDFs of the documents that did (see
 * parseInputWithRules).
 */
export async function templateCreateRules(deps: Pick<TemplateDeps, 'db' | 'textTags' | 'requestLimits'>, account: Account, body: unknown): Promise<string[]> {
  const given = validProperties(TemplateCreateSchema, body);
  if (!given) return [];
  const raw = body as Record<string, unknown>;
  const roles = given.roles ?? readableItems(TemplateRoleInputSchema, raw.roles, MAX_ROLES);
  const fields = given.fields ?? readableItems(TemplateFieldInputSchema, raw.fields, MAX_TEMPLATE_FIELDS);
  const layoutOn = (ids: string[] | undefined) => {
    const { placed, problems } = onDocuments(fields ?? [], ids);
    return { layout: draftOf(roles, fields && placed), problems };
  };
  const readable = { documentId: given.documentId, documents: given.documents, detectFields: given.detectFields, layoutOn };
  return (await checkTemplateSource(deps, account, readable, (pdf) => deps.textTags.findTags(pdf), { lenient: true })).problems;
}

/** The rules of updateTemplate checked as far as they can be on a body whose shape is wrong, as templateCreateRules. */
export async function templateUpdateRules({ db }: Pick<TemplateDeps, 'db'>, accountId: string, id: string, body: unknown): Promise<string[]> {
  const given = validProperties(TemplateUpdateSchema, body);
  const current = given && (await findTemplate(db, accountId, id));
  if (!given || !current) return [];
  const raw = body as Record<string, unknown>;
  const roles = raw.roles === undefined ? current.roles : (given.roles ?? readableItems(TemplateRoleInputSchema, raw.roles, MAX_ROLES));
  // Against the documents the template has, when those are not changed (or could not be read).
  const ids = raw.documents === undefined ? current.documents.map((document) => document.sourceDocumentId) : given.documents?.map((entry) => entry.document_id);
  const documents = ids?.map((documentId) => current.documents.find((document) => document.sourceDocumentId === documentId)?.pageSizes);
  if (raw.fields === undefined) return layoutProblems(draftOf(roles, current.fields), raw.documents === undefined ? documents : undefined);
  const fields = given.fields ?? readableItems(TemplateFieldInputSchema, raw.fields, MAX_TEMPLATE_FIELDS);
  const { placed, problems } = onDocuments(fields ?? [], ids);
  return [...problems, ...layoutProblems(draftOf(roles, fields && placed), documents)];
}

/** The items of a list that could each be read, by index (undefined where one could not); none when the list itself could not. */
function readableItems<Shape extends z.ZodRawShape>(item: z.ZodObject<Shape>, list: unknown, max: number) {
  if (!Array.isArray(list) || list.length > max) return undefined;
  return list.map((entry) => validProperties(item, entry) ?? {});
}

/** A layout of the roles and fields that could be read; a role without a name is left out, and the rules that need every role with it. */
function draftOf(roles: Partial<RoleInput>[] | undefined, fields: Partial<TemplateField>[] | undefined): LayoutDraft {
  const named = (roles ?? []).flatMap((role, index) =>
    role.name === undefined ? [] : [{ role: roleOf({ ...role, name: role.name }, index), at: `roles.${index}` }],
  );
  return {
    roles: named.map(({ role }) => role),
    roleNames: named.map(({ at }) => at),
    fields: fields ?? [],
    fieldNames: (fields ?? []).map((_, index) => `fields.${index}`),
    everyRole: roles !== undefined && named.length === roles.length,
    everyField: fields !== undefined,
  };
}

/** The template's copy of a document: without its text tags when it had some. */
function templateCopyOf(source: SourceDocument, removal: (TextTagScan & Partial<TextTagRemoval>) | undefined): NewTemplateDocument {
  const withoutTags = removal && removal.fields.length > 0 ? removal.pdf : undefined;
  const content = withoutTags ? Buffer.from(withoutTags) : source.content;
  return {
    sourceDocumentId: source.id,
    fileName: source.fileName,
    pageSizes: source.pageSizes,
    sha256: withoutTags ? crypto.createHash('sha256').update(content).digest('hex') : source.sha256,
    content,
  };
}

/**
 * A template with its own copy of each document's PDF. Every rule is checked at once against the PDFs'
 * pages (with the fields of their text tags when `detectFields`), then the template and its event are
 * written in one transaction, within the plan's quota. Each copy has its text tags taken out (or, where
 * they cannot be, painted over), with detectFields or not, so that neither signers nor the sealed PDFs show them.
 */
export async function createTemplate(deps: TemplateDeps, account: Account, input: TemplateCreateInput): Promise<Template> {
  const layoutOn = (ids: string[] | undefined) => {
    const { placed, problems } = onDocuments(input.fields, ids);
    return { layout: layoutOf(input.roles, placed), problems };
  };
  const { sources, removals, layout, problems } = await checkTemplateSource(deps, account, { ...input, layoutOn, removeTags: true }, (pdf) =>
    removeTagsIfAny(deps.textTags, pdf),
  );
  if (problems.length > 0 || sources.length === 0 || sources.some((source) => !source)) throw validationError(problems);
  const documents = sources.map((source, index) => templateCopyOf(source!, removals[index]));
  return unitOfWork(deps.db, async (trx) => {
    await assertTemplateQuota(trx, account, { lock: true });
    const template = await insertTemplate(
      trx,
      {
        id: newId('template'),
        accountId: account.id,
        name: input.name,
        description: input.description ?? null,
        roles: inSigningOrder(layout.roles),
        fields: layout.fields,
      },
      documents,
    );
    await recordTemplateEvent(trx, deps.events, template, 'template.created');
    return template;
  });
}

/** The text tags of a document's PDF, as a dry run: nothing is created; a template of them past a request's limits is a warning. */
export async function detectDocumentFields({ db, textTags }: TemplateDeps, accountId: string, documentId: string): Promise<TextTagScan> {
  const { content } = await getDocumentFile(db, accountId, documentId);
  const scan = await textTags.findTags(content);
  // Said now rather than only when a template is made of them: more roles or fields than a request takes.
  const tagged = scan.fields.map((field) => ({ ...field, document: 1 }));
  return { ...scan, warnings: [...scan.warnings, ...limitProblems(withTaggedFields(layoutOf([], []), tagged))] };
}

export async function getTemplate(db: Db, accountId: string, id: string): Promise<Template> {
  const template = await findTemplate(db, accountId, id);
  if (!template) throw notFound('Template');
  return template;
}

export const listTemplates = listTemplateRows;

/**
 * A template's documents after `documents`: each one it has already keeps its copy (and the text tags
 * taken out of it); the others are copied from the account's documents (404 for one that is not the
 * account's, 409 without its PDF), without their text tags (which place no field here).
 */
async function changedDocuments(
  trx: Db,
  textTags: TextTagFinder,
  accountId: string,
  current: Template,
  documents: { document_id: string }[],
): Promise<DocumentChange[]> {
  const changes: DocumentChange[] = [];
  for (const { document_id } of documents) {
    const position = current.documents.findIndex((document) => document.sourceDocumentId === document_id) + 1;
    if (position > 0) changes.push({ keep: position, document: current.documents[position - 1] });
    else {
      const source = await readSourceDocument(trx, accountId, document_id);
      changes.push({ add: templateCopyOf(source, await removeTagsIfAny(textTags, source.content)) });
    }
  }
  return changes;
}

/**
 * The current fields on the changed documents: each moves with its document, and one whose document is
 * left out is a problem (give fields with documents then).
 */
function fieldsOnChangedDocuments(current: Template, ids: string[]) {
  const problems: string[] = [];
  const fields = current.fields.map((field, index) => {
    const documentId = current.documents[field.document - 1].sourceDocumentId;
    const document = documentId === null ? 0 : ids.indexOf(documentId) + 1;
    if (document === 0)
      problems.push(`fields.${index} is on the document ${documentId ?? 'of the template'}, which documents leaves out: give fields with documents`);
    return { ...field, document };
  });
  return { fields, problems };
}

/** Renames, describes, or replaces the documents, roles or fields of a template; the result is checked by every rule of a new one. */
export async function updateTemplate(
  { db, events, textTags, requestLimits }: Pick<TemplateDeps, 'db' | 'events' | 'textTags' | 'requestLimits'>,
  accountId: string,
  id: string,
  input: TemplateUpdateInput,
): Promise<Template> {
  return unitOfWork(db, async (trx) => {
    const current = await findTemplate(trx, accountId, id, { lock: true });
    if (!current) throw notFound('Template');
    const ids = input.documents?.map((entry) => entry.document_id);
    const early = ids ? documentListProblems(ids, requestLimits) : [];
    if (early.length > 0) throw validationError(early);
    const changes = input.documents && (await changedDocuments(trx, textTags, accountId, current, input.documents));
    const documents = changes?.map((change) => ('keep' in change ? change.document : change.add)) ?? current.documents;
    const placed = input.fields
      ? onDocuments(
          input.fields,
          documents.map((document) => document.sourceDocumentId),
        )
      : ids
        ? fieldsOnChangedDocuments(current, ids)
        : { placed: current.fields, problems: [] };
    const layout = layoutOf(input.roles ?? current.roles, 'placed' in placed ? placed.placed : placed.fields);
    // Pages are counted when the documents change: the template's own kept within the limits of its day.
    const tooLong = ids
      ? tooManyPages(
          documents.map((document) => document.pageSizes.length),
          requestLimits,
        )
      : undefined;
    const problems = [
      ...(tooLong ? [tooLong] : []),
      ...placed.problems,
      ...layoutProblems(
        layout,
        documents.map((document) => document.pageSizes),
      ),
    ];
    if (problems.length > 0) throw validationError(problems);
    const updated = await updateTemplateRow(trx, accountId, id, {
      name: input.name,
      description: input.description,
      documents: changes,
      roles: inSigningOrder(layout.roles),
      fields: layout.fields,
    });
    if (!updated) throw notFound('Template');
    await recordTemplateEvent(trx, events, updated, 'template.updated');
    return updated;
  });
}

/** Deletes a template (softly: requests made from it have their own copy of everything they need). */
export async function deleteTemplate({ db, events }: Pick<TemplateDeps, 'db' | 'events'>, accountId: string, id: string): Promise<void> {
  await unitOfWork(db, async (trx) => {
    const deleted = await markTemplateDeleted(trx, accountId, id);
    if (!deleted) throw notFound('Template');
    await recordTemplateEvent(trx, events, deleted, 'template.deleted');
  });
}

/** A PNG of one page of one of the template's documents (default the first) with its fields drawn and labelled by role. */
export async function previewTemplatePage(
  { db, pages }: Pick<TemplateDeps, 'db' | 'pages'>,
  accountId: string,
  id: string,
  page: number,
  documentId?: string,
): Promise<Buffer> {
  const template = await getTemplate(db, accountId, id);
  const position = documentId === undefined ? 1 : template.documents.findIndex((document) => document.sourceDocumentId === documentId) + 1;
  if (position === 0) throw validationError([`documentId must be one of the template’s documents: "${documentId}" is not`]);
  const pageCount = template.documents[position - 1].pageSizes.length;
  const itsDocument = template.documents.length > 1 ? 'its document' : 'the template';
  if (page > pageCount) throw validationError([`page must be at most ${pageCount}: ${itsDocument} has ${pageCount} page(s)`]);
  const fields = template.fields.filter((field) => field.document === position);
  return pages.renderPng(await findTemplateFile(db, id, position), page, { roles: template.roles, fields });
}
