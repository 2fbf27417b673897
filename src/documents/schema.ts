import { idParam, listOf } from '../api/route';
import { drawableInSealedPdf } from '../pdf/drawableText';
import { jsonSchemaKeywords, laterThan, paginationQuery, queryDate, VISIBLE_CHARACTER, visibleText, z } from '../api/validation';

export const documentStatuses = ['awaiting_file', 'ready'] as const;

const NO_CONTROL_CHARACTERS = '[^\\u0000-\\u001f]*';
// The certificate of completion shows the document's name: no control characters, nothing it cannot draw.
const fileName = visibleText(255)
  .superRefine(drawableInSealedPdf)
  .openapi({ pattern: `^${NO_CONTROL_CHARACTERS}${VISIBLE_CHARACTER.source}${NO_CONTROL_CHARACTERS}$`, example: 'contract.pdf' });

// A missing, non-numeric or non-positive fileSize is reported as "fileSize must be a positive number".
const fileSize = z
  .number({ error: 'must be a positive number' })
  .positive({ error: 'must be a positive number' })
  .int({ error: 'must be a whole number of bytes' })
  .max(Number.MAX_SAFE_INTEGER)
  .openapi({ description: 'Size of the PDF in bytes; with content, exactly its size.', example: 48213 });

export const DocumentCreateSchema = z
  .object({
    fileName,
    fileSize,
    content: z
      .string()
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'must be base64' })
      .optional()
      .openapi({
        description:
          'The PDF, base64-encoded: a whole, unencrypted PDF with at least one page, of fileSize bytes. Without it, upload the file with PUT /documents/{id}/file.',
        ...jsonSchemaKeywords({ contentEncoding: 'base64', contentMediaType: 'application/pdf' }),
      }),
  })
  .openapi('DocumentCreate');

export const DocumentUploadSchema = z
  .object({
    file: z
      .custom((value) => value !== undefined)
      .openapi({ type: 'string', format: 'binary', description: 'The PDF file: a whole, unencrypted PDF with at least one page.' }),
    fileName: fileName.optional().openapi({ description: 'Defaults to the uploaded file’s name.' }),
  })
  .openapi('DocumentUpload');

export const DocumentUpdateSchema = z.object({ fileName }).openapi('DocumentUpdate');

export const DocumentListQuerySchema = z
  .object({
    ...paginationQuery('document'),
    status: z.enum(documentStatuses).optional(),
    createdAfter: queryDate.optional().openapi({ description: 'Created at or after.' }),
    createdBefore: queryDate.optional().openapi({ description: 'Created before; must be after createdAfter.' }),
  })
  .refine(...laterThan('createdAfter', 'createdBefore'));

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
