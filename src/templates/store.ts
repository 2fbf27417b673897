import type { Db } from '../db';
import { toPage } from '../db/pagination';
import type { TemplateField, TemplateRole } from './layout';
import type { TemplateListQuery } from './schema';

/** One document of a template: its own copy of a PDF, named by the document it was copied from. */
export interface TemplateDocument {
  /** The document whose PDF was copied; fields name their document by it. */
  sourceDocumentId: string | null;
  fileName: string;
  /** [width, height] of each page in PDF points. */
  pageSizes: [number, number][];
  sha256: string;
}

/** A template document with its PDF, as it is written. */
export interface NewTemplateDocument extends TemplateDocument {
  content: Uint8Array;
}

export interface Template {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  /** The first document's (the only one of a template made with documentId). */
  sourceDocumentId: string | null;
  pageCount: number;
  /** [width, height] of each page of the first document in PDF points. */
  pageSizes: [number, number][];
  sha256: string;
  /** In the order signers see them; fields name theirs by position (TemplateField.document). */
  documents: TemplateDocument[];
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
  roles: (Omit<TemplateRole, 'recipientType' | 'routingOrder' | 'verification'> & Partial<TemplateRole>)[];
  fields: (Omit<TemplateField, 'document'> & Partial<TemplateField>)[];
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

interface TemplateDocumentRow {
  template_id: string;
  source_document_id: string | null;
  file_name: string;
  page_sizes: [number, number][];
  sha256: string;
}

// Roles and fields stored before templates had several documents and recipient types: signers, on the first document.
const toTemplate = (row: TemplateRow, documents: TemplateDocumentRow[]): Template => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  description: row.description,
  sourceDocumentId: row.source_document_id,
  pageCount: row.page_count,
  pageSizes: row.page_sizes,
  sha256: row.sha256,
  documents: documents.map((document) => ({
    sourceDocumentId: document.source_document_id,
    fileName: document.file_name,
    pageSizes: document.page_sizes,
    sha256: document.sha256,
  })),
  roles: row.roles.map((role) => ({
    ...role,
    recipientType: role.recipientType ?? 'signer',
    routingOrder: role.routingOrder ?? null,
    verification: role.verification ?? null,
  })),
  fields: row.fields.map((field) => ({ ...field, document: field.document ?? 1 })),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The rows with their documents (without their PDFs), in one query for all of them. */
async function withDocuments(db: Db, rows: TemplateRow[]): Promise<Template[]> {
  if (rows.length === 0) return [];
  const documents: TemplateDocumentRow[] = await db('template_documents')
    .whereIn(
      'template_id',
      rows.map((row) => row.id),
    )
    .orderBy('position')
    .select('template_id', 'source_document_id', 'file_name', 'page_sizes', 'sha256');
  return rows.map((row) =>
    toTemplate(
      row,
      documents.filter((document) => document.template_id === row.id),
    ),
  );
}

const firstOf = async (db: Db, row: TemplateRow | undefined) => (row ? (await withDocuments(db, [row]))[0] : undefined);

const liveTemplates = (db: Db, accountId: string) => db('templates').where({ account_id: accountId }).whereNull('deleted_at');

export type NewTemplate = Pick<Template, 'id' | 'accountId' | 'name' | 'description' | 'roles' | 'fields'>;

/** The templates row's columns of its first document, which the API has always shown. */
const firstDocumentColumns = ([first]: TemplateDocument[]) => ({
  source_document_id: first.sourceDocumentId,
  page_count: first.pageSizes.length,
  page_sizes: JSON.stringify(first.pageSizes),
  sha256: first.sha256,
});

async function insertTemplateDocuments(trx: Db, templateId: string, documents: NewTemplateDocument[], from = 1) {
  await trx('template_documents').insert(
    documents.map((document, index) => ({
      template_id: templateId,
      position: from + index,
      source_document_id: document.sourceDocumentId,
      file_name: document.fileName,
      page_count: document.pageSizes.length,
      page_sizes: JSON.stringify(document.pageSizes),
      sha256: document.sha256,
      content: document.content,
    })),
  );
}

export async function insertTemplate(trx: Db, template: NewTemplate, documents: NewTemplateDocument[]): Promise<Template> {
  const [row]: TemplateRow[] = await trx('templates')
    .insert({
      id: template.id,
      account_id: template.accountId,
      name: template.name,
      description: template.description,
      ...firstDocumentColumns(documents),
      roles: JSON.stringify(template.roles),
      fields: JSON.stringify(template.fields),
    })
    .returning(templateColumns);
  await insertTemplateDocuments(trx, template.id, documents);
  return (await firstOf(trx, row))!;
}

/**
 * A template's documents after a change, in order: each one the template has already (kept with its
 * copy, by its position now) or a new copy.
 */
export type DocumentChange = { keep: number; document: TemplateDocument } | { add: NewTemplateDocument };

export type TemplateChanges = Partial<Pick<Template, 'name' | 'description' | 'roles' | 'fields'>> & { documents?: DocumentChange[] };

/** Replaces a template's documents: the kept ones move to their new positions (through negative ones, as positions are unique), the rest are added. */
async function replaceTemplateDocuments(trx: Db, templateId: string, changes: DocumentChange[]) {
  const kept = changes.flatMap((change, index) => ('keep' in change ? [{ from: change.keep, to: index + 1 }] : []));
  await trx('template_documents')
    .where({ template_id: templateId })
    .whereNotIn(
      'position',
      kept.map((move) => move.from),
    )
    .delete();
  for (const move of kept) await trx('template_documents').where({ template_id: templateId, position: move.from }).update({ position: -move.to });
  await trx('template_documents')
    .where({ template_id: templateId })
    .update({ position: trx.raw('-position') });
  for (const [index, change] of changes.entries()) if ('add' in change) await insertTemplateDocuments(trx, templateId, [change.add], index + 1);
}

/** Writes the changes to a live template; undefined when there is none (deleted meanwhile). */
export async function updateTemplateRow(trx: Db, accountId: string, id: string, changes: TemplateChanges): Promise<Template | undefined> {
  const documents = changes.documents?.map((change) => ('keep' in change ? change.document : change.add));
  const [row]: TemplateRow[] = await liveTemplates(trx, accountId)
    .where({ id })
    .update({
      ...(documents ? firstDocumentColumns(documents) : {}),
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.roles ? { roles: JSON.stringify(changes.roles) } : {}),
      ...(changes.fields ? { fields: JSON.stringify(changes.fields) } : {}),
      updated_at: trx.fn.now(),
    })
    .returning(templateColumns);
  if (row && changes.documents) await replaceTemplateDocuments(trx, id, changes.documents);
  return firstOf(trx, row);
}

