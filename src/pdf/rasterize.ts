import { spawn } from 'node:child_process';
import { PdfLimitError } from './pool';

/** The longest side of a rendered page, in pixels: a poster-sized page is scaled down to it. */
export const MAX_RENDER_PIXELS = 4000;
const MAX_PNG_BYTES = 64 * 1024 * 1024;

/**
 * Renders the first page of a PDF as a PNG with poppler's pdftoppm (Debian's poppler-utils), in a child
 * process killed after `timeoutMs`. At 72 dpi one pixel is one PDF point, unless the page's longer side
 * would pass MAX_RENDER_PIXELS. A page that takes too long, renders too large or that pdftoppm cannot
 * render fails with a PdfLimitError (the PDF's doing); pdftoppm missing, with the error as it is.
 */
export function renderFirstPagePng(pdf: Uint8Array, { width, height, timeoutMs }: { width: number; height: number; timeoutMs: number }): Promise<Buffer> {
  const scale = Math.max(width, height) > MAX_RENDER_PIXELS ? ['-scale-to', String(MAX_RENDER_PIXELS)] : ['-r', '72'];
  return new Promise((resolve, reject) => {
    const child = spawn('pdftoppm', ['-png', ...scale, '-f', '1', '-l', '1', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: Error | undefined;
    const timer = setTimeout(() => {
      failure = new PdfLimitError(`content exceeds the limit of ${timeoutMs} ms of processing (PDF_TIMEOUT_MS)`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_PNG_BYTES) {
        failure ??= new PdfLimitError(`the image would be over ${MAX_PNG_BYTES / 2 ** 20} MB`);
        child.kill('SIGKILL');
      } else chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.stdin.on('error', () => undefined); // a child that exits early closes its input; its exit says why
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code !== 0 || size === 0) reject(new PdfLimitError(`pdftoppm could not render it (${signal ?? code}): ${stderr.trim().slice(-300)}`));
      else resolve(Buffer.concat(chunks));
    });
    child.stdin.end(pdf);
  });
}
