import crypto from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { SignPdf } from '@signpdf/signpdf';
import { SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import { appendCertificatePage, type CertificateInfo } from './certificatePage';
import type { SealCertificate } from './sealCertificate';
import { SealSigner, sealCertificateSummary } from './sealSigner';
import { stampSignaturesInto, type SignatureStamp } from './stamp';

// Bytes reserved for the CMS signature: a 2048-bit key's signature and certificate chain need about 3 KB.
const SIGNATURE_LENGTH = 16384;

export interface SealDocumentInput {
  original: Uint8Array;
  signatures: SignatureStamp[];
  /** The certificate of completion; this document's SHA-256 is computed from `original`. */
  certificate: Omit<CertificateInfo, 'document'> & { document: Omit<CertificateInfo['document'], 'sha256'> };
  sealCertificate: SealCertificate;
}

export function sha256Of(bytes: Uint8Array): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/** Stamps the signatures, appends the certificate of completion and signs the whole file. */
export async function sealDocument(input: SealDocumentInput): Promise<{ pdf: Buffer; sha256: string }> {
  const pdf = await PDFDocument.load(input.original, { updateMetadata: false });
  await stampSignaturesInto(pdf, input.signatures);
  const document = { ...input.certificate.document, sha256: sha256Of(input.original) };
  await appendCertificatePage(pdf, { ...input.certificate, document, seal: sealCertificateSummary(input.sealCertificate) });
  const sealed = await sealPdf(await pdf.save({ useObjectStreams: false }), input.sealCertificate);
  return { pdf: sealed, sha256: sha256Of(sealed) };
}

/**
 * Signs the whole PDF with the seal certificate, so any later change to it shows as an invalid signature:
 * a PAdES baseline B-B signature, whose claimed time (the server's clock) is the signature dictionary's /M.
 */
export async function sealPdf(bytes: Uint8Array, certificate: SealCertificate): Promise<Buffer> {
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
  return new SignPdf().sign(Buffer.from(withPlaceholder), new SealSigner(certificate));
}
