import path from 'node:path';
import type { Config } from '../config';
import { serverBusy, validationError } from '../errors';
import { createPdfPool, PdfLimitError, PdfPoolBusyError } from './pool';
import type { TaggedField } from './textTags';

/** What is drawn on a page: a template's roles and fields (none on a document's plain page). */
export interface PageMarks {
  roles: { name: string }[];
  fields: Omit<TaggedField, 'tag'>[];
}

export interface PageRenderer {
  /** A PNG of page `page` (1-based) of `pdf`, with `marks` drawn on it. */
  renderPng(pdf: Uint8Array, page: number, marks?: PageMarks): Promise<Buffer>;
  /** Pages handed to a child process so far. */
  readonly jobsStarted: number;
  close(): Promise<void>;
}

const MAX_QUEUED = 100;

/**
 * Renders pages of PDFs Signet accepted (a document's original, a template's) for the console and the
 * template previews: the page is cut out of its PDF, with the marks drawn, and drawn as a PNG by pdf.js
 * on an npm-installed canvas, in PDF_POOL_SIZE child processes (renderPage.mjs) within PDF_TIMEOUT_MS
 * and PDF_MAX_MEMORY_MB. Never on the api's event loop: pdf-lib takes seconds over a PDF of 100,000
 * objects. A limit passed, or a page that cannot be drawn, is the caller's 400, naming why.
 */
export function createPageRenderer(config: Config): PageRenderer {
  const pool = createPdfPool<{ png: Uint8Array; problem?: undefined } | { png?: undefined; problem: string }>({
    script: path.join(__dirname, 'renderPage.mjs'),
    args: [],
    size: config.PDF_POOL_SIZE,
    maxQueued: MAX_QUEUED,
    timeoutMs: config.PDF_TIMEOUT_MS,
    maxMemoryMb: config.PDF_MAX_MEMORY_MB,
  });
  return {
    async renderPng(pdf, page, marks = { roles: [], fields: [] }) {
      const couldNot = (why: string) => validationError([`page ${page} could not be rendered: ${why}`]);
      try {
        const rendered = await pool.run(pdf, { page, roles: marks.roles, fields: marks.fields });
        if (rendered.problem !== undefined) throw couldNot(rendered.problem);
        return Buffer.from(rendered.png.buffer, rendered.png.byteOffset, rendered.png.byteLength);
      } catch (error) {
        if (error instanceof PdfLimitError) throw couldNot(error.message);
        if (error instanceof PdfPoolBusyError) throw serverBusy('Too many pages are being rendered at the moment; try again in a second.');
        throw error;
      }
    },
    get jobsStarted() {
      return pool.jobsStarted;
    },
    close: pool.close,
  };
}
