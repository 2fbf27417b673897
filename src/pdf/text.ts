import path from 'node:path';
import type { Config } from '../config';
import { createPdfPool } from './pool';

/** Enough text to find a document by what it says, and small enough for one tsvector (1 MB). */
const MAX_TEXT_CHARS = 200_000;

/** The background work yields the CPU to the api sharing the machine, and to its checks of uploads (inspect.ts). */
const NICENESS = 10;

/** A PDF to read: in memory (`bytes`), or, when large, in a temporary file (`path`) that its child reads. */
export interface PdfTextFile {
  bytes?: Uint8Array;
  path?: string;
}

const NO_BYTES = new Uint8Array(0);

export interface PdfTextExtractor {
  extractText(file: PdfTextFile): Promise<string>;
  /** Where a caller puts a large PDF's temporary file (`<uuid>.part`) for the children to read, and removes it. */
  readonly fileDir: string;
  /** Child processes at most: how many PDFs are worth handing over at once. */
  readonly processes: number;
  close(): Promise<void>;
}

/**
 * The text of PDFs, page after page, for search: in the worker, after the upload has committed. pdf.js
 * runs in PDF_POOL_SIZE warm child processes (extractText.mjs) at a low CPU priority, within the
 * pool's PDF_TIMEOUT_MS and PDF_MAX_MEMORY_MB. A scanned PDF has no text, and a PDF that pdf.js cannot
 * read, that passes a limit or that crashes its child has none either: '' rather than an error. A large
 * PDF comes in a temporary file in `fileDir`, which the caller gives (and clears of the files of a process
 * killed mid-extraction).
 */
export function createPdfTextExtractor(config: Config, fileDir: string): PdfTextExtractor {
  const pool = createPdfPool<string>({
    script: path.join(__dirname, 'extractText.mjs'),
    args: [String(MAX_TEXT_CHARS)],
    size: config.PDF_POOL_SIZE,
    maxQueued: Number.POSITIVE_INFINITY, // the indexer hands over a few documents at a time
    timeoutMs: config.PDF_TIMEOUT_MS,
    maxMemoryMb: config.PDF_MAX_MEMORY_MB,
    niceness: NICENESS,
  });
  let closed = false;
  return {
    processes: config.PDF_POOL_SIZE,
    fileDir,
    async extractText(file) {
      try {
        return await pool.run(file.bytes ?? NO_BYTES, file.path);
      } catch (error) {
        if (closed) throw error; // shutting down says nothing about the PDF
        return '';
      }
    },
    close() {
      closed = true;
      return pool.close();
    },
  };
}
