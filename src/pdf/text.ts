import { spawn } from 'node:child_process';
import path from 'node:path';

/** Enough text to find a document by what it says, and small enough for one tsvector (1 MB). */
export const MAX_TEXT_CHARS = 200_000;

const SCRIPT = path.join(__dirname, 'extractText.mjs');
const TIME_LIMIT_MS = 30_000;
const HEAP_LIMIT_MB = 256;

/**
 * The text of a PDF, page after page, for search. A scanned PDF has none: that is an empty string,
 * not an error, and so is a PDF that pdf.js cannot read (the upload was already validated by pdf-lib).
 *
 * pdf.js runs in a child process with a heap cap and a time limit: parsing an untrusted 25 MB PDF
 * costs hundreds of MB for a moment, which the server would otherwise keep, and a PDF crafted to hang
 * or exhaust the parser only costs its own child. A child that fails or runs out of time gives ''.
 */
export function extractPdfText(bytes: Uint8Array): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${HEAP_LIMIT_MB}`, SCRIPT, String(MAX_TEXT_CHARS)], {
      stdio: ['pipe', 'pipe', 'ignore'],
      timeout: TIME_LIMIT_MS,
      killSignal: 'SIGKILL',
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', () => resolve(''));
    child.on('close', (code) => resolve(code === 0 ? Buffer.concat(chunks).toString('utf8') : ''));
    child.stdin.on('error', () => undefined); // the child may exit before reading everything
    child.stdin.end(bytes);
  });
}
