import type { Document } from './service';

/** Exactly the fields of a document that leave the service. */
export function presentDocument(document: Document) {
  return {
    id: document.id,
    fileName: document.fileName,
    fileSize: document.fileSize,
    status: document.status,
    pageCount: document.pageCount,
    sha256: document.sha256,
    createdAt: document.createdAt.toISOString(),
    updatedAt: document.updatedAt.toISOString(),
  };
}
