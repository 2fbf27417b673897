import crypto from 'node:crypto';
import { concatTransformationMatrix, drawObject, PDFDocument, popGraphicsState, pushGraphicsState } from 'pdf-lib';

const IMAGE_WIDTH = 4096; // pixels (= bytes) per row of the grey-scale image

async function pdfWithImage(rows: number): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([595, 842]);
  // An uncompressed 8-bit grey image of random bytes: random data cannot be compressed by anyone on
  // the way (PDF filters, TOAST in PostgreSQL), so the file really is as big as it says everywhere.
  const pixels = crypto.randomBytes(IMAGE_WIDTH * rows);
  const image = pdf.context.stream(pixels, { Type: 'XObject', Subtype: 'Image', Width: IMAGE_WIDTH, Height: rows, ColorSpace: 'DeviceGray', BitsPerComponent: 8 });
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
