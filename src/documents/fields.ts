import { jsonSchemaKeywords, problemsOf, visibleText, z } from '../api/validation';
import type { Config } from '../config';
import { MAX_CALCULATION_LENGTH } from '../fields/calculation';
import { fieldConditionJsonSchema, FieldConditionSchema, ruleKeys } from '../fields/schemas';
import { drawableInSealedPdf, undrawableTextProblem } from '../pdf/drawableText';
import { fieldTypes } from '../fields/types';

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

/** A field's label, given or read from a text tag: shown to the signer beside the field, and in a template the name prefill uses. */
export const fieldLabel = visibleText(100).nullish();

/**
 * A text tag's label and options were read from a PDF, not checked by this module's schemas: what they break of a
 * label's rules, and the options the sealed PDF cannot show, each named at `at` (the rules of fields check the rest).
 */
export const tagTextProblems = ({ label, options }: { label?: string | null; options?: string[] }, at: string) => [
  ...(label ? problemsOf(fieldLabel, label, `${at}.label`) : []),
  ...(options ?? []).flatMap((option, index) => {
    const problem = undrawableTextProblem(option);
    return problem ? [`${at}.options.${index} ${problem}`] : [];
  }),
];
const size = z.number().positive({ error: 'must be a positive number' });
const box = z.strictObject({ x: z.number().min(0), y: z.number().min(0), width: size, height: size });

// Each is drawn in the sealed PDF as the signer chose it.
const option = visibleText(200).superRefine(drawableInSealedPdf);

/** What a form field may carry beyond its place: its options, rules, condition, formula or text (src/fields says which fit which type). */
export const logicShape = {
  options: z
    .array(option)
    .max(100)
    .optional()
    .openapi({
      ...jsonSchemaKeywords({ uniqueItems: true }),
      description: 'radio, dropdown, multiSelect and checkboxGroup: the choices, in order (1 to 100, each once). Required for them; for no other type.',
    }),
  optionBoxes: z.array(box).max(100).optional().openapi({
    description:
      'radio and checkboxGroup: one box per option on the field’s page, in the order of options, where the sealed PDF marks the option chosen. Without them the chosen options are written in the field’s own box.',
  }),
  ...ruleKeys,
  showWhen: FieldConditionSchema.optional().openapi({
    ...(fieldConditionJsonSchema() as Record<string, never>),
    description:
      'Show the field (and require it) only when a test on another field of the same signer holds: {field: label, is: "filled" | "empty"}, {field, is: "equals" | "notEquals", values: [..]}, or {all: [..]} / {any: [..]} of them, 3 levels deep at most. A hidden field is neither required nor sealed.',
    example: { field: 'Has pets', is: 'equals', values: ['Yes'] },
  }),
  formula: z.string().max(MAX_CALCULATION_LENGTH).optional().openapi({
    description:
      'calculated: the number it shows, from number fields of the same signer named by label in braces: + - * / ( ), min, max, sum, abs, round(x, places). Computed on the signer’s page and again by the server, whose value is sealed.',
    example: 'round({Monthly rent} * 12 - {Deposit}, 2)',
  }),
  text: visibleText(2000)
    .superRefine(drawableInSealedPdf)
    .optional()
    .openapi({ description: 'staticText: the text the sender places (a heading, a note); drawn as given.' }),
};

/**
 * One field, placed by hand in a request or on a template's role: the same kinds, position, label and
 * required wherever it is placed, each stored and shown to the signer. A key it does not know is a 400
 * rather than dropped. Request and template fields spread its shape into objects of their own (an
 * extension would be an allOf whose parts each forbid the other's keys in the OpenAPI document).
 */
