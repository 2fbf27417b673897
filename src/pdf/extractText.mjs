// The child process of extractPdfText (text.ts): reads a PDF on stdin and writes its text, page after
// page, on stdout, at most argv[2] characters. Plain JavaScript so that it starts without a TypeScript
// loader. A PDF pdf.js cannot read yields what was read so far, usually nothing.
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

const maxChars = Number(process.argv[2]);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const task = getDocument({ data: new Uint8Array(Buffer.concat(chunks)), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
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
process.stdout.write(pages.join('\n').slice(0, maxChars));
