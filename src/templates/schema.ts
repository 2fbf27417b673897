import { idParam, listOf } from '../api/route';
import { jsonSchemaKeywords, paginationQuery, text, visibleText, z } from '../api/validation';
import { drawableInSealedPdf } from '../pdf/drawableText';
import { fieldTypes } from '../fields/types';
import { fieldLabel, fieldShape, logicShape, MAX_FIELDS_PER_SIGNER, MAX_SIGNERS } from '../documents/fields';
import { recipientTypes, verificationMethods } from '../domain/signingRequests';

export { fieldTypes };

// A template's limits are a request's: a role is a signer, and a role's fields are its signer's fields.
export const MAX_ROLES = MAX_SIGNERS;
export const MAX_FIELDS_PER_ROLE = MAX_FIELDS_PER_SIGNER;
export const MAX_TEMPLATE_FIELDS = 500;
/** As a request's documents: REQUEST_MAX_DOCUMENTS may lower it, not raise it. */
export const MAX_TEMPLATE_DOCUMENTS = 20;

// A request made from a template names its document after it, and the certificate shows that name.
const templateName = visibleText(200).superRefine(drawableInSealedPdf);
/** A role's name, given or read from a text tag. */
export const roleName = visibleText(100).openapi({ example: 'tenant' });
export { fieldLabel };

export const TemplateFieldInputSchema = z
  .strictObject({
    document_id: z.string().min(1, { error: 'is required' }).optional().openapi({
      description: 'The document of the template the field is on (one of its documents’ document_id); may be left out when the template has one document.',
    }),
    role: roleName.openapi({ description: 'The name of one of the template’s roles.' }),
    ...fieldShape,
  })
  .openapi('TemplateFieldInput', {
    description:
      'A field of one role (as a request’s RequestField), in PDF points from the bottom-left corner of a 1-based page, inside the page. A key not listed here is a 400.',
  });

// A template holds no access code: a request made from it gives the code for the role's signer.
const TemplateRoleVerificationSchema = z
  .looseObject({ method: z.enum(verificationMethods) })
  .superRefine((verification, ctx) => {
    if ('code' in verification)
      ctx.addIssue({
        code: 'custom',
        path: ['code'],
        message: 'cannot be given to a template: give the access code for the role’s signer when a request is made from it (signers[].verification.code)',
      });
  })
  .openapi('TemplateRoleVerification', {
    not: { required: ['code'] },
    description:
      'What the role’s signer proves before their page shows anything: email_code, a 6-digit code e-mailed to them; access_code, a code the sender tells them, ' +
      'given for the role’s signer in each request made from the template (signers[].verification: {method: "access_code", code}), or the request is refused (400). Not for a cc’s role.',
  });

export const TemplateRoleInputSchema = z
  .object({
    name: roleName.openapi({ description: 'Unique within the template.' }),
    order: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .openapi({ description: 'Signing order when sequential (lower first); default: the role’s position in the list.' }),
    recipientType: z.enum(recipientTypes).optional().openapi({
      description:
        'What the role’s recipient does, as a request’s recipientType: signer (the default; at least one signature field), approver, viewer or cc. Only a signer’s role has fields.',
    }),
    routingOrder: z.number().int().min(1).max(MAX_SIGNERS).optional().openapi({
      description: 'The step the role acts in, as a request’s routingOrder: given on one role, needed on every one but cc; requests from the template keep it.',
    }),
    verification: TemplateRoleVerificationSchema.optional(),
  })
  .openapi('TemplateRoleInput');

export const TemplateDocumentInputSchema = z
  .object({
    document_id: z
      .string()
      .min(1, { error: 'is required' })
      .openapi({ description: 'A document of this account with its PDF uploaded: the template keeps its own copy of that PDF.' }),
  })
  .openapi('TemplateDocumentInput');

const documents = z
  .array(TemplateDocumentInputSchema)
  .min(1)
  .max(MAX_TEMPLATE_DOCUMENTS, { error: `must list at most ${MAX_TEMPLATE_DOCUMENTS} documents (REQUEST_MAX_DOCUMENTS)` })
  .openapi({
    ...jsonSchemaKeywords({ uniqueItems: true }),
    description:
      'The documents, in the order signers see them, each once (at most REQUEST_MAX_DOCUMENTS, 20 by default, and REQUEST_MAX_PAGES pages in all, as a request).',
  });

