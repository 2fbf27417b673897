import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { IN_MEMORY_BYTES, type ReceivedFile } from '../api/receivedFile';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import { conflict, notFound, quotaExceeded, validationError } from '../errors';
import { newId } from '../ids';
import { toPage } from '../db/pagination';
import { monthWindow, plans } from '../domain/plans';
import type { Account } from '../accounts/service';
import type { EventLog } from '../events/service';
import type { PdfFacts, PdfInspector } from '../pdf/inspect';
import type { PdfTextExtractor } from '../pdf/text';
import type { DocumentListQuery, documentStatuses } from './schema';
import { lockAccount } from '../accounts/store';
import {
  appendFileContent,
  countDocumentsThisMonth,
  findFileContent,
  findFileUpTo,
  findLiveDocument,
  findLiveDocuments,
  findPageSizes,
  insertDocumentRow,
  insertFileContent,
  listLiveDocuments,
  lockLiveDocument,
  markFileArrived,
  readFilePiece,
  renameLiveDocument,
  softDeleteDocument,
  storePageSizes,
  vectorizeTexts,
  type DocumentRow,
} from './store';

export interface Document {
  id: string;
  accountId: string;
  fileName: string;
  fileSize: number;
  status: (typeof documentStatuses)[number];
  pageCount: number | null;
  sha256: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const toDocument = (row: DocumentRow): Document => ({
  id: row.id,
  accountId: row.account_id,
  fileName: row.file_name,
  fileSize: row.file_size,
  status: row.status,
  pageCount: row.page_count,
  sha256: row.sha256,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Validates PDF bytes against the declared size; every problem found becomes a details string. */
async function checkContent(pdf: PdfInspector, content: ReceivedFile, fileSize: number): Promise<PdfFacts> {
  const problems: string[] = [];
  if (content.size !== fileSize) problems.push(`fileSize must equal the size of the content (${content.size} bytes)`);
  const { facts, problem } = await pdf.inspect(content);
  if (problem) problems.push(problem);
  if (problems.length > 0 || !facts) throw validationError(problems);
  return facts;
}

/**
 * Refuses a new document once the account has used its monthly quota. The route checks before reading
 * the body, so an account over its quota costs no upload and no parse; the creating transaction checks
 * again with `lock`, which serialises concurrent creations so that two cannot both take the last slot.
 */
export async function assertDocumentQuota(db: Db, account: Account, { lock = false } = {}) {
  const limit = plans[account.plan].documentsPerMonth;
  if (limit === null) return;
  if (lock) await lockAccount(db, account.id);
  const used = await countDocumentsThisMonth(db, account.id);
  if (used >= limit) {
    const resetsAt = monthWindow().end.toISOString();
    throw quotaExceeded(`The ${account.plan} plan allows ${limit} documents per month; the quota resets at ${resetsAt}.`, {
      limit,
      used,
      resetsAt,
    });
  }
}

export interface DocumentDeps {
  db: Db;
  events: EventLog;
}

export interface UploadDeps extends DocumentDeps {
  /** Checks uploaded PDFs in child processes (src/pdf/inspect.ts). */
  pdf: PdfInspector;
}

const documentEventData = (document: Document) => ({
  documentId: document.id,
  fileName: document.fileName,
  fileSize: document.fileSize,
  status: document.status,
  createdAt: document.createdAt.toISOString(),
});

/** A document, with its PDF or waiting for it. Its text is extracted for search later, by the worker (extractDocumentText). */
export async function createDocument(
  { db, events, pdf }: UploadDeps,
  account: Account,
  input: { fileName: string; fileSize: number; content?: ReceivedFile },
): Promise<Document> {
  const facts = input.content ? await checkContent(pdf, input.content, input.fileSize) : undefined;
  return unitOfWork(db, (trx) => insertDocument(trx, events, account, { ...input, facts }));
}

/**
 * A document made by Signet from a PDF it already checked (a template's copy), in the caller's transaction:
 * no inspection, but the same quota, row, file and event as an upload.
 */
export function createDocumentFromCopy(
  trx: Db,
  events: EventLog,
  account: Account,
  input: { fileName: string; content: Buffer; pageSizes: [number, number][]; sha256: string },
): Promise<Document> {
  const facts = { pageCount: input.pageSizes.length, pageSizes: input.pageSizes, sha256: input.sha256 };
  return insertDocument(trx, events, account, {
    fileName: input.fileName,
    fileSize: input.content.length,
    content: { size: input.content.length, sha256: input.sha256, bytes: input.content },
    facts,
  });
}

/** The row, its file and its document.created event, within the account's monthly quota. */
async function insertDocument(
  trx: Db,
  events: EventLog,
  account: Account,
  input: { fileName: string; fileSize: number; content?: ReceivedFile; facts?: Pick<PdfFacts, 'pageCount' | 'pageSizes' | 'sha256'> },
) {
  const { facts } = input;
  await assertDocumentQuota(trx, account, { lock: true });
  const { content } = input;
  const row = await insertDocumentRow(
    trx,
    {
      id: newId('document'),
      accountId: account.id,
      fileName: input.fileName,
      fileSize: input.fileSize,
      status: facts ? 'ready' : 'awaiting_file',
      pageCount: facts?.pageCount ?? null,
      pageSizes: facts?.pageSizes ?? null,
      sha256: facts?.sha256 ?? null,
    },
    // A file in memory goes in the same statement as its row.
    content?.bytes,
  );
  if (content && !content.bytes) await insertDocumentFile(trx, row.id, content);
  const document = toDocument(row);
  await events.record(trx, account.id, 'document.created', documentEventData(document));
  return document;
}

/**
 * The most of a file sent to the database at once. A larger one is written in pieces, each appended to
 * the one before in the same transaction, so that the api holds a piece (and the driver's copy of it),
 * never the whole file; PostgreSQL rewrites the value once per piece, about 3 × a 25 MB file.
 */
const FILE_PIECE_BYTES = 8 * 1024 * 1024;

/** A document's PDF, from memory or, piece by piece, from the temporary file of its upload. */
async function insertDocumentFile(trx: Db, documentId: string, file: ReceivedFile) {
  if (file.bytes) return insertFileContent(trx, documentId, file.bytes);
  const handle = await fs.promises.open(file.path!);
  try {
    for (let offset = 0; offset < file.size; offset += FILE_PIECE_BYTES) {
      const piece = Buffer.allocUnsafe(Math.min(FILE_PIECE_BYTES, file.size - offset));
      const { bytesRead } = await handle.read(piece, 0, piece.length, offset);
      if (bytesRead !== piece.length) throw new Error(`The upload's temporary file ended after ${offset + bytesRead} of ${file.size} bytes.`);
      if (offset === 0) await insertFileContent(trx, documentId, piece);
      else await appendFileContent(trx, documentId, piece);
    }
  } finally {
    await handle.close();
  }
}

/** Uploads the PDF of a document created without content. The original is immutable once uploaded. */
export async function uploadDocumentFile({ db, events, pdf }: UploadDeps, accountId: string, id: string, file: ReceivedFile): Promise<Document> {
  const document = await getDocument(db, accountId, id);
  if (document.status !== 'awaiting_file') throw conflict('This document already has its file; originals cannot be replaced.');
  const facts = await checkContent(pdf, file, document.fileSize);
  return unitOfWork(db, async (trx) => {
    const row = await markFileArrived(trx, accountId, id, facts);
    if (!row) throw conflict('This document already has its file; originals cannot be replaced.');
    await insertDocumentFile(trx, id, file);
    const uploaded = toDocument(row);
    await recordChange(trx, events, uploaded, 'document.updated');
    return uploaded;
  });
}

/**
 * Brings the words of texts stored without them (under Elasticsearch) into search_vector, `batch` documents
 * per statement (a partial index finds them), while `keepGoing` says so. Returns how many it brought.
 * Workers running at once take different documents; safe to repeat.
 */
export async function vectorizeStoredTexts(
  db: Db,
  { batch = 500, keepGoing = () => true }: { batch?: number; keepGoing?: () => boolean } = {},
): Promise<number> {
  let brought = 0;
  while (keepGoing()) {
    const count = await vectorizeTexts(db, batch);
    brought += count;
    if (count < batch) break;
  }
  return brought;
}

/**
 * The text of a document's PDF, for search: a small one read whole, a large one copied piece by piece
 * into a temporary file that the extractor's child reads, so that the worker never holds a large file
 * (nor its hex on the wire). The temporary file is gone when this returns, however the extraction ended.
 */
export async function readDocumentText(db: Db, pdfText: PdfTextExtractor, id: string): Promise<string> {
  const file = await findFileUpTo(db, id, IN_MEMORY_BYTES);
  if (!file) return '';
  if (file.content) return pdfText.extractText({ bytes: file.content });
  await fs.promises.mkdir(pdfText.fileDir, { recursive: true });
  const filePath = path.join(pdfText.fileDir, `${crypto.randomUUID()}.part`);
  try {
    await copyDocumentFile(db, id, file.size, filePath);
    return await pdfText.extractText({ path: filePath });
  } finally {
    await fs.promises.rm(filePath, { force: true });
  }
}

/**
 * The most of a file read from the database at once. Each piece comes over as hex (twice its size) and
 * the driver keeps a buffer as large as the largest message: 1 MiB pieces cost the worker extracting ten
 * 25 MB PDFs about 60 MB, 8 MiB pieces about 180 MB, at the same speed.
 */
const READ_PIECE_BYTES = 1024 * 1024;

/** Copies a document's PDF of `size` bytes into a new file, READ_PIECE_BYTES at a time. */
async function copyDocumentFile(db: Db, id: string, size: number, filePath: string) {
  const handle = await fs.promises.open(filePath, 'wx', 0o600);
  try {
    for (let offset = 0; offset < size; offset += READ_PIECE_BYTES) {
      const length = Math.min(READ_PIECE_BYTES, size - offset);
      const piece = await readFilePiece(db, id, offset, length);
      if (piece?.length !== length) throw new Error(`The file of document ${id} ended after ${offset + (piece?.length ?? 0)} of ${size} bytes.`);
      const { bytesWritten } = await handle.write(piece, 0, length, offset);
      if (bytesWritten !== length) throw new Error(`Only ${offset + bytesWritten} of ${size} bytes of document ${id} were written to ${filePath}.`);
    }
  } finally {
    await handle.close();
  }
}

/** The event of a change to a document, in the change's transaction: it keeps the search index in step. */
async function recordChange(trx: Db, events: EventLog, document: Document, type: 'document.updated' | 'document.deleted') {
  await events.record(trx, document.accountId, type, { ...documentEventData(document), updatedAt: document.updatedAt.toISOString() });
}

export async function getDocument(db: Db, accountId: string, id: string): Promise<Document> {
  const row = await findLiveDocument(db, accountId, id);
  if (!row) throw notFound('Document');
  return toDocument(row);
}

/** Newest first, a page at a time. */
export async function listDocuments(db: Db, accountId: string, query: DocumentListQuery) {
  const page = toPage(await listLiveDocuments(db, accountId, query), query.limit);
  return { ...page, data: page.data.map(toDocument) };
}

/** Live documents of an account by id, in no particular order: what a search hit shows. */
export async function getDocuments(db: Db, accountId: string, ids: string[]): Promise<Document[]> {
  if (ids.length === 0) return [];
  return (await findLiveDocuments(db, accountId, ids)).map(toDocument);
}

export async function renameDocument({ db, events }: DocumentDeps, accountId: string, id: string, fileName: string): Promise<Document> {
  return unitOfWork(db, async (trx) => {
    const row = await renameLiveDocument(trx, accountId, id, fileName);
    if (!row) throw notFound('Document');
    const renamed = toDocument(row);
    await recordChange(trx, events, renamed, 'document.updated');
    return renamed;
  });
}

export async function deleteDocument({ db, events }: DocumentDeps, accountId: string, id: string): Promise<void> {
  await unitOfWork(db, async (trx) => {
    // The row lock orders this delete with a signing request being made on the document (which locks it too).
    if (!(await lockDocument(trx, accountId, id))) throw notFound('Document');
    // The documents capability guards its own delete, in its transaction: signingRequests come after documents, so it reads their table here.
    const active = await trx('signing_request_documents as rd')
      .join('signing_requests as r', 'r.id', 'rd.signing_request_id')
      .where({ 'rd.document_id': id, 'r.status': 'pending' })
      .first('r.id');
    if (active) throw conflict(`The document is out for signature (${active.id}); cancel that request first.`);
    const row = await softDeleteDocument(trx, accountId, id);
    if (!row) throw notFound('Document');
    await recordChange(trx, events, toDocument(row), 'document.deleted');
  });
}

/** Locks a live document of the account for the rest of the transaction; undefined if there is none. */
export async function lockDocument(trx: Db, accountId: string, id: string): Promise<Document | undefined> {
  const row = await lockLiveDocument(trx, accountId, id);
  return row && toDocument(row);
}

export async function getDocumentFile(db: Db, accountId: string, id: string): Promise<{ document: Document; content: Buffer }> {
  const document = await getDocument(db, accountId, id);
  const content = await findFileContent(db, id);
  if (!content) throw conflict('This document has no file yet: upload it with PUT /documents/{id}/file.');
  return { document, content };
}

/** [width, height] of each page, as found at upload; read from the file for documents stored before sizes were (and kept, with `remember`). */
export async function pageSizesOf(db: Db, documentId: string, content?: Uint8Array, { remember = false } = {}): Promise<[number, number][]> {
  const known = await findPageSizes(db, documentId);
  if (known) return known;
  content ??= (await findFileContent(db, documentId))!;
  const pdf = await PDFDocument.load(content, { updateMetadata: false });
  const sizes = pdf.getPages().map((page): [number, number] => [page.getWidth(), page.getHeight()]);
  // Documents uploaded before page sizes were stored learn theirs once, when a request is made of them.
  if (remember) await storePageSizes(db, documentId, sizes);
  return sizes;
}
