import fs from 'node:fs/promises';
import type { PdfInspector } from './inspect';
import { isJpeg, JpegError, readJpeg } from './jpegImage';
import { isPng, PngError, readPng } from './pngImage';

// What a signer may upload for an image or attachment field, and the check of it. The type is read from the bytes,
// never taken from the client; a PDF goes through the same inspector, limits and child processes as any upload,
// an image through the readers sealing draws with.

export const signerFileTypes = ['application/pdf', 'image/png', 'image/jpeg'] as const;
export type SignerFileType = (typeof signerFileTypes)[number];

/** Each upload, at most. */
export const MAX_SIGNER_FILE_BYTES = 10 * 1024 * 1024;
// A PNG is inflated whole to be checked, and decoded again to be drawn: a phone's screenshot fits. A JPEG is only
// walked, never decoded here: a phone's photo fits.
export const PNG_LIMITS = { maxSide: 4000, maxPixels: 8_000_000 };
export const JPEG_LIMITS = { maxSide: 10_000, maxPixels: 50_000_000 };

/** A received file, in memory or in a temporary file. */
export interface SignerFileInput {
  sha256: string;
  bytes?: Buffer;
  path?: string;
}

/** The file's type, or why it is refused (a predicate: "must be …", "is a truncated PDF …"). */
export async function checkSignerFile(pdf: PdfInspector, file: SignerFileInput): Promise<{ type: SignerFileType } | { problem: string }> {
  const head = file.bytes ?? (await firstBytes(file.path!));
  if (isPng(head) || isJpeg(head)) {
    const bytes = file.bytes ?? (await fs.readFile(file.path!));
    try {
      if (isJpeg(bytes)) {
        readJpeg(bytes, JPEG_LIMITS);
        return { type: 'image/jpeg' };
      }
      readPng(bytes, PNG_LIMITS);
      return { type: 'image/png' };
    } catch (error) {
      if (error instanceof PngError || error instanceof JpegError) return { problem: `must ${error.message}` };
      throw error;
    }
  }
  if (!head.subarray(0, 1024).includes('%PDF-')) return { problem: 'must be a PDF, PNG or JPEG file' };
  const inspection = await pdf.inspect(file);
  return inspection.problem ? { problem: inspection.problem.replace(/^content /, '') } : { type: 'application/pdf' };
}

async function firstBytes(path: string): Promise<Buffer> {
  const handle = await fs.open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(1024), 0, 1024, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