const roles = z.array(TemplateRoleInputSchema).max(MAX_ROLES);
const fields = z.array(TemplateFieldInputSchema).max(MAX_TEMPLATE_FIELDS);
const rolesLimit = `At most ${MAX_ROLES}, as a request has at most ${MAX_SIGNERS} signers`;
const fieldsLimit = `At most ${MAX_TEMPLATE_FIELDS}, and at most ${MAX_FIELDS_PER_ROLE} per role, as a request's signer has at most ${MAX_FIELDS_PER_SIGNER}`;

// Once one role has a routing order, every role but cc has one (as a request's recipients), as JSON Schema.
const routedRoles = jsonSchemaKeywords({
  if: { required: ['roles'], properties: { roles: jsonSchemaKeywords({ contains: { required: ['routingOrder'] } }) } },
  then: {
    properties: {
      roles: { items: { anyOf: [{ required: ['routingOrder'] }, { required: ['recipientType'], properties: { recipientType: { const: 'cc' } } }] } },
    },
  },
});

export const TemplateCreateSchema = z
  .object({
    name: templateName.openapi({ example: 'Residential lease' }),
    description: text(2000).nullish(),
    documentId: z.string().optional().openapi({
      description: 'A document of this account with its PDF uploaded: the template keeps its own copy of that PDF. Or documents.',
      example: 'doc_01jd8x3c6hf1z8k3q2v5n7m9pt',
    }),
    documents: documents.optional().openapi({ description: 'Instead of documentId: several documents. With more than one, each field names its document_id.' }),
    roles: roles.default([]).openapi({ description: `At least one (detectFields adds the roles its tags name). ${rolesLimit}, those of text tags included.` }),
    fields: fields.default([]).openapi({ description: `Each role needs at least one signature field. ${fieldsLimit}, those of text tags included.` }),
    detectFields: z.boolean().default(false).openapi({
      description: 'Also place the fields of the text tags printed in each PDF ({{signature:tenant}}; see POST /documents/{id}/detect-fields).',
    }),
  })
  .superRefine((body, ctx) => {
    if (body.documentId !== undefined && body.documents !== undefined)
      ctx.addIssue({ code: 'custom', path: ['documents'], message: 'cannot be combined with documentId' });
  })
  // Reported with every other problem of the body, even when those stop the check above.
  .refine((body) => body.documentId !== undefined || body.documents !== undefined, {
    path: ['documentId'],
    error: 'is required',
    when: ({ value }) => typeof value === 'object' && value !== null && !Array.isArray(value),
  })
  .openapi('TemplateCreate', {
    oneOf: [{ required: ['documentId'] }, { required: ['documents'] }],
    allOf: [
      // With several documents, every field names its document.
      jsonSchemaKeywords({
        if: { required: ['documents'], properties: { documents: { minItems: 2 } } },
        then: { properties: { fields: { items: { required: ['document_id'] } } } },
      }),
      routedRoles,
    ],
  });

export const TemplateUpdateSchema = z
  .object({
    name: templateName.optional(),
    description: text(2000).nullish(),
    documents: documents.optional().openapi({
      description:
        'Replaces the documents: one the template has already keeps its copy; the others are copied. Fields not given keep their documents, which must stay.',
    }),
    roles: roles.optional().openapi({ description: `${rolesLimit}.` }),
    fields: fields.optional().openapi({ description: `${fieldsLimit}.` }),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'must change at least one of name, description, documents, roles, fields',
  })
  .openapi('TemplateUpdate', {
    description: 'The template after the change is checked by every rule of a new one.',
    anyOf: ['name', 'description', 'documents', 'roles', 'fields'].map((field) => ({ required: [field] })),
    allOf: [routedRoles],
  });

export const TemplateListQuerySchema = z.object({
  ...paginationQuery('template'),
  q: text(200).optional().openapi({ description: 'Templates whose name contains this text, in any letter case.' }),
});

