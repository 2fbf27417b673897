import crypto from 'node:crypto';
import { PDF } from '@libpdf/core';
import { PDFDocument } from 'pdf-lib';
import * as pkijs from 'pkijs';
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { SignPdf } from '@signpdf/signpdf';
import { SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import type { SealLevel } from '../domain/signingRequests';
import { archiveDue, type ArchiveDeadline, type ArchivePolicy } from './archiveDue';
import { appendCertificatePage, type CertificateInfo } from './certificatePage';
import { checkedRevocationProvider } from './revocation';
import { openSealKey } from './sealKey';
import type { SealCertificate } from './sealKeySource';
import { SealServiceError } from './sealServices';
import { SealSigner, sealCertificateFingerprint, sealCertificateSummary } from './sealSigner';
import { stampSignaturesInto, type SignatureStamp } from './stamp';
import { checkedTimestampAuthority } from './timestampAuthority';

// Bytes reserved for the CMS signature: a 2048-bit key's signature and its chain need some 3–6 KB, a
// signature timestamp with the authority's chain as much again.
const SIGNATURE_LENGTH = 24576;

/** What a seal above B-B reaches for: the timestamp authorities in order, and the roots their chains must reach. */
export interface SealTimestamping extends ArchivePolicy {
  level: Exclude<SealLevel, 'B-B'>;
  tsaUrls: string[];
  /** Per authority and per revocation answer. */
  timeoutMs: number;
  /** DER: the roots a timestamp authority's chain (and a CRL's issuer) must reach. */
  trustAnchors: Uint8Array[];
}

export interface SealDocumentInput {
  original: Uint8Array;
  signatures: SignatureStamp[];
  /** The bytes of the signers' uploads the signatures' fields name, by id: images drawn, attachments embedded. */
  files?: Map<string, Uint8Array>;
  /** The certificate of completion; this document's SHA-256 is computed from `original`. */
  certificate: Omit<CertificateInfo, 'document'> & { document: Omit<CertificateInfo['document'], 'sha256'> };
  sealCertificate: SealCertificate;
  /** B-B without it. */
  timestamping?: SealTimestamping;
}

export function sha256Of(bytes: Uint8Array): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/** A sealed PDF, and what its seal is: its level, its certificate, and when its archive timestamp is to be renewed (B-LTA). */
export interface SealedPdf {
  pdf: Buffer;
  sha256: string;
  level: SealLevel;
  /** Hex SHA-256 of the seal certificate (DER), and its subject's common name. */
  certificateSha256: string;
  certificateSubject: string;
  /** B-LTA: when its newest document timestamp is due for renewal, and what it rests on; null below. */
  archive: ArchiveDeadline | null;
}

/** Stamps the signatures, appends the certificate of completion and signs the whole file. */
export async function sealDocument(input: SealDocumentInput): Promise<SealedPdf> {
  const pdf = await PDFDocument.load(input.original, { updateMetadata: false });
  await stampSignaturesInto(pdf, input.signatures, input.files);
  const document = { ...input.certificate.document, sha256: sha256Of(input.original) };
  const seal = { ...(await sealCertificateSummary(input.sealCertificate)), level: input.timestamping?.level ?? ('B-B' as const) };
  await appendCertificatePage(pdf, { ...input.certificate, document, seal });
  const sealed = await sealPdf(await pdf.save({ useObjectStreams: false }), input.sealCertificate, input.timestamping);
  return {
    pdf: sealed,
    sha256: sha256Of(sealed),
    level: seal.level,
    certificateSha256: await sealCertificateFingerprint(input.sealCertificate),
    certificateSubject: seal.subject,
    archive: seal.level === 'B-LTA' ? archiveDue(sealed, input.timestamping!) : null,
  };
}

/**
 * Signs the whole PDF with the seal certificate, so any later change to it shows as an invalid signature:
 * a PAdES baseline signature whose claimed time (the server's clock) is the signature dictionary's /M.
 * B-T adds a signature timestamp; B-LT then a Document Security Store with the chains and revocation
 * answers of the seal and of the timestamp; B-LTA a document timestamp over all of it. Each addition is
 * an incremental update (by @libpdf/core): the bytes signed before never change. An authority or
 * responder that fails fails the seal (SealServiceError, retried by the workflow), never a lower level.
 */
export async function sealPdf(bytes: Uint8Array, certificate: SealCertificate, timestamping?: SealTimestamping): Promise<Buffer> {
  const pdfDoc = await PDFDocument.load(bytes, { updateMetadata: false });
  pdflibAddPlaceholder({
    pdfDoc,
    reason: 'Sealed by Signet',
    contactInfo: '',
    name: 'Signet',
    location: '',
    signatureLength: SIGNATURE_LENGTH,
    subFilter: SUBFILTER_ETSI_CADES_DETACHED,
    appName: 'Signet',
  });
  const withPlaceholder = await pdfDoc.save({ useObjectStreams: false });
  const key = await openSealKey(certificate);
  const signer = new SealSigner(key, timestamping && authorityOf(timestamping));
  const signed = await new SignPdf().sign(Buffer.from(withPlaceholder), signer);
  if (!timestamping || timestamping.level === 'B-T') return signed;
  return addValidationData(signed, { ...timestamping, level: timestamping.level }, [...key.certificates, ...certificatesOf(signer.timestampToken)]);
}

const authorityOf = ({ tsaUrls, timeoutMs, trustAnchors }: SealTimestamping) => checkedTimestampAuthority({ urls: tsaUrls, timeoutMs, trustAnchors });

export interface RenewalInput {
  /** A sealed PDF at B-LTA. */
  pdf: Uint8Array;
  sealCertificate: SealCertificate;
  timestamping: SealTimestamping;
}

/**
 * Renews a sealed PDF's archive (B-LTA): fresh validation data for what the file holds, and a new
 * document timestamp over all of it, as one more incremental update. The bytes before stay as they
 * were, so a copy handed out earlier is the start of this one.
 */
export async function renewArchive(input: RenewalInput): Promise<Pick<SealedPdf, 'pdf' | 'sha256'> & { archive: ArchiveDeadline }> {
  const key = await openSealKey(input.sealCertificate);
  const pdf = await addValidationData(input.pdf, { ...input.timestamping, level: 'B-LTA' }, key.certificates);
  return { pdf, sha256: sha256Of(pdf), archive: archiveDue(pdf, input.timestamping) };
}

/** The certificates a CMS SignedData (a timestamp token) carries, DER. */
function certificatesOf(token: Buffer | undefined): Uint8Array[] {
  if (!token) return [];
  const signedData = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(new Uint8Array(token)).content });
  return (signedData.certificates ?? []).flatMap((cert) => (cert instanceof pkijs.Certificate ? [new Uint8Array(cert.toSchema().toBER(false))] : []));
}

