import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
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

/** A valid PDF of these pages and about `bytes` bytes (an incompressible attachment pads it). */
export async function makeLargePdf(bytes: number, pages = ['a large contract']): Promise<Buffer> {
  const pdf = await PDFDocument.load(await makePdf(pages));
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

// ---------------------------------------------------------------- hostile PDFs, written by hand
// Each is small to send and costly to a naive parser. None is committed as a file: they are made here.

/** A PDF of these objects (numbered from 1; the first is the catalog), with a correct cross-reference table. */
export function assemblePdf(objects: (string | Buffer)[]): Buffer {
  const parts = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0].length;
  const offsets = objects.map((object, index) => {
    const bytes = Buffer.concat([
      Buffer.from(`${index + 1} 0 obj\n`),
      Buffer.isBuffer(object) ? object : Buffer.from(object, 'latin1'),
      Buffer.from('\nendobj\n'),
    ]);
    parts.push(bytes);
    offset += bytes.length;
    return offset - bytes.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((start) => `${String(start).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

const streamObject = (dictionary: string, data: Buffer) =>
  Buffer.concat([Buffer.from(`<< ${dictionary} /Length ${data.length} >>\nstream\n`), data, Buffer.from('\nendstream')]);

/** Catalog, page tree and one page: objects 1–3, so that a hostile object stream can be object 4. */
const onePage = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>'];

/** One page, and an object stream (object 4) holding `objects` (numbered from 5) written as `text`. */
function pdfWithObjectStream(objects: string[], compressed?: Buffer): Buffer {
  let at = 0;
  const header = `${objects.map((object, index) => `${index + 5} ${(at += object.length + 1) - object.length - 1}`).join(' ')} `;
  const data = compressed ?? zlib.deflateSync(Buffer.from(header + objects.join(' ')));
  return assemblePdf([...onePage, streamObject(`/Type /ObjStm /N ${objects.length} /First ${header.length} /Filter /FlateDecode`, data)]);
}

/**
 * A PDF of about 600 KB whose object stream inflates to `inflatedBytes` (600 MiB): a zlib stream made of one
 * deflate block of 1 MiB of zeros repeated (the block refers to nothing before it), with its true checksum.
 */
export function makeObjectStreamBomb(inflatedBytes = 600 * 2 ** 20): Buffer {
  const MiB = 2 ** 20;
  const prefix = Buffer.from('5 0 null ');
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH, level: 9 };
  const zeros = zlib.deflateRawSync(Buffer.alloc(MiB), flush);
  // Adler-32 of the prefix, then of the zeros: each zero byte adds the running sum a to b.
  let a = 1;
  let b = 0;
  for (const byte of prefix) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  const zeroCount = Math.ceil(inflatedBytes / MiB) * MiB;
  b = (b + (zeroCount % 65521) * a) % 65521;
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(((b << 16) | a) >>> 0);
  const blocks = Array.from({ length: zeroCount / MiB }, () => zeros);
  const stream = Buffer.concat([Buffer.from([0x78, 0xda]), zlib.deflateRawSync(prefix, flush), ...blocks, Buffer.from([0x03, 0x00]), checksum]);
  return pdfWithObjectStream(['null'], stream);
}

/** A page tree `depth` levels deep whose every node lists its one child twice: 2^depth (4,194,304) pages to a naive walk, in about 2 KB. */
export function makeDoubledPageTree(depth = 22): Buffer {
  const nodes = Array.from({ length: depth }, (_, level) => {
    const parent = level === 0 ? '' : ` /Parent ${level + 1} 0 R`;
    return `<< /Type /Pages /Kids [${level + 3} 0 R ${level + 3} 0 R] /Count ${2 ** (depth - level)}${parent} >>`;
  });
  return assemblePdf(['<< /Type /Catalog /Pages 2 0 R >>', ...nodes, `<< /Type /Page /Parent ${depth + 1} 0 R /MediaBox [0 0 612 792] >>`]);
}

/** A PDF of `pages` blank pages under one node (objects 3 … pages + 2). */
export function makeManyPagePdf(pages: number): Buffer {
  const kids = Array.from({ length: pages }, (_, index) => `${index + 3} 0 R`).join(' ');
  const leaves = Array.from({ length: pages }, () => '<< /Type /Page /Parent 2 0 R >>');
  return assemblePdf(['<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [${kids}] /Count ${pages} /MediaBox [0 0 612 792] >>`, ...leaves]);
}

/** One page and `count` more objects (nulls): written one after another, or packed into a compressed object stream. */
export function makeManyObjectPdf(count: number, { inObjectStream = false } = {}): Buffer {
  const nulls = Array.from({ length: count }, () => 'null');
  return inObjectStream ? pdfWithObjectStream(nulls) : assemblePdf([...onePage, ...nulls]);
}

/** One page and one array of `numbers` zeros in an object stream: a few KB that a parser holds as millions of objects. */
export function makeMemoryHungryPdf(numbers = 10_000_000): Buffer {
  return pdfWithObjectStream([`[${'0 '.repeat(numbers)}]`]);
}
