// @ts-check
// The child program of the text extractor (text.ts), run in the pool of pool.ts: the text of a PDF,
// page after page, at most argv[2] characters. A job brings the PDF's bytes, or the path of the worker's
// temporary file holding a large one. Plain JavaScript, so that it starts without a
// TypeScript loader. Most PDFs are read by readText.mjs, at a fraction of pdf.js's CPU; what it cannot
// read with confidence goes to pdf.js, loaded the first time it is needed. A PDF pdf.js cannot read
// yields what was read so far, usually nothing.
// pdf.js's modern build, not its legacy one: the legacy build replaces Array.prototype.push and the
// like with core-js versions on every Node, which costs its text extraction about a quarter of its
// CPU. Text needs nothing of the legacy polyfills but Promise.withResolvers (Node 22) on Node 20.
import fs from 'node:fs';
import { readText } from './readText.mjs';
import { serveJobs } from './serveJobs.mjs';

const promises = /** @type {{ withResolvers?: () => unknown }} */ (/** @type {unknown} */ (Promise));
promises.withResolvers ??= () => {
  /** @type {unknown} */ let resolve;
  /** @type {unknown} */ let reject;
  const promise = new Promise((fulfil, fail) => {
    resolve = fulfil;
    reject = fail;
  });
  return { promise, resolve, reject };
};

const maxChars = Number(process.argv[2]);

/**
 * @param {Buffer} sent
 * @param {string | undefined} path
 */
async function extractText(sent, path) {
  const bytes = path ? await fs.promises.readFile(path) : sent;
  let text;
  try {
    text = readText(bytes, maxChars);
  } catch {
    // Unsupported, or a PDF that trips it up (e.g. nesting deep enough to overflow its stack): pdf.js reads it.
    text = await extractTextWithPdfJs(bytes);
  }
  return text.replaceAll('\u0000', '').slice(0, maxChars); // PostgreSQL text cannot hold NUL
}

/** @type {typeof import('pdfjs-dist').getDocument | undefined} */
let getDocument;

/** @param {Buffer} bytes */
async function extractTextWithPdfJs(bytes) {
  // After the polyfill above: the module uses it as it loads. 'pdfjs-dist' is its modern build.
  getDocument ??= (await import('pdfjs-dist')).getDocument;
  // pdf.js takes a Uint8Array, not a Buffer, and keeps it: a copy (a job's buffer is the message's).
  const data = new Uint8Array(bytes);
  const task = getDocument({ data, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
  const pages = [];
  let length = 0;
  try {
    const pdf = await task.promise;
    for (let number = 1; number <= pdf.numPages && length < maxChars; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      const text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : ' ') : '')).join('');
      pages.push(text);
      length += text.length;
      page.cleanup();
    }
  } catch {
    // keep what was read
  } finally {
    await task.destroy();
  }
  return pages.join('\n');
}

serveJobs(extractText);
