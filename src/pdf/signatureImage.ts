import { encodePng, PngError, readPng } from './pngImage';

// A drawn signature (or drawn initials) is stamped into the sealed PDF, so it is read completely when it
// is given, by the reader sealing uses: one that cannot be drawn is refused at once instead of leaving the
// request unsealable. Reading is bounded work; pdf-lib's decoder runs only at sealing, on a checked PNG.
export const MAX_SIGNATURE_PIXELS = 2000 * 1000;
const LIMITS = { maxPixels: MAX_SIGNATURE_PIXELS, maxSide: 4000 };

const bytesOf = (dataUrl: string) => Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');

/** Why a PNG data URL cannot be a drawn signature, as a details predicate ("must …"), or undefined. */
export function signatureImageProblem(dataUrl: string): string | undefined {
  try {
    readPng(bytesOf(dataUrl), LIMITS);
    return undefined;
  } catch (error) {
    if (error instanceof PngError) return `must ${error.message}`;
    throw error;
  }
}

/** The PNG of a drawn signature's data URL, rebuilt from what was checked, for pdf-lib's embedPng; throws if it cannot be drawn. */
export function signaturePng(dataUrl: string): Buffer {
  if (!/^data:image\/png;base64,/.test(dataUrl.trim())) throw new Error('a drawn signature must be a PNG data URL');
  try {
    return encodePng(readPng(bytesOf(dataUrl.trim()), LIMITS));
  } catch (error) {
    if (error instanceof PngError) throw new Error(`a drawn signature must ${error.message}`);
    throw error;
  }
}
