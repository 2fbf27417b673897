import { z } from '../api/validation';
import { fieldTypes } from '../pdf/textTags';

// Where on a document's pages a signer acts: placed by hand in a request, or by a template's roles.

// A request's limits. A template meets them too (src/templates/layout.ts), so that every template can be sent.
export const MAX_SIGNERS = 50;
export const MAX_FIELDS_PER_SIGNER = 50;

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

/** A signer's field as stored and shown: placed by hand (SignatureField), or by a template's role, with its label and any prefilled value. */
export const SignerFieldSchema = FieldSchema.extend({
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