/** Marks a live template deleted (its row and PDF stay); undefined when there is none. */
export async function markTemplateDeleted(trx: Db, accountId: string, id: string): Promise<Template | undefined> {
  const [row]: TemplateRow[] = await liveTemplates(trx, accountId)
    .where({ id })
    .update({ deleted_at: trx.fn.now(), updated_at: trx.fn.now() })
    .returning(templateColumns);
  return firstOf(trx, row);
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
  return firstOf(db, row);
}

/** The PDF of a template's document at a 1-based position. */
export async function findTemplateFile(db: Db, id: string, position = 1): Promise<Buffer> {
  const { content } = await db('template_documents').where({ template_id: id, position }).first('content');
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
  return { ...page, data: await withDocuments(db, page.data) };
}

/** Live templates of the account, in no particular order: what a search hit shows. */
export async function findTemplates(db: Db, accountId: string, ids: string[]): Promise<Template[]> {
  if (ids.length === 0) return [];
  const rows: TemplateRow[] = await liveTemplates(db, accountId).whereIn('id', ids).select(templateColumns);
  return withDocuments(db, rows);
}

/** Templates the account has and has not deleted: what the plan's template quota counts. */
export async function countLiveTemplates(db: Db, accountId: string): Promise<number> {
  const [{ count }] = await liveTemplates(db, accountId).count({ count: '*' });
  return Number(count);
}
