import type { TextTagScan } from '../pdf/textTags';
import type { Template } from './store';

const pagesOf = (pageSizes: [number, number][]) => pageSizes.map(([width, height]) => ({ width, height }));

/**
 * Exactly the fields of a template that leave the service. A signer's role shows no recipientType, a role
 * without a step no routingOrder, one without verification none, and a field its documentId only when there are several documents: a
 * template as it was before those answers as it did.
 */
export function presentTemplate(template: Template) {
  const several = template.documents.length > 1;
  return {
    id: template.id,
    name: template.name,
    description: template.description,
    sourceDocumentId: template.sourceDocumentId,
    pageCount: template.pageCount,
    pages: pagesOf(template.pageSizes),
    sha256: template.sha256,
    documents: template.documents.map((document) => ({
      documentId: document.sourceDocumentId,
      fileName: document.fileName,
      pageCount: document.pageSizes.length,
      pages: pagesOf(document.pageSizes),
      sha256: document.sha256,
    })),
    roles: template.roles.map(({ name, order, recipientType, routingOrder, verification }) => ({
      name,
      order,
      ...(recipientType === 'signer' ? {} : { recipientType }),
      ...(routingOrder === null ? {} : { routingOrder }),
      ...(verification === null ? {} : { verification }),
    })),
    fields: template.fields.map(({ document, ...field }) => ({
      ...(several ? { documentId: template.documents[document - 1].sourceDocumentId } : {}),
      ...field,
    })),
    createdAt: template.createdAt.toISOString(),
    updatedAt: template.updatedAt.toISOString(),
  };
}

/** What a dry run of text-tag detection found: the roles in order of first appearance, the fields, the warnings. */
export function presentDetectedFields(scan: TextTagScan) {
  return {
    roles: [...new Set(scan.fields.map((field) => field.role))],
    fields: scan.fields.map(({ role, type, label, options, formula, page, x, y, width, height, tag }) => ({
      role,
      type,
      label,
      ...(options ? { options } : {}),
      ...(formula === undefined ? {} : { formula }),
      page,
      x,
      y,
      width,
      height,
      tag,
    })),
    warnings: scan.warnings,
  };
}
