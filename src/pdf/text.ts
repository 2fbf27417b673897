/** Enough text to find a document by what it says, and small enough for one tsvector (1 MB). */
export const MAX_TEXT_CHARS = 200_000;

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | undefined;

/**
 * The text of a PDF, page after page, for search. A scanned PDF has none: that is an empty string,
 * not an error, and so is a PDF that pdf.js cannot read (the upload was already validated by pdf-lib).
 */
export async function extractPdfText(bytes: Uint8Array): Promise<string> {
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  const { getDocument } = await pdfjs;
  // pdf.js may detach the buffer it is given: hand it a copy.
  const task = getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
  const pages: string[] = [];
  let length = 0;
  try {
    const pdf = await task.promise;
    for (let number = 1; number <= pdf.numPages && length < MAX_TEXT_CHARS; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      const text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : ' ') : '')).join('');
      pages.push(text);
      length += text.length;
      page.cleanup();
    }
  } catch {
    return pages.join('\n').slice(0, MAX_TEXT_CHARS);
  } finally {
    await task.destroy();
  }
  return pages.join('\n').slice(0, MAX_TEXT_CHARS);
}
