import path from 'node:path';
import type { Config } from '../config';
import { createPdfPool } from './pool';

/** Enough text to find a document by what it says, and small enough for one tsvector (1 MB). */
const MAX_TEXT_CHARS = 200_000;

/** The background work yields the CPU to the api sharing the machine. */
const NICENESS = 10;

export interface PdfTextExtractor {
  extractText(bytes: Uint8Array): Promise<string>;
  /** Child processes at most: how many PDFs are worth handing over at once. */
  readonly processes: number;
  close(): Promise<void>;
}

/**
 * The text of PDFs, page after page, for search: in the worker, after the upload has committed. pdf.js
 * runs in PDF_POOL_SIZE warm child processes (extractText.mjs) at a low CPU priority, within the
 * pool's PDF_TIMEOUT_MS and PDF_MAX_MEMORY_MB. A scanned PDF has no text, and a PDF that pdf.js cannot
 * read, that passes a limit or that crashes its child has none either: '' rather than an error.
 */
export function createPdfTextExtractor(config: Config): PdfTextExtractor {
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
    async extractText(bytes) {
      try {
        return await pool.run(bytes);
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
