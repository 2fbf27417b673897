import { isId } from '../ids';
import { paginationQuery, queryDate, z } from '../api/validation';

import { requestStatuses, signerStatuses, signingOrders } from '../../workflows/definitions';

export const FieldSchema = z
  .object({
    page: z.number().int().min(1),
    x: z.number().min(0),
    y: z.number().min(0),
    width: z.number().positive(),
    height: z.number().positive(),
    type: z.enum(['signature', 'initials', 'date', 'text']),
  })
  .openapi('SignatureField', { description: 'A place to sign, in PDF points from the bottom-left corner of a 1-based page.' });

export type SignatureField = z.infer<typeof FieldSchema>;

const SignerInputSchema = z.object({
  name: z.string().trim().min(1, { error: 'is required' }).max(200),
  email: z.email().max(320),
  fields: z.array(FieldSchema).max(50).optional(),
});

// The spec names the field document_id; documentId is accepted too, as every other field is camelCase.
const withDocumentIdAlias = (body: unknown) =>
  body && typeof body === 'object' && !Array.isArray(body) && (body as Record<string, unknown>).document_id === undefined
    ? { ...body, document_id: (body as Record<string, unknown>).documentId }
    : body;

export const SigningRequestCreateSchema = z
  .preprocess(
    withDocumentIdAlias,
    z
      .object({
        document_id: z.string().min(1, { error: 'is required' }).openapi({ description: 'The document to sign (documentId is accepted too).' }),
        title: z.string().trim().min(1, { error: 'is required' }).max(200),
        message: z.string().max(5000).optional(),
        signers: z.array(SignerInputSchema).min(1).max(50),
        signingOrder: z.enum(signingOrders).default('parallel'),
        expiresAt: z.iso.datetime({ offset: true }).optional().openapi({ description: 'ISO 8601; default: expiresInDays from now.' }),
        expiresInDays: z.number().int().min(1).max(365).optional().openapi({ description: 'Default 30.' }),
        reminderEveryDays: z.number().int().min(0).max(30).default(3).openapi({ description: '0 = no reminders.' }),
      })
      .superRefine((input, ctx) => {
        const seen = new Set<string>();
        input.signers.forEach((signer, index) => {
          const email = signer.email.toLowerCase();
          if (seen.has(email)) ctx.addIssue({ code: 'custom', path: ['signers', index, 'email'], message: 'is a duplicate: each signer needs their own e-mail address' });
          seen.add(email);
        });
        if (input.expiresAt && Date.parse(input.expiresAt) <= Date.now()) ctx.addIssue({ code: 'custom', path: ['expiresAt'], message: 'must be in the future' });
        if (input.expiresAt && input.expiresInDays) ctx.addIssue({ code: 'custom', path: ['expiresInDays'], message: 'cannot be combined with expiresAt' });
      }),
  )
  .openapi('SigningRequestCreate');

export const CancelSchema = z.object({ reason: z.string().max(1000).optional() }).openapi('SigningRequestCancel');

export const SigningRequestListQuerySchema = z.object({
  ...paginationQuery,
  cursor: paginationQuery.cursor.refine((value) => value === undefined || isId('signingRequest', value), { error: 'is not a valid cursor' }),
  status: z.enum(requestStatuses).optional(),
  documentId: z.string().max(100).optional(),
  signerEmail: z.string().max(320).optional(),
  createdAfter: queryDate.optional().openapi({ type: 'string', format: 'date-time' }),
  createdBefore: queryDate.optional().openapi({ type: 'string', format: 'date-time' }),
});

export const SignerSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    order: z.number().int(),
    status: z.enum(signerStatuses),
    fields: z.array(FieldSchema).nullable(),
    notifiedAt: z.string().nullable(),
    viewedAt: z.string().nullable(),
    signedAt: z.string().nullable(),
    declinedAt: z.string().nullable(),
    declineReason: z.string().nullable(),
  })
  .openapi('Signer');

export const ProgressSchema = z
  .object({
    stage: z.enum(['awaiting_signers', 'sealing', 'finished']).openapi({ description: 'awaiting_signers: waiting for signatures; sealing: every signer has signed and the sealed PDF is being made; finished: the request has its outcome (status).' }),
    waitingFor: z.array(z.string()).openapi({ description: 'Ids of the signers whose turn it is (all who have not acted when parallel; the next one when sequential).' }),
    sealing: z
      .object({
        attempts: z.number().int().openapi({ description: 'Failed sealing attempts so far.' }),
        lastError: z.string().nullable(),
        nextAttemptAt: z.string().nullable().openapi({ format: 'date-time' }),
      })
      .nullable()
      .openapi({ description: 'While sealing: how it goes. A request that cannot be sealed shows its failures here instead of staying pending in silence.' }),
  })
  .openapi('SigningRequestProgress', { description: 'Where the request stands, read from its workflow while it runs, from the database once it has finished.' });

export const SigningRequestSchema = z
  .object({
    id: z.string().openapi({ example: 'sr_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    documentId: z.string(),
    title: z.string(),
    message: z.string().nullable(),
    status: z.enum(requestStatuses),
    signingOrder: z.enum(signingOrders),
    expiresAt: z.string(),
    reminderEveryDays: z.number().int(),
    originalSha256: z.string(),
    sealedSha256: z.string().nullable(),
    signers: z.array(SignerSchema),
    progress: ProgressSchema,
    createdAt: z.string(),
    updatedAt: z.string(),
    completedAt: z.string().nullable(),
  })
  .openapi('SigningRequest');

export const AuditStepSchema = z
  .object({
    action: z.string(),
    actor: z.string().nullable(),
    signerId: z.string().nullable(),
    signerEmail: z.string().nullable(),
    ipAddress: z.string().nullable(),
    userAgent: z.string().nullable(),
    data: z.any(),
    at: z.string(),
  })
  .openapi('AuditStep');

export type SigningRequestCreateInput = z.infer<typeof SigningRequestCreateSchema>;
export type SigningRequestListQuery = z.infer<typeof SigningRequestListQuerySchema>;
