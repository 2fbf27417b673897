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
import type { TextTagFinder, TextTagScan } from '../pdf/textTags';
import { validProperties, type z } from '../api/validation';
import { inSigningOrder, layoutOf, layoutProblems, limitProblems, withTaggedFields, type LayoutDraft, type TemplateField } from './layout';
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
  type Template,
} from './store';
import { lockAccount } from '../accounts/lock';

export interface TemplateDeps {
  db: Db;
  events: EventLog;
  /** Finds text tags in PDFs, in child processes (src/pdf/textTags.ts). */
  textTags: TextTagFinder;
  /** Renders pages, in child processes (src/pdf/pageRenderer.ts). */
  pages: PageRenderer;
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

/** The PDF a template is made from: a document of the account that has its file, or the problem that says why not. */
async function readSourceDocument(db: Db, accountId: string, documentId: string) {
  try {
    const { document, content } = await getDocumentFile(db, accountId, documentId);
    return { document, content, pageSizes: await pageSizesOf(db, documentId, content) };
  } catch (error) {
    if (!(error instanceof AppError) || (error.status !== 404 && error.status !== 409)) throw error;
    return {
      problem: error.status === 404 ? 'documentId must name a document of this account' : 'documentId must name a document whose PDF has been uploaded',
    };
  }
}

const templateEventData = (template: Template) => ({
  templateId: template.id,
  name: template.name,
  roles: template.roles.map((role) => role.name),
  fieldCount: template.fields.length,
  sourceDocumentId: template.sourceDocumentId,
  createdAt: template.createdAt.toISOString(),
  updatedAt: template.updatedAt.toISOString(),
});

const recordTemplateEvent = (trx: Db, events: EventLog, template: Template, type: Extract<EventType, `template.${string}`>) =>
  events.record(trx, template.accountId, type, templateEventData(template));

/** What a create request gives: all of it, or (for a body whose shape is wrong) what could be read. */
interface TemplateSource<Layout extends LayoutDraft> {
  documentId?: string;
  detectFields?: boolean;
  layout: Layout;
}

/**
 * The rules of a new template, checked at once against the PDF's pages, with the fields of its text tags
 * when `detectFields`, read by `readTags` (which also takes them out of the PDF for the template's copy).
 */
async function checkTemplateSource<Layout extends LayoutDraft, Scan extends TextTagScan>(
  db: Db,
  account: Account,
  given: TemplateSource<Layout>,
  readTags: (pdf: Uint8Array) => Promise<Scan>,
) {
  const source = given.documentId === undefined ? undefined : await readSourceDocument(db, account.id, given.documentId);
  const content = source?.content;
  const removal = content && given.detectFields ? await readTags(content) : undefined;
  const layout = withTaggedFields(given.layout, removal?.fields ?? []);
  const problems = [...(source?.problem ? [source.problem] : []), ...layoutProblems(layout, source?.pageSizes)];
  return { source, removal, layout, problems };
}

/**
 * The rules of createTemplate checked as far as they can be on a body whose shape is wrong: the roles and
 * the properties of fields that passed their schemas, against the PDF of a documentId that did (see
 * parseInputWithRules).
 */
export async function templateCreateRules(deps: TemplateDeps, account: Account, body: unknown): Promise<string[]> {
  const given = validProperties(TemplateCreateSchema, body);
  if (!given) return [];
  const raw = body as Record<string, unknown>;
  const roles = given.roles ?? readableItems(TemplateRoleInputSchema, raw.roles, MAX_ROLES);
  const fields = given.fields ?? readableItems(TemplateFieldInputSchema, raw.fields, MAX_TEMPLATE_FIELDS);
  const layout = draftOf(roles, fields);
  const readable = { documentId: given.documentId, detectFields: given.detectFields, layout };
  return (await checkTemplateSource(deps.db, account, readable, (pdf) => deps.textTags.findTags(pdf))).problems;
}

/** The rules of updateTemplate checked as far as they can be on a body whose shape is wrong, as templateCreateRules. */
export async function templateUpdateRules({ db }: Pick<TemplateDeps, 'db'>, accountId: string, id: string, body: unknown): Promise<string[]> {
  const given = validProperties(TemplateUpdateSchema, body);
  const current = given && (await findTemplate(db, accountId, id));
  if (!given || !current) return [];
  const raw = body as Record<string, unknown>;
  const roles = raw.roles === undefined ? current.roles : (given.roles ?? readableItems(TemplateRoleInputSchema, raw.roles, MAX_ROLES));
  const fields = raw.fields === undefined ? current.fields : (given.fields ?? readableItems(TemplateFieldInputSchema, raw.fields, MAX_TEMPLATE_FIELDS));
  return layoutProblems(draftOf(roles, fields), current.pageSizes);
}

/** The items of a list that could each be read, by index (undefined where one could not); none when the list itself could not. */
function readableItems<Shape extends z.ZodRawShape>(item: z.ZodObject<Shape>, list: unknown, max: number) {
  if (!Array.isArray(list) || list.length > max) return undefined;
  return list.map((entry) => validProperties(item, entry) ?? {});
}

/** A layout of the roles and fields that could be read; a role without a name is left out, and the rules that need every role with it. */
function draftOf(roles: { name?: string; order?: number }[] | undefined, fields: Partial<TemplateField>[] | undefined): LayoutDraft {
  const named = (roles ?? []).flatMap((role, index) =>
    role.name === undefined ? [] : [{ name: role.name, order: role.order ?? index + 1, at: `roles.${index}` }],
  );
  return {
    roles: named.map(({ name, order }) => ({ name, order })),
    roleNames: named.map(({ at }) => at),
    fields: fields ?? [],
    fieldNames: (fields ?? []).map((_, index) => `fields.${index}`),
    everyRole: roles !== undefined && named.length === roles.length,
    everyField: fields !== undefined,
  };
}

/**
 * A template with its own copy of the document's PDF. Every rule is checked at once against the PDF's
 * pages (with the fields of its text tags when `detectFields`), then the template and its event are
 * written in one transaction, within the plan's quota. The copy has its text tags taken out (or, where
 * they cannot be, painted over), so that neither signers nor the sealed PDF show them.
 */
export async function createTemplate(deps: TemplateDeps, account: Account, input: TemplateCreateInput): Promise<Template> {
  const { source, removal, layout, problems } = await checkTemplateSource(deps.db, account, { ...input, layout: layoutOf(input.roles, input.fields) }, (pdf) =>
    deps.textTags.removeTags(pdf),
  );
  if (problems.length > 0 || !source?.content) throw validationError(problems);
  const { document, pageSizes } = source;
  const tagged = removal?.fields ?? [];
  const content = removal && tagged.length > 0 ? Buffer.from(removal.pdf) : source.content;
  return unitOfWork(deps.db, async (trx) => {
    await assertTemplateQuota(trx, account, { lock: true });
    const template = await insertTemplate(
      trx,
      {
        id: newId('template'),
        accountId: account.id,
        name: input.name,
        description: input.description ?? null,
        sourceDocumentId: document.id,
        pageCount: pageSizes.length,
        pageSizes,
        sha256: tagged.length > 0 ? crypto.createHash('sha256').update(content).digest('hex') : document.sha256!,
        roles: inSigningOrder(layout.roles),
        fields: layout.fields,
      },
      content,
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
  return { ...scan, warnings: [...scan.warnings, ...limitProblems(withTaggedFields(layoutOf([], []), scan.fields))] };
}

export async function getTemplate(db: Db, accountId: string, id: string): Promise<Template> {
  const template = await findTemplate(db, accountId, id);
  if (!template) throw notFound('Template');
  return template;
}

export const listTemplates = listTemplateRows;

/** Renames, describes, or replaces the roles or fields of a template; the result is checked by every rule of a new one. */
export async function updateTemplate(
  { db, events }: Pick<TemplateDeps, 'db' | 'events'>,
  accountId: string,
  id: string,
  input: TemplateUpdateInput,
): Promise<Template> {
  return unitOfWork(db, async (trx) => {
    const current = await findTemplate(trx, accountId, id, { lock: true });
    if (!current) throw notFound('Template');
    const layout = layoutOf(input.roles ?? current.roles, input.fields ?? current.fields);
    const problems = layoutProblems(layout, current.pageSizes);
    if (problems.length > 0) throw validationError(problems);
    const updated = await updateTemplateRow(trx, accountId, id, {
      name: input.name,
      description: input.description,
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

/** A PNG of one page of the template with its fields drawn and labelled by role. */
export async function previewTemplatePage({ db, pages }: Pick<TemplateDeps, 'db' | 'pages'>, accountId: string, id: string, page: number): Promise<Buffer> {
  const template = await getTemplate(db, accountId, id);
  if (page > template.pageCount) throw validationError([`page must be at most ${template.pageCount}: the template has ${template.pageCount} page(s)`]);
  return pages.renderPng(await findTemplateFile(db, id), page, template);
}
