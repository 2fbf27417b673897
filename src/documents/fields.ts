import { z } from '../api/validation';
import type { Config } from '../config';
import { fieldTypes } from '../pdf/textTags';

// Where on a document's pages a signer acts: placed by hand in a request, or by a template's roles.

// A request's limits. A template meets them too (src/templates/layout.ts), so that every template can be sent.
export const MAX_SIGNERS = 50;
export const MAX_FIELDS_PER_SIGNER = 50;

/** REQUEST_MAX_DOCUMENTS and REQUEST_MAX_PAGES: how many documents a request may send, and pages across them. */
export interface RequestLimits {
  maxDocuments: number;
  maxPages: number;
}

export const requestLimitsFrom = (config: Pick<Config, 'REQUEST_MAX_DOCUMENTS' | 'REQUEST_MAX_PAGES'>): RequestLimits => ({
  maxDocuments: config.REQUEST_MAX_DOCUMENTS,
  maxPages: config.REQUEST_MAX_PAGES,
});

/** The 400's words when a request's (or a template's) documents are more than the limits allow; undefined within them. */
export const tooManyDocuments = (count: number, limits: RequestLimits) =>
  count > limits.maxDocuments ? `documents must list at most ${limits.maxDocuments} documents (REQUEST_MAX_DOCUMENTS); it lists ${count}` : undefined;

/** The same for the pages across the documents, given each one's page count. */
export function tooManyPages(pageCounts: number[], limits: RequestLimits) {
  const pages = pageCounts.reduce((sum, count) => sum + count, 0);
  return pages > limits.maxPages ? `documents must have at most ${limits.maxPages} pages in all (REQUEST_MAX_PAGES); these have ${pages}` : undefined;
}

export const FieldSchema = z
  .object({
    page: z.number().int().min(1).max(100_000),
    x: z.number().min(0),
    y: z.number().min(0),
    width: z.number().positive(),
    height: z.number().positive(),
    type: z.enum(['signature', 'initials', 'date', 'text']),
  })
  .openapi('SignatureField', { description: 'A place to sign, in PDF points from the bottom-left corner of a 1-based page.' });

export type SignatureField = z.infer<typeof FieldSchema>;

// A field's document is document_id, as the request's own (documentId is accepted too, as it is there).
const withDocumentIdAlias = (field: unknown) =>
  field && typeof field === 'object' && !Array.isArray(field) && (field as Record<string, unknown>).document_id === undefined
    ? { ...field, document_id: (field as Record<string, unknown>).documentId }
    : field;

/** A field placed by hand in a request: on a page of one of its documents. */
export const RequestFieldSchema = z
  .preprocess(
    withDocumentIdAlias,
    FieldSchema.extend({
      document_id: z.string().min(1).optional().openapi({
        description: 'The document of the request the field is on (documentId is accepted too); may be left out when the request has one document.',
      }),
    }),
  )
  .openapi('RequestField', { description: 'A place to sign on one of the request’s documents, in PDF points from the bottom-left corner of a 1-based page.' });

export type RequestField = z.infer<typeof RequestFieldSchema>;

/** A signer's field as stored and shown: placed by hand (SignatureField), or by a template's role, with its label and any prefilled value. */
export const SignerFieldSchema = FieldSchema.extend({
  documentId: z.string().optional().openapi({
    description: 'The document of the request the field is on; absent on requests made before requests had several documents (their one document).',
  }),
  type: z.enum(fieldTypes),
  label: z.string().nullable().optional().openapi({ description: 'The template field’s label.' }),
  required: z.boolean().optional(),
  value: z
    .string()
    .nullable()
    .optional()
    .openapi({ description: 'Prefilled by the sender from a template (fixed): text, a date, or "true" for a ticked checkbox.' }),
}).openapi('SignerField');

export type SignerField = z.infer<typeof SignerFieldSchema>;
