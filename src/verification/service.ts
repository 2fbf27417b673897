import type { Config } from '../config';
import type { Db } from '../db';
import { validationError } from '../errors';
import type { PdfInspector, PdfSignature } from '../pdf/inspect';
import { loadSealCertificate } from '../pdf/sealCertificate';
import { sealCertificateFingerprint } from '../pdf/sealSigner';
import { findSealedDocumentsByHash } from '../signingRequests/store';
import type { Verification } from './schema';

export interface VerificationDeps {
  db: Db;
  pdf: PdfInspector;
  /** Hex SHA-256 of Signet's seal certificate; undefined when this process cannot read it. */
  sealFingerprint: () => Promise<string | undefined>;
}

/** A PDF held in memory: a file to verify is never written anywhere. */
export interface PdfInMemory {
  sha256: string;
  bytes: Buffer;
}

/**
 * The fingerprint of the certificate this deployment seals with, read once: SEAL_P12_PATH, or the one
 * generated under DATA_DIR (as the worker does, so `npm start` and a development api find the same). An
 * api-only production process without SEAL_P12_PATH has none and recognises its seals by their hashes alone.
 */
export function sealFingerprintOf(config: Config): () => Promise<string | undefined> {
  let fingerprint: Promise<string | undefined> | undefined;
  return () => {
    if (!config.SEAL_P12_PATH && config.NODE_ENV === 'production' && !config.runWorker) return Promise.resolve(undefined);
    // A certificate that cannot be read (the worker's progress shows that problem) leaves the hash alone to
    // recognise seals by, and is read again by the next verification.
    fingerprint ??= loadSealCertificate({ p12Path: config.SEAL_P12_PATH, p12Password: config.SEAL_P12_PASSWORD, dataDir: config.dataDir }).then(
      sealCertificateFingerprint,
      () => {
        fingerprint = undefined;
        return undefined;
      },
    );
    return fingerprint;
  };
}

/**
 * What Signet can say of a PDF anyone sends: its signatures, checked in the PDF inspector's child
 * processes under the upload limits, and whether it is, byte for byte, a PDF Signet sealed. Only that
 * request's id, completion and the document's name are told, nothing else of its account.
 */
export async function verifyPdf({ db, pdf, sealFingerprint }: VerificationDeps, file: PdfInMemory): Promise<Verification> {
  const inspection = await pdf.inspectSignatures(file);
  if (inspection.problem !== undefined) throw validationError([inspection.problem]);
  const found = inspection.facts.signatures;
  if (found.length === 0) return { result: 'unsigned', signatures: [] };
  const [ownFingerprint, sealed] = await Promise.all([sealFingerprint(), findSealedDocumentsByHash(db, file.sha256)]);
  const isOwn = (signature: PdfSignature) => ownFingerprint !== undefined && signature.certificateFingerprint === ownFingerprint;
  // A file Signet sealed byte for byte carries the certificate Signet sealed it with, even one since replaced.
  const whole = (signature: PdfSignature) => signature.intact && signature.coversWholeFile;
  const signatures = found.map((signature) => ({
    signer: signature.signer,
    signedAt: signature.signedAt,
    certificateFingerprint: signature.certificateFingerprint,
    trusted: signature.intact && (isOwn(signature) || (sealed.length > 0 && signature.coversWholeFile)),
    intact: signature.intact,
    coversWholeFile: signature.coversWholeFile,
  }));
  if (sealed.length > 0 && found.some(whole)) {
    const [first] = sealed;
    return {
      result: 'sealed_unmodified',
      signingRequestId: first.signingRequestId,
      ...(first.completedAt ? { completedAt: first.completedAt.toISOString() } : {}),
      documents: sealed.filter((row) => row.signingRequestId === first.signingRequestId).map((row) => ({ id: row.documentId, fileName: row.fileName })),
      signatures,
    };
  }
  return { result: found.some(isOwn) ? 'modified_after_seal' : 'sealed_by_other', signatures };
}
