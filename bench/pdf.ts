import crypto from 'node:crypto';
import { concatTransformationMatrix, drawObject, PDFDocument, popGraphicsState, pushGraphicsState, StandardFonts } from 'pdf-lib';

const IMAGE_WIDTH = 4096; // pixels (= bytes) per row of the grey-scale image

async function pdfWithImage(rows: number): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([595, 842]);
  // An uncompressed 8-bit grey image of random bytes: random data cannot be compressed by anyone on
  // the way (PDF filters, TOAST in PostgreSQL), so the file really is as big as it says everywhere.
  const pixels = crypto.randomBytes(IMAGE_WIDTH * rows);
  const image = pdf.context.stream(pixels, {
    Type: 'XObject',
    Subtype: 'Image',
    Width: IMAGE_WIDTH,
    Height: rows,
    ColorSpace: 'DeviceGray',
    BitsPerComponent: 8,
  });
  const name = page.node.newXObject('Im', pdf.context.register(image));
  page.pushOperators(pushGraphicsState(), concatTransformationMatrix(595, 0, 0, 842, 0, 0), drawObject(name), popGraphicsState());
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}

/**
 * A valid one-page PDF (pdf-lib parses it, it ends with %%EOF) of at most `maxBytes` and within one
 * image row (4 KiB) of it: a one-row probe gives the size of everything but the pixels.
 */
export async function makeBigPdf(maxBytes: number): Promise<Buffer> {
  const overhead = (await pdfWithImage(1)).length - IMAGE_WIDTH;
  const rows = Math.floor((maxBytes - overhead - 64) / IMAGE_WIDTH); // 64: slack for longer /Height and /Length numbers
  const bytes = await pdfWithImage(rows);
  if (bytes.length > maxBytes || !bytes.subarray(-16).toString('latin1').includes('%%EOF')) {
    throw new Error(`big PDF came out at ${bytes.length} bytes (limit ${maxBytes}) or without %%EOF`);
  }
  return bytes;
}

/** A PDF of `pages` pages of text, `lines` lines each, of random hexadecimal words (they compress about 2:1), `lastWord` last. */
async function textPdf(pages: number, lines: number, lastWord: string): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let number = 1; number <= pages; number++) {
    const page = pdf.addPage([595, 842]);
    for (let line = 0; line < lines; line++) {
      const words = Array.from({ length: 8 }, () => crypto.randomBytes(5).toString('hex')).join(' ');
      page.drawText(`${number}.${line + 1} The parties agree: ${words}`, { x: 40, y: 810 - (line % 110) * 7, size: 6, font });
    }
    if (number === pages && lastWord) page.drawText(lastWord, { x: 40, y: 20, size: 6, font });
  }
  return Buffer.from(await pdf.save());
}

/** A 5-page text PDF of about 40 KB (at least 40,000 bytes), the upload of the upload scenario; `lastWord` ends its last page. */
export async function makeUploadPdf(lastWord = ''): Promise<Buffer> {
  for (let lines = 40; ; lines += 5) {
    const pdf = await textPdf(5, lines, lastWord);
    if (pdf.length >= 40_000) return pdf;
  }
}

/** A multipart/form-data body with one file part, as a browser sends it. */
export function multipartBody(pdf: Buffer, fileName: string) {
  const boundary = '----SignetBenchBoundary7MA4YWxkTrZu0gW';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/pdf\r\n\r\n`),
    pdf,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
