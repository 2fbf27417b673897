import { idParam, listOf } from '../api/route';
import { pageLimit, z } from '../api/validation';

// A bulk send: one template to many recipients, one signing request per row.

export const MAX_BULK_ROWS = 10_000;
/** The problems a refused job lists, at most (with their count). */
export const MAX_LISTED_PROBLEMS = 100;

const prefillValue = z.union([z.string(), z.boolean(), z.number(), z.array(z.string())]);

export const BulkSendRowSchema = z
  .strictObject({
    recipients: z
      .record(z.string(), z.strictObject({ name: z.string(), email: z.string() }))
      .openapi({ description: 'The recipient of each of the template’s roles, by role name: { "tenant": { "name": …, "email": … } }.' }),
    prefill: z
      .record(z.string(), prefillValue)
      .optional()
      .openapi({ description: 'Values for the template’s fields, by label, as a request from the template takes them.' }),
    title: z.string().optional().openapi({ description: 'The request’s title; the template’s name by default.' }),
    message: z.string().optional(),
    expiresInDays: z.number().int().optional(),
    externalId: z.string().max(200).optional().openapi({ description: 'Your own id for the row, shown with its outcome.' }),
  })
  .openapi('BulkSendRow');
export type BulkSendRow = z.infer<typeof BulkSendRowSchema>;

export const BulkSendCreateSchema = z
  .strictObject({
    templateId: idParam('template', 'Template'),
    // Each row is checked on its own, so that a problem names its row: the array takes any items, and names their shape.
    rows: z
      .array(z.unknown().openapi({ $ref: '#/components/schemas/BulkSendRow' } as never))
      .min(1, { error: 'must have at least one row' })
      .max(MAX_BULK_ROWS, { error: `must have at most ${MAX_BULK_ROWS} rows` })
      .openapi({ description: `1 to ${MAX_BULK_ROWS} rows; or a CSV as the file part of multipart/form-data.` }),
    dryRun: z.boolean().default(false).openapi({ description: 'Check every row and the quotas, and send nothing.' }),
  })
  .openapi('BulkSendCreate');
export type BulkSendCreateInput = z.infer<typeof BulkSendCreateSchema>;

export const bulkSendStatuses = ['sending', 'sent', 'cancelled'] as const;
export const bulkRowStatuses = ['queued', 'sent', 'failed', 'cancelled'] as const;

export const BulkSendSchema = z
  .object({
    id: z.string(),
    templateId: z.string(),
    status: z.enum(bulkSendStatuses).openapi({ description: 'sending; sent: every row has its outcome; cancelled: the rows not yet sent will not be.' }),
    rowCount: z.number().int(),
    rows: z
      .object({ queued: z.number().int(), sent: z.number().int(), failed: z.number().int(), cancelled: z.number().int() })
      .openapi({ description: 'The rows by outcome: a sent row made one signing request.' }),
    requests: z
      .object({ pending: z.number().int(), completed: z.number().int(), declined: z.number().int(), cancelled: z.number().int(), expired: z.number().int() })
      .openapi({ description: 'The signing requests of the sent rows, by status.' }),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .openapi('BulkSend');

export const BulkSendCheckSchema = z
  .object({ dryRun: z.literal(true), templateId: z.string(), rowCount: z.number().int(), requests: z.number().int(), invitations: z.number().int() })
  .openapi('BulkSendCheck', { description: 'A dry run: every row passed; this is what sending would make.' });

export const BulkSendRowOutcomeSchema = z
  .object({
    row: z.number().int().openapi({ description: '0-based, as given.' }),
    externalId: z.string().nullable(),
    status: z.enum(bulkRowStatuses),
    signingRequestId: z.string().nullable(),
    requestStatus: z.string().nullable().openapi({ description: 'The signing request’s status, once sent.' }),
    error: z.string().nullable().openapi({ description: 'Why the row failed.' }),
  })
  .openapi('BulkSendRowOutcome');
export const BulkSendRowListSchema = listOf(BulkSendRowOutcomeSchema).openapi('BulkSendRowList');

export const BulkSendRowQuerySchema = z.object({
  limit: pageLimit,
  cursor: z
    .string()
    .regex(/^\d{1,5}$/, { error: 'is not a valid cursor' })
    .optional()
    .openapi({ description: 'nextCursor of the previous page.' }),
  status: z.enum(bulkRowStatuses).optional(),
});

export const BulkSendCancelSchema = z
  .strictObject({ cancelSent: z.boolean().default(false).openapi({ description: 'Also cancel the requests already sent that are still pending.' }) })
  .openapi('BulkSendCancel');
