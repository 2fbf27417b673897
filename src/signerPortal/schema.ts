import { z } from '../api/validation';

// A drawn signature is a PNG data URL of at most 1 MB.
const MAX_DRAWN_BYTES = 1024 * 1024;

export const SignSchema = z
  .object({
    consent: z.literal(true, { error: 'must be true: the signer agrees to sign electronically' }),
    signature: z.discriminatedUnion('type', [
      z.object({ type: z.literal('typed'), value: z.string().trim().min(1, { error: 'must not be empty' }).max(200) }),
      z.object({
        type: z.literal('drawn'),
        value: z
          .string()
          .max(Math.ceil((MAX_DRAWN_BYTES * 4) / 3) + 32, { error: 'must be at most 1 MB' })
          .regex(/^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/, { error: 'must be a PNG data URL (data:image/png;base64,…)' }),
      }),
    ]),
    fieldValues: z
      .record(z.string().regex(/^\d{1,2}$/, { error: 'keys must be field positions (0, 1, …)' }), z.string().max(500))
      .optional()
      .openapi({ description: 'Values of the signer’s text fields, keyed by the field’s position in its fields list.' }),
  })
  .openapi('Sign');

export const DeclineSchema = z.object({ reason: z.string().trim().min(1, { error: 'is required' }).max(1000) }).openapi('Decline');

export const SignerViewSchema = z
  .object({
    request: z.object({
      id: z.string(),
      title: z.string(),
      message: z.string().nullable(),
      status: z.string(),
      signingOrder: z.string(),
      expiresAt: z.string(),
      sender: z.object({ name: z.string().nullable(), email: z.string() }),
    }),
    signer: z.object({ id: z.string(), name: z.string(), email: z.string(), status: z.string(), fields: z.any() }),
    document: z.object({ fileName: z.string(), pageCount: z.number().nullable() }),
    yourTurn: z.boolean(),
  })
  .openapi('SignerView');