export const TemplateIdParams = z.object({ id: idParam('template', 'Template') });

export const TemplatePreviewQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(100_000).default(1).openapi({ description: '1-based page; default 1.' }),
  documentId: text(100).optional().openapi({ description: 'Which of the template’s documents (its documentId); default the first.' }),
});

const FieldPlacementSchema = z.object({ page: z.number().int(), x: z.number(), y: z.number(), width: z.number(), height: z.number() });

export const TemplateFieldSchema = FieldPlacementSchema.extend({
  documentId: z.string().nullable().optional().openapi({ description: 'The field’s document (its documentId); only on templates of several documents.' }),
  role: z.string(),
  type: z.enum(fieldTypes),
  required: z.boolean(),
  label: z.string().nullable(),
  ...logicShape,
}).openapi('TemplateField');

const pageSizesSchema = z.array(z.object({ width: z.number(), height: z.number() }));

export const TemplateDocumentSchema = z
  .object({
    documentId: z.string().nullable().openapi({ description: 'The document whose PDF the template copied; fields name it.' }),
    fileName: z.string(),
    pageCount: z.number().int(),
    pages: pageSizesSchema.openapi({ description: 'Size of each page in PDF points.' }),
    sha256: z.string().openapi({ description: 'Hex SHA-256 of the template’s copy.' }),
  })
  .openapi('TemplateDocument');

export const TemplateSchema = z
  .object({
    id: z.string().openapi({ example: 'tpl_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    name: z.string(),
    description: z.string().nullable(),
    sourceDocumentId: z.string().nullable().openapi({ description: 'The document whose PDF the template copied (the first one’s).' }),
    pageCount: z.number().int().openapi({ description: 'Of the first document.' }),
    pages: pageSizesSchema.openapi({ description: 'Size of each page of the first document in PDF points.' }),
    sha256: z.string().openapi({ description: 'Hex SHA-256 of the template’s (first) PDF.' }),
    documents: z.array(TemplateDocumentSchema).openapi({ description: 'Every document, in the order signers see them.' }),
    roles: z
      .array(
        z.object({
          name: z.string(),
          order: z.number().int(),
          recipientType: z.enum(recipientTypes).optional().openapi({ description: 'Absent for a signer’s role.' }),
          routingOrder: z.number().int().optional().openapi({ description: 'The role’s step; absent when the request’s signingOrder decides.' }),
          verification: z
            .object({ method: z.enum(verificationMethods) })
            .optional()
            .openapi({ description: 'What the role’s signer proves before their page shows anything; absent when nothing.' }),
        }),
      )
      .openapi({ description: 'In signing order.' }),
    fields: z.array(TemplateFieldSchema),
    createdAt: z.string().openapi({ format: 'date-time' }),
    updatedAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Template');

export const TemplateListSchema = listOf(TemplateSchema).openapi('TemplateList');

export const DetectedFieldsSchema = z
  .object({
    roles: z.array(z.string()).openapi({ description: 'The roles the tags name, in order of first appearance.' }),
    fields: z.array(
      FieldPlacementSchema.extend({
        role: z.string(),
        type: z.enum(fieldTypes),
        label: z.string().nullable(),
        options: z.array(z.string()).optional().openapi({ description: 'radio, dropdown, multiSelect and checkboxGroup: the options the tag lists.' }),
        formula: z.string().optional().openapi({ description: 'calculated: the tag’s formula, its [Label]s written {Label}.', example: '{Rent} * {Months}' }),
        tag: z.string().openapi({ description: 'The tag as printed.', example: '{{signature:tenant}}' }),
      }),
    ),
    warnings: z
      .array(z.string())
      .openapi({ description: 'Tags left out: an unknown type, a malformed tag, missing or empty options, a missing formula, a tag split across lines.' }),
  })
  .openapi('DetectedFields');

export type TemplateCreateInput = z.output<typeof TemplateCreateSchema>;
export type TemplateUpdateInput = z.output<typeof TemplateUpdateSchema>;
export type TemplateListQuery = z.output<typeof TemplateListQuerySchema>;
