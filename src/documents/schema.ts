import { idParam, listOf } from '../api/route';
import { isId } from '../ids';
import { paginationQuery, queryDate, z } from '../api/validation';

export const documentStatuses = ['awaiting_file', 'ready'] as const;

const fileName = z
  .string()
  .trim()
  .min(1, { error: 'is required' })
  .max(255)
  .refine((value) => !/[\u0000-\u001f]/.test(value), { error: 'must not contain control characters' })
  .openapi({ example: 'contract.pdf' });

// Spec §7: a missing, non-numeric or non-positive fileSize is reported as "fileSize must be a positive number".
const fileSize = z
  .number({ error: 'must be a positive number' })
  .positive({ error: 'must be a positive number' })
  .int({ error: 'must be a whole number of bytes' })
  .openapi({ description: 'Size of the PDF in bytes.', example: 48213 });

export const DocumentCreateSchema = z
  .object({
    fileName,
    fileSize,
    content: z
      .string()
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'must be base64' })
      .optional()
      .openapi({ description: 'The PDF, base64-encoded. Without it, upload the file with PUT /documents/{id}/file.' }),
  })
  .openapi('DocumentCreate');

export const DocumentUploadSchema = z
  .object({
    file: z.any().openapi({ type: 'string', format: 'binary', description: 'The PDF file.' }),
    fileName: fileName.optional().openapi({ description: 'Defaults to the uploaded file’s name.' }),
  })
  .openapi('DocumentUpload');

export const DocumentUpdateSchema = z.object({ fileName }).openapi('DocumentUpdate');

export const DocumentListQuerySchema = z.object({
  ...paginationQuery,
  cursor: paginationQuery.cursor.refine((value) => value === undefined || isId('document', value), { error: 'is not a valid cursor' }),
  status: z.enum(documentStatuses).optional(),
  createdAfter: queryDate.optional().openapi({ type: 'string', format: 'date-time' }),
  createdBefore: queryDate.optional().openapi({ type: 'string', format: 'date-time' }),
});

export const DocumentIdParams = z.object({ id: idParam('document', 'Document') });

export const DocumentSchema = z
  .object({
    id: z.string().openapi({ example: 'doc_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    fileName: z.string(),
    fileSize: z.number().int(),
    status: z.enum(documentStatuses).openapi({ description: 'awaiting_file until the PDF is uploaded, then ready.' }),
    pageCount: z.number().int().nullable(),
    sha256: z.string().nullable().openapi({ description: 'Hex SHA-256 of the original PDF.' }),
    createdAt: z.string().openapi({ format: 'date-time' }),
    updatedAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Document');

export const DocumentListSchema = listOf(DocumentSchema).openapi('DocumentList');

export type DocumentCreateInput = z.infer<typeof DocumentCreateSchema>;
export type DocumentListQuery = z.infer<typeof DocumentListQuerySchema>;
