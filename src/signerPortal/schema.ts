import { jsonSchemaKeywords, visibleText, z } from '../api/validation';
import { recipientTypes, verificationMethods } from '../domain/signingRequests';
import { drawableInSealedPdf } from '../pdf/drawableText';
import { SIGNING_TOKEN } from '../signingRequests/tokens';
import { MAX_DRAWN_INITIALS_BYTES, MAX_TEXT_VALUE, MAX_TYPED_INITIALS } from '../signingRequests/fieldValues';

export const TokenParams = z.object({
  token: z.string().regex(SIGNING_TOKEN, { error: 'Signing link' }).openapi({ description: 'The token of the signing link.' }),
});

// A drawn signature is a PNG data URL of at most 1 MB.
const MAX_DRAWN_BYTES = 1024 * 1024;
const FIELD_POSITION = /^[0-9]{1,2}$/;

export const SignSchema = z
  .object({
    consent: z.literal(true, { error: 'must be true: the signer agrees to sign electronically' }),
    signature: z.discriminatedUnion('type', [
      z.object({ type: z.literal('typed'), value: visibleText(200, 'must not be empty').superRefine(drawableInSealedPdf) }),
      z.object({
        type: z.literal('drawn'),
        value: z
          .string()
          .max(Math.ceil((MAX_DRAWN_BYTES * 4) / 3) + 32, { error: 'must be at most 1 MB' })
          .regex(/^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/, { error: 'must be a PNG data URL (data:image/png;base64,…)' }),
      }),
    ]),
    fieldValues: z
      .record(
        z.string().regex(FIELD_POSITION, { error: 'keys must be field positions (0, 1, …)' }),
        z.union(
          [
            z.string().max(Math.ceil((MAX_DRAWN_INITIALS_BYTES * 4) / 3) + 32, { error: `must be at most ${MAX_DRAWN_INITIALS_BYTES / 1024} KB` }),
            z.boolean(),
            z.number(),
            z.array(z.string().max(200)).max(100),
          ],
          { error: 'must be text (a text field, initials), true or false (a checkbox), a number, or a list of options (a multiSelect, a checkbox group)' },
        ),
      )
      .optional()
      .openapi({
        ...jsonSchemaKeywords({ propertyNames: { pattern: FIELD_POSITION.source } }),
        description:
          `The values of the signer’s fields, keyed by the field’s position in its fields list: a text field’s text (at most ${MAX_TEXT_VALUE} characters), ` +
          `a checkbox’s true or false, initials drawn (a PNG data URL of at most ${MAX_DRAWN_INITIALS_BYTES / 1024} KB) or typed (at most ${MAX_TYPED_INITIALS} characters). ` +
          'A number field takes a number (or its text), radio and dropdown one of their options, multiSelect and checkboxGroup a list of them, email and phone their text. ' +
          'Every required field needs one (a required checkbox: true), unless its condition hides it; a hidden field’s value is dropped. Calculated, signerName, signerEmail and staticText fields are filled by Signet: none takes one. Signature fields take the signature, date fields the date of signing, and fields the sender prefilled keep their value: none of them takes one (400).',
      }),
  })
  .openapi('Sign');

export const SignerUploadBodySchema = z
  .object({ file: z.string().openapi({ format: 'binary', description: 'The file: a PDF, PNG or JPEG.' }) })
  .openapi('SignerUploadBody');

export const SignerUploadSchema = z
  .object({
    id: z.string().openapi({ description: 'The upload’s id (upl_…): the value of the image or attachment field in Sign.' }),
    fileName: z.string(),
    contentType: z.enum(['application/pdf', 'image/png', 'image/jpeg']).openapi({ description: 'Read from the file’s bytes.' }),
    size: z.number().int(),
    sha256: z.string().openapi({ description: 'Hex SHA-256 of the file, as the certificate of completion lists it.' }),
  })
  .openapi('SignerUpload');

export const DeclineSchema = z.object({ reason: visibleText(1000) }).openapi('Decline');

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
      redirectUrl: z
        .string()
        .nullable()
        .openapi({ description: 'Where the page sends the signer once they have acted, with ?event=…&signing_request_id=…; null: nowhere.' }),
    }),
    signer: z.object({
      id: z.string(),
      name: z.string(),
      email: z.string(),
      recipientType: z
        .enum(recipientTypes)
        .openapi({ description: 'signer: signs; approver: approves or declines; viewer: reads (POST /sign/{token}/viewed once shown).' }),
      status: z.string(),
      fields: z.any(),
    }),
    document: z.object({ fileName: z.string(), pageCount: z.number().nullable() }).openapi({ description: 'The first document.' }),
    documents: z
      .array(z.object({ id: z.string(), fileName: z.string(), pageCount: z.number().nullable() }))
      .openapi({ description: 'Every document of the request, in the order the signer reads them (GET /sign/{token}/documents/{id}).' }),
    yourTurn: z.boolean(),
  })
  .openapi('SignerView');

export const VerifySchema = z
  .object({ code: z.string().min(1, { error: 'must not be empty' }).max(12, { error: 'must be at most 12 characters' }) })
  .openapi('SignerVerify');

export const VerificationStateSchema = z
  .object({
    method: z
      .enum(verificationMethods)
      .nullable()
      .openapi({ description: 'access_code: the code the sender told the signer; email_code: a 6-digit code e-mailed to them; null: nothing to give.' }),
    verified: z.boolean().openapi({ description: 'Whether this browser may see the request (always true with no method).' }),
    lockedUntil: z.string().nullable().openapi({
      description: 'After every fifth wrong code: no try until then (15 minutes, 1 hour, 4 hours); after the twentieth, the request’s expiry.',
    }),
    lockedUntilSenderActs: z.boolean().openapi({
      description: 'Every allowed wrong code is spent: no try until the sender reminds the signer (the signer is to contact them).',
    }),
    sentTo: z.string().nullable().openapi({ description: 'email_code: the signer’s address, partly hidden.' }),
    codeExpiresAt: z.string().nullable().openapi({ description: 'email_code: until when the last code sent works (null before the first, or once used).' }),
    nextCodeAt: z.string().nullable().openapi({ description: 'email_code: from when a new code may be sent (one a minute).' }),
  })
  .openapi('SignerVerificationState');
