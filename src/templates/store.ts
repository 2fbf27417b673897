import type { Db } from '../db';
import { toPage } from '../db/pagination';
import type { TemplateField, TemplateRole } from './layout';
import type { TemplateListQuery } from './schema';

export interface Template {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  sourceDocumentId: string | null;
  pageCount: number;
  /** [width, height] of each page in PDF points. */
  pageSizes: [number, number][];
  sha256: string;
  /** In signing order. */
  roles: TemplateRole[];
  fields: TemplateField[];
  createdAt: Date;
  updatedAt: Date;
}

interface TemplateRow {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  source_document_id: string | null;
  page_count: number;
  page_sizes: [number, number][];
  sha256: string;
  roles: TemplateRole[];
  fields: TemplateField[];
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

// Never select *: search_vector is for search only.
const templateColumns = [
  'id',
  'account_id',
  'name',
  'description',
  'source_document_id',
  'page_count',
  'page_sizes',
  'sha256',
  'roles',
  'fields',
  'created_at',
  'updated_at',
];

const toTemplate = (row: TemplateRow): Template => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  description: row.description,
  sourceDocumentId: row.source_document_id,
  pageCount: row.page_count,
  pageSizes: row.page_sizes,
  sha256: row.sha256,
  roles: row.roles,
  fields: row.fields,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const liveTemplates = (db: Db, accountId: string) => db('templates').where({ account_id: accountId }).whereNull('deleted_at');

export type NewTemplate = Omit<Template, 'createdAt' | 'updatedAt'>;

export async function insertTemplate(trx: Db, template: NewTemplate, content: Uint8Array): Promise<Template> {
  const [row]: TemplateRow[] = await trx('templates')
    .insert({
      id: template.id,
      account_id: template.accountId,
      name: template.name,
      description: template.description,
      source_document_id: template.sourceDocumentId,
      page_count: template.pageCount,
      page_sizes: JSON.stringify(template.pageSizes),
      sha256: template.sha256,
      roles: JSON.stringify(template.roles),
      fields: JSON.stringify(template.fields),
    })
    .returning(templateColumns);
  await trx('template_files').insert({ template_id: template.id, content });
  return toTemplate(row);
}

export type TemplateChanges = Partial<Pick<Template, 'name' | 'description' | 'roles' | 'fields'>>;

/** Writes the changes to a live template; undefined when there is none (deleted meanwhile). */
export async function updateTemplateRow(trx: Db, accountId: string, id: string, changes: TemplateChanges): Promise<Template | undefined> {
  const [row]: TemplateRow[] = await liveTemplates(trx, accountId)
    .where({ id })
    .update({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.roles ? { roles: JSON.stringify(changes.roles) } : {}),
      ...(changes.fields ? { fields: JSON.stringify(changes.fields) } : {}),
      updated_at: trx.fn.now(),
    })
    .returning(templateColumns);
  return row && toTemplate(row);
}

/** Marks a live template deleted (its row and PDF stay); undefined when there is none. */
export async function markTemplateDeleted(trx: Db, accountId: string, id: string): Promise<Template | undefined> {
  const [row]: TemplateRow[] = await liveTemplates(trx, accountId)
    .where({ id })
    .update({ deleted_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning(templateColumns);
  return row && toTemplate(row);
}

/** A live template of the account; with `lock`, locked for the rest of the transaction. */
export async function findTemplate(db: Db, accountId: string, id: string, { lock = false } = {}): Promise<Template | undefined> {
  const row: TemplateRow | undefined = await liveTemplates(db, accountId)
    .where({ id })
    .modify((builder) => {
      if (lock) builder.forUpdate();
    })
    .select(templateColumns)
    .first();
  return row && toTemplate(row);
}

export async function findTemplateFile(db: Db, id: string): Promise<Buffer> {
  const { content } = await db('template_files').where({ template_id: id }).first('content');
  return content;
}

/** Newest first, a page at a time; `q` matches part of the name in any letter case. */
export async function listTemplateRows(db: Db, accountId: string, query: TemplateListQuery) {
  const rows: TemplateRow[] = await liveTemplates(db, accountId)
    .select(templateColumns)
    .modify((builder) => {
      if (query.cursor) builder.where('id', '<', query.cursor);
      if (query.q) builder.whereRaw(`name ilike ? escape '\\'`, [`%${query.q.replace(/[\\%_]/g, '\\$&')}%`]);
    })
    .orderBy('id', 'desc')
    .limit(query.limit + 1);
  const page = toPage(rows, query.limit);
  return { ...page, data: page.data.map(toTemplate) };
}

/** Live templates of the account, in no particular order: what a search hit shows. */
export async function findTemplates(db: Db, accountId: string, ids: string[]): Promise<Template[]> {
  const rows: TemplateRow[] = await liveTemplates(db, accountId).whereIn('id', ids).select(templateColumns);
  return rows.map(toTemplate);
}

/** Templates the account has and has not deleted: what the plan's template quota counts. */
export async function countLiveTemplates(db: Db, accountId: string): Promise<number> {
  const [{ count }] = await liveTemplates(db, accountId).count({ count: '*' });
  return Number(count);
}
