import { z } from '../api/validation';

export const verificationResults = ['sealed_unmodified', 'modified_after_seal', 'sealed_by_other', 'unsigned'] as const;

const SignatureSchema = z
  .object({
    signer: z
      .string()
      .nullable()
      .openapi({ description: "The signing certificate's common name (or its whole subject); null when the signature cannot be read." }),
    signedAt: z.string().nullable().openapi({
      format: 'date-time',
      description:
        'The time the signature claims it was made: its signature dictionary’s /M, or its CMS signingTime attribute (a claim of the signer’s own clock, not a trusted timestamp).',
    }),
    certificateFingerprint: z.string().nullable().openapi({ description: "Hex SHA-256 of the signer's certificate (DER)." }),
    trusted: z
      .boolean()
      .openapi({ description: "The signature checks out and its certificate is Signet's seal certificate (or the file is one Signet sealed)." }),
    intact: z.boolean().openapi({ description: "The signature checks out, with its certificate's key, over the bytes it covers." }),
    coversWholeFile: z.boolean().openapi({ description: 'The bytes the signature covers are the whole file: nothing was appended after it.' }),
  })
  .openapi('VerifiedSignature');

export const VerificationSchema = z
  .object({
    result: z.enum(verificationResults).openapi({
      description:
        'sealed_unmodified: a PDF Signet sealed, byte for byte. modified_after_seal: it carries a Signet seal but is not, byte for byte, a PDF Signet sealed ' +
        '(changed, or with an update appended). sealed_by_other: signed, but not by Signet. unsigned: no signature.',
    }),
    signingRequestId: z.string().optional().openapi({ description: 'sealed_unmodified: the signing request that sealed it.' }),
    completedAt: z.string().optional().openapi({ format: 'date-time', description: 'sealed_unmodified: when that request completed.' }),
    documents: z
      .array(z.object({ id: z.string(), fileName: z.string() }))
      .optional()
      .openapi({ description: 'sealed_unmodified: the document of that request this file is the sealed copy of.' }),
    signatures: z.array(SignatureSchema),
  })
  .openapi('Verification');

export type Verification = z.infer<typeof VerificationSchema>;
export type VerificationResult = (typeof verificationResults)[number];

export const VerifyUploadSchema = z.object({ file: z.string().openapi({ format: 'binary', description: 'The PDF to verify.' }) });
