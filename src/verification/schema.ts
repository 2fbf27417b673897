import { z } from '../api/validation';
import { sealLevels } from '../domain/signingRequests';

export const verificationResults = ['sealed_unmodified', 'modified_after_seal', 'sealed_by_other', 'unsigned'] as const;

const TimestampSchema = z
  .object({
    time: z.string().openapi({ format: 'date-time', description: "The time the timestamp authority vouches for (its token's genTime)." }),
    authority: z.string().nullable().openapi({ description: "The timestamp authority's certificate's common name (or its whole subject)." }),
    intact: z.boolean().openapi({
      description: "The token is over this signature's value, and its own signature checks out with the authority's certificate.",
    }),
  })
  .nullable()
  .openapi('VerifiedSignatureTimestamp', {
    description: 'A signature’s signature timestamp (PAdES B-T and above): a timestamp authority’s token over its signature value. Null without one.',
  });

const SignatureSchema = z
  .object({
    kind: z.enum(['signature', 'document_timestamp']).openapi({
      description:
        'signature: a signature with a certificate. document_timestamp: a timestamp authority’s RFC 3161 token over the file as it was then ' +
        '(/SubFilter ETSI.RFC3161, PAdES B-LTA); its signer is the authority and signedAt the time it vouches for.',
    }),
    signer: z
      .string()
      .nullable()
      .openapi({ description: "The signing certificate's common name (or its whole subject); null when the signature cannot be read." }),
    signedAt: z
      .string()
      .nullable()
      .openapi({
        format: 'date-time',
        description:
          'The time the signature claims it was made: its signature dictionary’s /M, or its CMS signingTime attribute (a claim of the signer’s own clock, not a trusted timestamp). ' +
          'A document timestamp: the time its authority vouches for.',
      }),
    certificateFingerprint: z.string().nullable().openapi({ description: "Hex SHA-256 of the signer's certificate (DER)." }),
    trusted: z.boolean().openapi({
      description: 'The signature checks out and its certificate is one Signet seals (or sealed) with, or the file is one Signet sealed.',
    }),
    intact: z.boolean().openapi({
      description: "The signature checks out, with its certificate's key, over the bytes it covers (a document timestamp: and its token is over those bytes).",
    }),
    coversWholeFile: z.boolean().openapi({
      description:
        'The bytes the signature covers are the whole file: nothing was appended after it. A seal at B-LT or B-LTA has validation data appended after its signature.',
    }),
    timestamp: TimestampSchema,
  })
  .openapi('VerifiedSignature');

const SealLevelSchema = z
  .object({
    level: z.enum(sealLevels).openapi({
      description:
        "The PAdES baseline level of Signet's signature. B-B: signed; its time is the server's own clock, which no timestamp authority vouches for. " +
        'B-T: with a signature timestamp. B-LT: and the validation data (certificates, revocation answers) embedded in the file. ' +
        'B-LTA: and a document timestamp over all of it, renewed before its authority’s certificate ends.',
    }),
    timestampedAt: z
      .string()
      .nullable()
      .openapi({ format: 'date-time', description: 'B-T and above: the time the signature timestamp vouches for; null at B-B.' }),
    timestampAuthority: z.string().nullable().openapi({ description: 'B-T and above: who vouches for it, the timestamp authority’s name.' }),
    validationDataEmbedded: z.boolean().openapi({ description: 'The file embeds validation data: its catalog names a Document Security Store (/DSS).' }),
    archiveTimestampedAt: z.string().nullable().openapi({
      format: 'date-time',
      description: 'The time of the newest intact document timestamp after the seal (B-LTA; later ones come with each archive renewal); null without one.',
    }),
  })
  .nullable()
  .openapi('VerifiedSeal', {
    description: "What Signet's seal in the file is: its level and timestamps. Null when no signature is Signet's (or the file is unsigned).",
  });

export const VerificationSchema = z
  .object({
    result: z.enum(verificationResults).openapi({
      description:
        'sealed_unmodified: a PDF Signet sealed, byte for byte (the copy handed out now, or one from before an archive renewal). ' +
        'modified_after_seal: it carries a Signet seal but is not, byte for byte, a PDF Signet sealed (changed, or with an update appended). ' +
        'sealed_by_other: signed, but not by Signet. unsigned: no signature.',
    }),
    signingRequestId: z.string().optional().openapi({ description: 'sealed_unmodified: the signing request that sealed it.' }),
    completedAt: z.string().optional().openapi({ format: 'date-time', description: 'sealed_unmodified: when that request completed.' }),
    documents: z
      .array(z.object({ id: z.string(), fileName: z.string() }))
      .optional()
      .openapi({ description: 'sealed_unmodified: the document of that request this file is the sealed copy of.' }),
    signatures: z.array(SignatureSchema),
    seal: SealLevelSchema,
  })
  .openapi('Verification');

export type Verification = z.infer<typeof VerificationSchema>;
export type VerificationResult = (typeof verificationResults)[number];
export type SealLevelReport = NonNullable<z.infer<typeof SealLevelSchema>>;

export const VerifyUploadSchema = z.object({ file: z.string().openapi({ format: 'binary', description: 'The PDF to verify.' }) });