export const FieldSchema = z.strictObject({
  type: z.enum(fieldTypes).openapi({
    description:
      'signature and initials take the signer’s; text their text; checkbox ticked or not; date the date of signing; number, email and phone (E.164) what they type; ' +
      'radio and dropdown one of options, multiSelect and checkboxGroup several; calculated the result of its formula; signerName and signerEmail the signer’s own; staticText the sender’s text; ' +
      'image a PNG or JPEG the signer uploads, drawn in the box; attachment a PDF, PNG or JPEG the signer uploads, carried in the sealed PDF.',
  }),
  page: z.number().int().min(1).max(100_000),
  x: z.number().min(0),
  y: z.number().min(0),
  width: size,
  height: size,
  label: fieldLabel.openapi({
    description:
      'Shown to the signer beside the field (“Rent (page 1)”) and in the errors of a sign that leaves it empty. In a template: unique, and the name prefill uses.',
    example: 'rent',
  }),
  required: z.boolean().default(true).openapi({
    description:
      'Whether the signer must fill it (tick a checkbox, give text or initials) before signing; default true. Signature and date fields are always filled.',
  }),
  ...logicShape,
});

/** The keys of a field, for the objects that add to them. */
export const { shape: fieldShape } = FieldSchema;

// A field's document is document_id, as the request's own (documentId is accepted too, as it is there).
function withDocumentIdAlias(field: unknown) {
  if (!field || typeof field !== 'object' || Array.isArray(field)) return field;
  const { documentId, ...rest } = field as Record<string, unknown>;
  if (rest.document_id !== undefined || documentId === undefined) return field;
  return { ...rest, document_id: documentId };
}

/** A field placed by hand in a request: on a page of one of its documents. */
export const RequestFieldSchema = z
  .preprocess(
    withDocumentIdAlias,
    z.strictObject({
      ...fieldShape,
      document_id: z.string().min(1).optional().openapi({
        description: 'The document of the request the field is on (documentId is accepted too); may be left out when the request has one document.',
      }),
    }),
  )
  .openapi('RequestField', {
    description: 'A field on one of the request’s documents, in PDF points from the bottom-left corner of a 1-based page. A key not listed here is a 400.',
  });

export type RequestField = z.infer<typeof RequestFieldSchema>;

/** A file a signer uploaded for an image or attachment field. */
const UploadedFileSchema = z
  .object({
    id: z.string().openapi({ description: 'upl_…: the upload, downloadable by the owner.' }),
    fileName: z.string(),
    contentType: z.string().openapi({ description: 'application/pdf, image/png or image/jpeg, read from the file.' }),
    size: z.number().int(),
    sha256: z.string().openapi({ description: 'Hex SHA-256 of the file, as the certificate of completion lists it.' }),
  })
  .openapi('UploadedFile');

/** A signer's field as stored and shown: a field (FieldSchema) placed by hand, by a text tag or by a template's role, with any prefilled value. */
export const SignerFieldSchema = z
  .object({
    ...fieldShape,
    documentId: z.string().optional().openapi({
      description: 'The document of the request the field is on; absent on requests made before requests had several documents (their one document).',
    }),
    label: z.string().nullable().optional().openapi({ description: 'As given (null: none); absent on fields placed by hand before requests took labels.' }),
    required: z.boolean().optional().openapi({ description: 'As given; absent (not required) on fields placed by hand before requests took it.' }),
    value: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: 'Prefilled by the sender from a template (fixed): text, a date, or "true" for a ticked checkbox.' }),
    filled: z
      .object({
        value: z.union([z.string(), z.number(), z.boolean(), z.array(z.string()), UploadedFileSchema]).nullable(),
        hidden: z.boolean(),
      })
      .optional()
      .openapi({
        description:
          'Once the signer signed: what the field holds, as sealed. value is typed: a number or calculated field’s number, a checkbox’s true or false, ' +
          'a multiSelect’s or checkboxGroup’s list, an image’s or attachment’s file (GET /signing-requests/{id}/uploads/{uploadId}), the text of the others (null: left empty); hidden is true when its condition hid it (not sealed). Absent on signature, initials, date and staticText fields.',
      }),
  })
  .openapi('SignerField');

export type SignerField = z.infer<typeof SignerFieldSchema>;
