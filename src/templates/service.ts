import crypto from 'node:crypto';
import { plans } from '../accounts/plans';
import type { Account } from '../accounts/service';
import type { Db } from '../db';
import { getDocumentFile, pageSizesOf } from '../documents/service';
import { AppError, notFound, quotaExceeded, validationError } from '../errors';
import { recordEvent, type EventType } from '../events/service';
import { newId } from '../ids';
import type { PageRenderer } from '../pdf/pageRenderer';
import type { TextTagFinder } from '../pdf/textTags';
import { inSigningOrder, layoutOf, layoutProblems, withTaggedFields } from './layout';
import type { TemplateCreateInput, TemplateUpdateInput } from './schema';
import { countLiveTemplates, findTemplate, findTemplateFile, insertTemplate, listTemplateRows, markTemplateDeleted, updateTemplateRow, type Template } from './store';

export interface TemplateDeps {
  db: Db;
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
  if (lock) await db('accounts').where({ id: account.id }).forUpdate().first('id');
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
    return { problem: error.status === 404 ? 'documentId must name a document of this account' : 'documentId must name a document whose PDF has been uploaded' };
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

const recordTemplateEvent = (trx: Db, template: Template, type: Extract<EventType, `template.${string}`>) =>
  recordEvent(trx, template.accountId, type, templateEventData(template));

/**
 * A template with its own copy of the document's PDF. Every rule is checked at once against the PDF's
 * pages (with the fields of its text tags when `detectFields`), then the template and its event are
 * written in one transaction, within the plan's quota. The copy has its text tags taken out (or, where
 * they cannot be, painted over), so that neither signers nor the sealed PDF show them.
 */
export async function createTemplate({ db, textTags }: TemplateDeps, account: Account, input: TemplateCreateInput): Promise<Template> {
  const source = await readSourceDocument(db, account.id, input.documentId);
  const removal = source.content && input.detectFields ? await textTags.removeTags(source.content) : undefined;
  const tagged = removal?.fields ?? [];
  const layout = withTaggedFields(layoutOf(input.roles, input.fields), tagged);
  const problems = [...(source.problem ? [source.problem] : []), ...layoutProblems(layout, source.pageSizes)];
  if (problems.length > 0 || !source.content) throw validationError(problems);
  const { document, pageSizes } = source;
  const content = removal && tagged.length > 0 ? Buffer.from(removal.pdf) : source.content;
  return db.transaction(async (trx) => {
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
    await recordTemplateEvent(trx, template, 'template.created');
    return template;
  });
}

/** The text tags of a document's PDF, as a dry run: nothing is created. */
export async function detectDocumentFields({ db, textTags }: TemplateDeps, accountId: string, documentId: string) {
  const { content } = await getDocumentFile(db, accountId, documentId);
  return textTags.findTags(content);
}

export async function getTemplate(db: Db, accountId: string, id: string): Promise<Template> {
  const template = await findTemplate(db, accountId, id);
  if (!template) throw notFound('Template');
  return template;
}

export const listTemplates = listTemplateRows;

/** Renames, describes, or replaces the roles or fields of a template; the result is checked by every rule of a new one. */
export async function updateTemplate({ db }: Pick<TemplateDeps, 'db'>, accountId: string, id: string, input: TemplateUpdateInput): Promise<Template> {
  return db.transaction(async (trx) => {
    const current = await findTemplate(trx, accountId, id, { lock: true });
    if (!current) throw notFound('Template');
    const layout = layoutOf(input.roles ?? current.roles, input.fields ?? current.fields);
    const problems = layoutProblems(layout, current.pageSizes);
    if (problems.length > 0) throw validationError(problems);
    const updated = await updateTemplateRow(trx, accountId, id, { name: input.name, description: input.description, roles: inSigningOrder(layout.roles), fields: layout.fields });
    if (!updated) throw notFound('Template');
    await recordTemplateEvent(trx, updated, 'template.updated');
    return updated;
  });
}

/** Deletes a template (softly: requests made from it have their own copy of everything they need). */
export async function deleteTemplate({ db }: Pick<TemplateDeps, 'db'>, accountId: string, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const deleted = await markTemplateDeleted(trx, accountId, id);
    if (!deleted) throw notFound('Template');
    await recordTemplateEvent(trx, deleted, 'template.deleted');
  });
}

/** A PNG of one page of the template with its fields drawn and labelled by role. */
export async function previewTemplatePage({ db, pages }: Pick<TemplateDeps, 'db' | 'pages'>, accountId: string, id: string, page: number): Promise<Buffer> {
  const template = await getTemplate(db, accountId, id);
  if (page > template.pageCount) throw validationError([`page must be at most ${template.pageCount}: the template has ${template.pageCount} page(s)`]);
  return pages.renderPng(await findTemplateFile(db, id), page, template);
}
