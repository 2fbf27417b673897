import path from 'node:path';
import type { Config } from '../config';
import { serverBusy, validationError } from '../errors';
import type { FieldType } from '../fields/types';
import { createPdfPool, PdfLimitError, PdfPoolBusyError } from './pool';

/** The kinds a text tag names: those that need nothing beyond a role and a label (options, a formula or a text are placed by coordinates). */
export const taggedFieldTypes = ['signature', 'initials', 'date', 'text', 'checkbox', 'number', 'email', 'phone', 'signerName', 'signerEmail'] as const;

/** A field found where a text tag such as {{text:tenant:rent}} is printed: the tag's own box. */
export interface TaggedField {
  role: string;
  type: FieldType;
  label: string | null;
  /** 1-based page; x, y, width, height in PDF points from the page's bottom-left corner. */
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The tag as printed. */
  tag: string;
}

export interface TextTagScan {
  fields: TaggedField[];
  /** Tags that could not be used: an unknown type, a malformed tag, a tag split across lines. */
  warnings: string[];
}

/** The tags of a PDF and the PDF without them. */
export interface TextTagRemoval extends TextTagScan {
  /** The PDF with each found tag's glyphs deleted from its page's content, or covered in white where they cannot be (removeTextTags.mjs says when). */
  pdf: Uint8Array;
  /** The tags covered in white instead ("{{signature:tenant}} on page 2"). */
  coveredTags: string[];
}

export interface TextTagFinder {
  findTags(bytes: Uint8Array): Promise<TextTagScan>;
  /** findTags, and the PDF without the tags it found. */
  removeTags(bytes: Uint8Array): Promise<TextTagRemoval>;
  close(): Promise<void>;
}

/** The tags of a PDF and, only when it has some, the PDF without them: one without tags is read once and not rewritten. */
export async function removeTagsIfAny(finder: TextTagFinder, bytes: Uint8Array): Promise<TextTagScan & Partial<TextTagRemoval>> {
  const scan = await finder.findTags(bytes);
  return scan.fields.length > 0 ? finder.removeTags(bytes) : scan;
}

/** Tags read from one PDF at most; the rest are a warning. */
export const MAX_TAGS = 500;
const MAX_QUEUED = 100;

/**
 * Finds text tags in PDFs with pdf.js, and removes them with pdf-lib, in PDF_POOL_SIZE child processes
 * (findTextTags.mjs) for each, started when first needed, within PDF_TIMEOUT_MS and PDF_MAX_MEMORY_MB.
 * The PDFs are ones Signet already accepted (a document's original), so a limit passed is the caller's
 * 400 rather than a crash.
 */
export function createTextTagFinder(config: Config): TextTagFinder {
  const poolFor = <Result>(remove: boolean) =>
    createPdfPool<Result>({
      script: path.join(__dirname, 'findTextTags.mjs'),
      args: [JSON.stringify({ fieldTypes: taggedFieldTypes, maxTags: MAX_TAGS, remove })],
      size: config.PDF_POOL_SIZE,
      maxQueued: MAX_QUEUED,
      timeoutMs: config.PDF_TIMEOUT_MS,
      maxMemoryMb: config.PDF_MAX_MEMORY_MB,
    });
  const finder = poolFor<TextTagScan>(false);
  const remover = poolFor<TextTagRemoval>(true);
  const run = async <Result>(pool: { run(bytes: Uint8Array): Promise<Result> }, bytes: Uint8Array) => {
    try {
      return await pool.run(bytes);
    } catch (error) {
      if (error instanceof PdfLimitError) throw validationError([`text tags could not be read: ${error.message}`]);
      if (error instanceof PdfPoolBusyError) throw serverBusy('Too many PDFs are being read at the moment; try again in a second.');
      throw error;
    }
  };
  return {
    findTags: (bytes) => run(finder, bytes),
    removeTags: (bytes) => run(remover, bytes),
    async close() {
      await Promise.all([finder.close(), remover.close()]);
    },
  };
}
