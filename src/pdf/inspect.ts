import path from 'node:path';
import type { Config } from '../config';
import { serverBusy } from '../errors';
import { createPdfPool, PdfLimitError, PdfPoolBusyError } from './pool';

export interface PdfFacts {
  pageCount: number;
  /** [width, height] of each page in PDF points. */
  pageSizes: [number, number][];
  sha256: string;
}

/** A signature's RFC 3161 signature timestamp (PAdES B-T): a timestamp authority's token over its signature value. */
export interface PdfSignatureTimestamp {
  /** The token's genTime, ISO 8601. */
  time: string;
  /** The common name (or whole subject) of the authority's certificate. */
  authority: string | null;
  /** Its imprint is the hash of the signature value, and the token's own signature checks out. */
  intact: boolean;
}

/** A PKCS#7 signature found in a PDF (pdfSignatures.mjs), or a document timestamp (PAdES B-LTA). */
export interface PdfSignature {
  /** document_timestamp: its /SubFilter is ETSI.RFC3161 or its content a TSTInfo; its signer is the timestamp authority. */
  kind: 'signature' | 'document_timestamp';
  /** The certificate's common name (or its whole subject); null when the signature cannot be read. */
  signer: string | null;
  /** The signature's signingTime attribute or its dictionary's /M; a document timestamp's genTime. ISO 8601. */
  signedAt: string | null;
  /** Hex SHA-256 of the signer's certificate (DER). */
  certificateFingerprint: string | null;
  /** When the signer's certificate ends, ISO 8601. */
  certificateNotAfter: string | null;
  /** It checks out, with its certificate's key, over the bytes its /ByteRange names (a document timestamp: its imprint too). */
  intact: boolean;
  /** Those bytes are the whole file: nothing was appended after it. */
  coversWholeFile: boolean;
  /** A signature's signature timestamp; null without one (and for a document timestamp). */
  timestamp: PdfSignatureTimestamp | null;
}

/** What inspectSignatures tells of a PDF's signatures. */
export interface PdfSignatures {
  signatures: PdfSignature[];
  /** The file's catalog names a Document Security Store (/DSS): validation data is embedded (PAdES B-LT). */
  validationData: boolean;
}

/** The facts of a PDF, or the one problem that refuses it (a validation message). */
export type PdfInspection = { facts: PdfFacts; problem?: undefined } | { facts?: undefined; problem: string };

/** inspectSignatures' answer: the facts with the file's signatures, or the one problem that refuses it. */
export type SignedPdfInspection = { facts: PdfFacts & PdfSignatures; problem?: undefined } | { facts?: undefined; problem: string };

/** A file to inspect, hashed as it arrived (the api's ReceivedFile): in memory (`bytes`) or in a file (`path`). */
export interface PdfFile {
  sha256: string;
  bytes?: Buffer;
  path?: string;
}

export interface PdfInspector {
  /** A small file goes to the child as bytes, a large one as the path of its temporary file, which the child reads. */
  inspect(file: PdfFile): Promise<PdfInspection>;
  /** The same checks and limits, and the file's signatures, each checked (in memory only: a file to verify is never written). */
  inspectSignatures(file: PdfFile & { bytes: Buffer }): Promise<SignedPdfInspection>;
  /** PDFs handed to a child process so far. */
  readonly jobsStarted: number;
  close(): Promise<void>;
}

/** PDFs waiting for a child beyond this are answered 503: uploads over 1 MiB are gated before this anyway. */
const MAX_QUEUED = 100;
/**
 * Between the api's event loop (0) and the text of uploads (10). At saturation the event loop is what
 * every request waits for, and at the same priority it waited for a core behind the checks: with the
 * checks at 5, uploads ran at 53% of creates' rate instead of 48% (medians of 7 runs each,
 * docs/benchmarks.md). A hostile PDF takes less of a busy machine from the api, too.
 */
export const CHECK_NICENESS = 5;

const NO_BYTES = new Uint8Array(0);

/**
 * Checks PDFs we did not produce (uploads) for what the answer needs: a whole, unencrypted, parsable
 * PDF with at least one page, and its page sizes (its SHA-256 was counted as it arrived). The parse runs in PDF_POOL_SIZE warm child
 * processes (inspectPdf.mjs), never on the api's event loop, within PDF_MAX_PAGES, PDF_MAX_OBJECTS and
 * PDF_MAX_DECOMPRESSED_BYTES (counted by the parser) and PDF_TIMEOUT_MS and PDF_MAX_MEMORY_MB (enforced
 * by the pool from outside). Each limit passed is a problem naming it.
 */
export function createPdfInspector(config: Config): PdfInspector {
  const limits = { maxPages: config.PDF_MAX_PAGES, maxObjects: config.PDF_MAX_OBJECTS, maxDecompressedBytes: config.PDF_MAX_DECOMPRESSED_BYTES };
  type ChildAnswer = { facts: Omit<PdfFacts, 'sha256'> & Partial<PdfSignatures>; problem?: undefined } | { facts?: undefined; problem: string };
  const pool = createPdfPool<ChildAnswer>({
    script: path.join(__dirname, 'inspectPdf.mjs'),
    args: [JSON.stringify(limits)],
    size: config.PDF_POOL_SIZE,
    maxQueued: MAX_QUEUED,
    timeoutMs: config.PDF_TIMEOUT_MS,
    maxMemoryMb: config.PDF_MAX_MEMORY_MB,
    niceness: CHECK_NICENESS,
  });
  async function run(file: PdfFile, signatures: boolean) {
    try {
      const inspection = await pool.run(file.bytes ?? NO_BYTES, { path: file.path, signatures });
      return inspection.facts ? { facts: { ...inspection.facts, sha256: file.sha256 } } : inspection;
    } catch (error) {
      if (error instanceof PdfLimitError) return { problem: error.message };
      if (error instanceof PdfPoolBusyError) throw serverBusy('Too many PDFs are being checked at the moment; try again in a second.');
      throw error;
    }
  }
  return {
    inspect: (file) => run(file, false) as Promise<PdfInspection>,
    inspectSignatures: (file) => run({ sha256: file.sha256, bytes: file.bytes }, true) as Promise<SignedPdfInspection>,
    get jobsStarted() {
      return pool.jobsStarted;
    },
    close: pool.close,
  };
}
