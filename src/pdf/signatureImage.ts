import { PDFDocument } from 'pdf-lib';

// A drawn signature is stamped into the sealed PDF, so it is decoded when it is given, with the same
// decoder sealing uses: one that cannot be drawn is refused at once instead of leaving the request unsealable.
export const MAX_SIGNATURE_PIXELS = 2000 * 1000;
const MAX_SIDE = 4000;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Why a PNG data URL cannot be a drawn signature, as a details predicate ("must …"), or undefined. */
export async function signatureImageProblem(dataUrl: string): Promise<string | undefined> {
  const png = Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
  // The header first: its size is read before a single pixel is inflated.
  if (png.length < 33 || !png.subarray(0, 8).equals(PNG_SIGNATURE) || png.toString('latin1', 12, 16) !== 'IHDR') return 'must be a PNG image';
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  if (width < 1 || height < 1 || width > MAX_SIDE || height > MAX_SIDE || width * height > MAX_SIGNATURE_PIXELS) {
    return `must be at most ${MAX_SIGNATURE_PIXELS} pixels, ${MAX_SIDE} on a side (this one is ${width} × ${height})`;
  }
  try {
    await (await PDFDocument.create()).embedPng(png);
    return undefined;
  } catch {
    return 'must be a PNG image that can be decoded';
  }
}
