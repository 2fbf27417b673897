// @ts-check
// The child program of the text extractor (text.ts), run in the pool of pool.ts: the text of a PDF,
// page after page, at most argv[2] characters. Plain JavaScript, so that it starts without a
// TypeScript loader. A PDF pdf.js cannot read yields what was read so far, usually nothing.
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { serveJobs } from './serveJobs.mjs';

const maxChars = Number(process.argv[2]);

/** @param {Buffer} bytes */
async function extractText(bytes) {
  const task = getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
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
  return pages.join('\n').replaceAll('\u0000', '').slice(0, maxChars); // PostgreSQL text cannot hold NUL
}

serveJobs(extractText);