/**
 * B-LT: the validation data of every signature and timestamp in the file (`chains`: the certificates to ask about first), as a Document Security Store;
 * B-LTA: then a document timestamp, and the validation data of its own chain. Also how an archive is
 * renewed: a new document timestamp over the one before, before that one's certificate expires.
 */
export async function addValidationData(
  bytes: Uint8Array,
  timestamping: SealTimestamping & { level: 'B-LT' | 'B-LTA' },
  chains: Uint8Array[],
): Promise<Buffer> {
  const revocationProvider = checkedRevocationProvider({ timeoutMs: timestamping.timeoutMs, knownCertificates: [...chains, ...timestamping.trustAnchors] });
  // libpdf asks for each answer in turn; asked for all at once here, they wait for it in the provider.
  await revocationProvider.prefetch(chains);
  const pdf = await PDF.load(bytes);
  const { bytes: updated, warnings } =
    timestamping.level === 'B-LT'
      ? await pdf.addValidationData({ revocationProvider })
      : await pdf.addArchivalData({ revocationProvider, timestampAuthority: authorityOf(timestamping) });
  // @libpdf/core goes on past what a responder did not give, with a warning: here that fails the seal.
  const [problem] = revocationProvider.problems;
  if (problem) throw problem;
  if (warnings.length) throw new SealServiceError('revocation data', undefined, warnings.map((warning) => warning.message).join('; '));
  return Buffer.from(updated);
}
