import { zipSync } from 'fflate';
import type { Db } from '../db';
import { findFileContent } from '../documents/store';
import { conflict, notFound } from '../errors';
import { findSealedContent, findSealedContents, findSigningRequest, type RequestDocument } from './store';
import type { SigningContext } from './links';

/** The file name of the sealed PDF: "<name> (signed).pdf". */
export const signedFileName = (fileName: string) => `${fileName.replace(/\.pdf$/i, '')} (signed).pdf`;

/** The sealed files' names, in the documents' order, made distinct where two documents share a name ("… (signed) (2).pdf"). */
export function signedFileNames(documents: { fileName: string }[]): string[] {
  const taken = new Set<string>();
  return documents.map(({ fileName }) => {
    const base = signedFileName(fileName);
    let name = base;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = base.replace(/\.pdf$/, ` (${n}).pdf`);
    taken.add(name.toLowerCase());
    return name;
  });
}

/** The sealed PDFs of a request under their names, in the documents' order; a content is missing until its document is sealed. */
export async function findSealedFiles(db: Db, requestId: string, documents: RequestDocument[]) {
  const contents = await findSealedContents(db, requestId);
  const names = signedFileNames(documents);
  return documents.map((document, index) => ({ fileName: names[index], content: contents.get(document.documentId) }));
}

/** One document's sealed PDF; 404 for a document not in the request, 409 before the request is completed. */
export async function getSealedDocument(db: Db, accountId: string, id: string, documentId: string) {
  const { request, documents } = await findSigningRequest(db, accountId, id);
  const index = documents.findIndex((document) => document.documentId === documentId);
  if (index < 0) throw notFound('Document');
  const content = await findSealedContent(db, id, documentId);
  if (!content || request.status !== 'completed') throw notSealedYet(request.status);
  return { content, fileName: signedFileNames(documents)[index] };
}

/** The sealed PDF of a request with one document; a ZIP of every sealed PDF, in order, when it has several. */
export async function getSealedDocuments(db: Db, accountId: string, id: string) {
  const { request, documents } = await findSigningRequest(db, accountId, id);
  if (request.status !== 'completed') throw notSealedYet(request.status);
  const files = await findSealedFiles(db, id, documents);
  if (files.some((file) => !file.content)) throw notSealedYet(request.status);
  if (files.length === 1) return { content: files[0].content!, fileName: files[0].fileName, type: 'application/pdf' };
  // Stored, not deflated: sealed PDFs are compressed already, and a signature covers their exact bytes.
  const zip = zipSync(Object.fromEntries(files.map((file) => [file.fileName, [file.content!, { level: 0 }]])), { mtime: request.completedAt ?? new Date() });
  return {
    content: Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength),
    fileName: `${request.title.replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_')} (signed).zip`,
    type: 'application/zip',
  };
}

const notSealedYet = (status: string) => conflict(`The sealed PDF exists once every signer has signed; this request is ${status}.`);

/** One document of the signer's request as it was sent; 404 for any other. */
export async function getOriginalDocument(db: Db, { documents }: Pick<SigningContext, 'documents'>, documentId = documents[0].documentId): Promise<Buffer> {
  if (!documents.some((document) => document.documentId === documentId)) throw notFound('Document');
  return (await findFileContent(db, documentId))!;
}
