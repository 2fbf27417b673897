import type { TextTagScan } from '../pdf/textTags';
import type { Template } from './store';

/** Exactly the fields of a template that leave the service. */
export function presentTemplate(template: Template) {
  return {
    id: template.id,
    name: template.name,
    description: template.description,
    sourceDocumentId: template.sourceDocumentId,
    pageCount: template.pageCount,
    pages: template.pageSizes.map(([width, height]) => ({ width, height })),
    sha256: template.sha256,
    roles: template.roles.map(({ name, order }) => ({ name, order })),
    fields: template.fields.map(({ role, type, required, label, page, x, y, width, height }) => ({ role, type, required, label, page, x, y, width, height })),
    createdAt: template.createdAt.toISOString(),
    updatedAt: template.updatedAt.toISOString(),
  };
}

/** What a dry run of text-tag detection found: the roles in order of first appearance, the fields, the warnings. */
export function presentDetectedFields(scan: TextTagScan) {
  return {
    roles: [...new Set(scan.fields.map((field) => field.role))],
    fields: scan.fields.map(({ role, type, label, page, x, y, width, height, tag }) => ({ role, type, label, page, x, y, width, height, tag })),
    warnings: scan.warnings,
  };
}
