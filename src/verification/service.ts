import type { Config } from '../config';
import type { Db } from '../db';
import { validationError } from '../errors';
import type { PdfInspector, PdfSignature } from '../pdf/inspect';
import { sealCertificateFingerprint } from '../pdf/sealSigner';
import { sealCertificateOf } from '../signingRequests/sealing';
import { findSealedDocumentsByHash, isSealCertificate } from '../signingRequests/store';
import type { SealLevelReport, Verification } from './schema';

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
 * The fingerprint of the certificate this deployment seals with, read once: SEAL_CERTIFICATE_PATH (a key
 * on a token or in a KMS), SEAL_P12_PATH, or the one generated under DATA_DIR (as the worker does, so `npm start` and a development api find the same). An
 * api-only production process without SEAL_P12_PATH has none and recognises its seals by their hashes
 * and by the certificates that sealed here before (seal_certificates).
 */
export function sealFingerprintOf(config: Config): () => Promise<string | undefined> {
  let fingerprint: Promise<string | undefined> | undefined;
  return () => {
    const configured = config.SEAL_P12_PATH || config.SEAL_CERTIFICATE_PATH;
    if (!configured && config.NODE_ENV === 'production' && !config.runWorker) return Promise.resolve(undefined);
    // A certificate that cannot be read (the worker stops at start on that) leaves the hash alone to
    // recognise seals by, and is read again by the next verification.
    fingerprint ??= sealCertificateOf(config).then(sealCertificateFingerprint, () => {
      fingerprint = undefined;
      return undefined;
    });
    return fingerprint;
  };
}

/** The fingerprints among these that are Signet's: the current seal certificate's, or one that ever sealed here. */
async function ownFingerprints({ db, sealFingerprint }: VerificationDeps, signatures: PdfSignature[]): Promise<Set<string>> {
  const current = await sealFingerprint();
  const named = [...new Set(signatures.filter((s) => s.kind === 'signature').flatMap((s) => (s.certificateFingerprint ? [s.certificateFingerprint] : [])))];
  const known = await Promise.all(
    named.map(async (fingerprint) => (fingerprint === current || (await isSealCertificate(db, fingerprint)) ? [fingerprint] : [])),
  );
  return new Set(known.flat());
}

/**
 * What Signet can say of a PDF anyone sends: its signatures, checked in the PDF inspector's child
 * processes under the upload limits, whether it is, byte for byte, a PDF Signet sealed (now or before an
 * archive renewal), and the PAdES level of its seal. Only that request's id, completion and the
 * document's name are told, nothing else of its account.
 */
export async function verifyPdf(deps: VerificationDeps, file: PdfInMemory): Promise<Verification> {
  const inspection = await deps.pdf.inspectSignatures(file);
  if (inspection.problem !== undefined) throw validationError([inspection.problem]);
  const { signatures: found, validationData } = inspection.facts;
  if (found.length === 0) return { result: 'unsigned', signatures: [], seal: null };
  const [own, sealed] = await Promise.all([ownFingerprints(deps, found), findSealedDocumentsByHash(deps.db, file.sha256)]);
  const isOwn = (signature: PdfSignature) =>
    signature.kind === 'signature' && signature.certificateFingerprint !== null && own.has(signature.certificateFingerprint);
  // A file Signet sealed byte for byte carries the certificates Signet sealed it with, and its timestamps' authorities.
  const signatures = found.map((signature) => ({
    kind: signature.kind,
    signer: signature.signer,
    signedAt: signature.signedAt,
    certificateFingerprint: signature.certificateFingerprint,
    trusted: signature.intact && (isOwn(signature) || sealed.length > 0),
    intact: signature.intact,
    coversWholeFile: signature.coversWholeFile,
    timestamp: signature.timestamp,
  }));
  // A file Signet sealed, byte for byte, is Signet's signature whatever its certificate (one sealed before seal_certificates was kept).
  const seal = sealLevelOf(
    found,
    found.filter((signature) => isOwn(signature) || (sealed.length > 0 && signature.kind === 'signature')),
    validationData,
  );
  // Past the seal's signature come its validation data and document timestamps (B-LT, B-LTA): the hash says the file is Signet's.
  if (sealed.length > 0 && found.some((signature) => signature.intact)) {
    const [first] = sealed;
    return {
      result: 'sealed_unmodified',
      signingRequestId: first.signingRequestId,
      ...(first.completedAt ? { completedAt: first.completedAt.toISOString() } : {}),
      documents: sealed.filter((row) => row.signingRequestId === first.signingRequestId).map((row) => ({ id: row.documentId, fileName: row.fileName })),
      signatures,
      seal,
    };
  }
  return { result: own.size > 0 ? 'modified_after_seal' : 'sealed_by_other', signatures, seal };
}

/**
 * The PAdES baseline level of the seal, from Signet's own signature (the first intact one, else the
 * first): B-B without a timestamp that checks out; B-T with one; B-LT when the file also embeds
 * validation data; B-LTA when an intact document timestamp follows it too. Null when no signature is Signet's.
 */
function sealLevelOf(all: PdfSignature[], own: PdfSignature[], validationData: boolean): SealLevelReport | null {
  const signature = own.find((candidate) => candidate.intact) ?? own[0];
  if (!signature) return null;
  const timestamp = signature.timestamp?.intact ? signature.timestamp : null;
  const archives = all.slice(all.indexOf(signature) + 1).filter((entry) => entry.kind === 'document_timestamp' && entry.intact && entry.signedAt);
  const newest =
    archives
      .map((entry) => entry.signedAt!)
      .sort()
      .at(-1) ?? null;
  const level = !timestamp ? 'B-B' : !validationData ? 'B-T' : newest ? 'B-LTA' : 'B-LT';
  return {
    level,
    timestampedAt: timestamp?.time ?? null,
    timestampAuthority: timestamp?.authority ?? null,
    validationDataEmbedded: validationData,
    archiveTimestampedAt: newest,
  };
}
