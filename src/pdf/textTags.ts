import path from 'node:path';
import type { Config } from '../config';
import { serverBusy, validationError } from '../errors';
import { type FieldType, fieldTypes, optionFieldTypes } from '../fields/types';
import { createPdfPool, PdfLimitError, PdfPoolBusyError } from './pool';

/**
 * The kinds a text tag names: every kind but staticText, whose text is the PDF's own. The option kinds give their
 * options and calculated its formula after the label ({{radio:tenant:Plan:Basic|Pro}}, {{calculated:tenant:Total:[Rent] * [Months]}}).
 */
export const taggedFieldTypes = fieldTypes.filter((type) => type !== 'staticText');

/** A field found where a text tag such as {{text:tenant:rent}} is printed: the tag's own box. */
export interface TaggedField {
  role: string;
  type: FieldType;
  label: string | null;
  /** radio, dropdown, multiSelect and checkboxGroup: the options the tag lists, each trimmed. */
  options?: string[];
  /** calculated: the tag's formula, its [Label]s written {Label} as formulas name fields. */
  formula?: string;
  /** 1-based page; x, y, width, height in PDF points from the page's bottom-left corner. */
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The tag as printed. */
  tag: string;
}

/** A tag's field as a request or template places it: required, labelled as the tag says, with the options or formula it gives. */
export const placedFieldOf = ({ type, label, options, formula, page, x, y, width, height }: TaggedField) => ({
  type,
  label,
  required: true,
  ...(options ? { options } : {}),
  ...(formula === undefined ? {} : { formula }),
  page,
  x,
  y,
  width,
  height,
});

export interface TextTagScan {
  fields: TaggedField[];
  /** Tags that could not be used: an unknown type, a malformed tag, missing or empty options, a missing formula, a tag split across lines. */
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
      args: [JSON.stringify({ fieldTypes: taggedFieldTypes, optionTypes: optionFieldTypes, maxTags: MAX_TAGS, remove })],
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
