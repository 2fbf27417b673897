import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** A real PDF with one line of text per page. */
export async function makePdf(pages: string[] = ['Signet test document']): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage([595, 842]);
    page.drawText(text, { x: 50, y: 780, size: 14, font });
  }
  return Buffer.from(await pdf.save());
}

/** A valid PDF of about `bytes` bytes (an incompressible attachment pads it). */
export async function makeLargePdf(bytes: number): Promise<Buffer> {
  const pdf = await PDFDocument.load(await makePdf(['a large contract']));
  await pdf.attach(crypto.randomBytes(bytes), 'padding.bin', { mimeType: 'application/octet-stream' });
  return Buffer.from(await pdf.save());
}

/** A PDF encrypted by qpdf (an independent tool), with a user password. */
export async function makeEncryptedPdf(): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-pdf-'));
  try {
    fs.writeFileSync(path.join(dir, 'plain.pdf'), await makePdf());
    execFileSync('qpdf', ['--encrypt', 'user-secret', 'owner-secret', '256', '--', 'plain.pdf', 'encrypted.pdf'], { cwd: dir });
    return fs.readFileSync(path.join(dir, 'encrypted.pdf'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
