import crypto from 'node:crypto';
import { EncryptedPDFError, PDFDocument } from 'pdf-lib';

export interface PdfFacts {
  pageCount: number;
  /** [width, height] of each page in PDF points. */
  pageSizes: [number, number][];
  sha256: string;
}

/**
 * Checks that bytes are a whole, unencrypted, parsable PDF with at least one page.
 * Returns the problems as validation messages rather than throwing, so callers can report them with other rules.
 */
export async function inspectPdf(bytes: Uint8Array): Promise<{ facts?: PdfFacts; problem?: string }> {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  if (!head.includes('%PDF-')) return { problem: 'content must be a PDF file' };
  // A PDF ends with %%EOF; one cut short (an interrupted upload) does not, though pdf-lib would often still open it.
  const tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - 1024))).toString('latin1');
  if (!tail.includes('%%EOF')) return { problem: 'content is a truncated PDF (no %%EOF marker)' };
  try {
    const pdf = await PDFDocument.load(bytes, { updateMetadata: false, throwOnInvalidObject: true });
    const pageCount = pdf.getPageCount();
    if (pageCount < 1) return { problem: 'content must be a PDF with at least one page' };
    const pageSizes = pdf.getPages().map((page): [number, number] => {
      const { width, height } = page.getSize();
      return [width, height];
    });
    return { facts: { pageCount, pageSizes, sha256: crypto.createHash('sha256').update(bytes).digest('hex') } };
  } catch (error) {
    if (error instanceof EncryptedPDFError || (await isEncrypted(bytes))) return { problem: 'content must not be an encrypted PDF' };
    return { problem: 'content is not a parsable PDF' };
  }
}

// Encrypted object streams can make the strict parse fail before pdf-lib looks at the trailer's /Encrypt.
async function isEncrypted(bytes: Uint8Array) {
  try {
    return (await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false })).isEncrypted;
  } catch {
    return false;
  }
}
