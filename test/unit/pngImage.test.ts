import zlib from 'node:zlib';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import fc from 'fast-check';
import { MAX_SIGNATURE_PIXELS, signatureImageProblem, signaturePng } from '../../src/pdf/signatureImage';

// Hostile PNGs for the reader that stands before pdf-lib's decoder (which loops forever on some): every
// truncation, bit flips and overwritten bytes of valid PNGs of each colour type, interlaced too. Each is
// refused with the message or accepted, and an accepted one really goes through pdf-lib's embedPng, as
// given and as rebuilt. pdf-lib runs on a thread of its own here, so that a hang fails the test (the
// thread is ended) instead of stopping mocha with it.

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const HANG_MS = 5_000;

function chunk(type: string, data: Buffer) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])));
  return Buffer.concat([length, Buffer.from(type, 'latin1'), data, crc]);
}

interface Shape {
  width: number;
  height: number;
  colourType: number;
  depth: number;
  interlaced: boolean;
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** A valid PNG of the shape, written here (not by the code under test): random pixels, every filter, split IDATs, a text chunk. */
function makePng({ width, height, colourType, depth, interlaced }: Shape, seed: number): Buffer {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) % 256;
  const passes = interlaced
    ? [
        [0, 0, 8, 8],
        [4, 0, 8, 8],
        [0, 4, 4, 8],
        [2, 0, 4, 4],
        [0, 2, 2, 4],
        [1, 0, 2, 2],
        [0, 1, 1, 2],
      ]
    : [[0, 0, 1, 1]];
  const lines: Buffer[] = [];
  for (const [x, y, dx, dy] of passes) {
    const passWidth = Math.ceil((width - x) / dx);
    const passHeight = Math.ceil((height - y) / dy);
    if (passWidth <= 0 || passHeight <= 0) continue;
    for (let row = 0; row < passHeight; row++) {
      const line = Buffer.alloc(1 + Math.ceil((passWidth * CHANNELS[colourType] * depth) / 8), 0);
      line[0] = row % 5;
      for (let i = 1; i < line.length; i++) line[i] = colourType === 3 && depth === 8 ? random() & 3 : random(); // a 4-colour palette
      lines.push(line);
    }
  }
  const compressed = zlib.deflateSync(Buffer.concat(lines));
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([depth, colourType, 0, 0, interlaced ? 1 : 0], 8);
  const palette = colourType === 3 ? [chunk('PLTE', Buffer.from([0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255])), chunk('tRNS', Buffer.from([0, 128]))] : [];
  const half = Math.ceil(compressed.length / 2);
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('tEXt', Buffer.from('Software\0test')),
    ...palette,
    chunk('IDAT', compressed.subarray(0, half)),
    chunk('IDAT', compressed.subarray(half)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const SHAPES: Shape[] = [
  { width: 7, height: 5, colourType: 6, depth: 8, interlaced: false },
  { width: 9, height: 6, colourType: 2, depth: 16, interlaced: true },
  { width: 11, height: 3, colourType: 0, depth: 1, interlaced: false },
  { width: 13, height: 9, colourType: 0, depth: 4, interlaced: true },
  { width: 5, height: 5, colourType: 4, depth: 8, interlaced: false },
  { width: 10, height: 4, colourType: 3, depth: 2, interlaced: false },
  { width: 8, height: 8, colourType: 3, depth: 8, interlaced: true },
];
const VALID = SHAPES.map((shape, index) => makePng(shape, index + 1));
const dataUrl = (png: Buffer) => `data:image/png;base64,${png.toString('base64')}`;

/** pdf-lib's embedPng on a thread that is ended if it has not answered in HANG_MS. */
class PdfLibThread {
  private worker = this.start();
  private next = 0;

  private start() {
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const { PDFDocument } = require('pdf-lib');
       parentPort.on('message', async ({ id, png }) => {
         try { await (await PDFDocument.create()).embedPng(png); parentPort.postMessage({ id }); }
         catch (error) { parentPort.postMessage({ id, error: String(error) }); }
       });`,
      { eval: true },
    );
    worker.unref();
    return worker;
  }

  embed(png: Buffer): Promise<string | undefined> {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.worker.off('message', answer);
        void this.worker.terminate();
        this.worker = this.start();
        reject(new Error(`pdf-lib's embedPng did not finish within ${HANG_MS} ms`));
      }, HANG_MS);
      const answer = (message: { id: number; error?: string }) => {
        if (message.id !== id) return;
        clearTimeout(timer);
        this.worker.off('message', answer);
        resolve(message.error);
      };
      this.worker.on('message', answer);
      this.worker.postMessage({ id, png });
    });
  }

  close() {
    return this.worker.terminate();
  }
}

const REFUSALS = ['must be a PNG image', 'must be a PNG image that can be decoded', `must be at most ${MAX_SIGNATURE_PIXELS} pixels, 4000 on a side`];

describe('PNG reading before pdf-lib (drawn signatures and initials)', function () {
  this.timeout(120_000);
  const pdfLib = new PdfLibThread();
  after(() => pdfLib.close());

  /** Refused with one of the messages, or accepted and then drawable by pdf-lib, as given and as rebuilt. */
  async function refusedOrDrawable(png: Buffer) {
    const problem = signatureImageProblem(dataUrl(png));
    if (problem !== undefined) {
      expect(
        REFUSALS.some((refusal) => problem.startsWith(refusal)),
        problem,
      ).to.equal(true);
      expect(() => signaturePng(dataUrl(png))).to.throw(/^a drawn signature must be/);
      return false;
    }
    expect(await pdfLib.embed(png), 'pdf-lib on the PNG as given').to.equal(undefined);
    expect(await pdfLib.embed(signaturePng(dataUrl(png))), 'pdf-lib on the PNG as rebuilt').to.equal(undefined);
    return true;
  }

  it('accepts each valid PNG (every colour type, 1 to 16 bits, palette, interlaced); pdf-lib draws it', async () => {
    for (const png of VALID) expect(await refusedOrDrawable(png)).to.equal(true);
  });

  it('refuses the truncated PNG of issue #24, on which pdf-lib alone loops forever', async () => {
    const truncated = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAGQAAABkCAAAAABVicqIAAAAIUlEQVR4nO3BgQAAAADDIH/qXeEAVQEA';
    expect(signatureImageProblem(truncated)).to.equal('must be a PNG image that can be decoded');
    expect(() => signaturePng(truncated)).to.throw('a drawn signature must be a PNG image that can be decoded');
    // The guard of this file works: pdf-lib given the bytes itself does not come back.
    let hung = false;
    await pdfLib.embed(Buffer.from(truncated.split(',')[1], 'base64')).catch(() => (hung = true));
    expect(hung).to.equal(true);
  });

  it('refuses every truncation of every valid PNG', () => {
    for (const png of VALID) {
      for (let length = 0; length < png.length; length++) {
        const problem = signatureImageProblem(dataUrl(png.subarray(0, length)));
        expect(problem, `${length} of ${png.length} bytes`).to.be.oneOf(['must be a PNG image', 'must be a PNG image that can be decoded']);
      }
    }
  });

  it('random bit flips: refused or drawable, never a hang', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(VALID.length - 1), fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), async (which, bits) => {
        const png = Buffer.from(VALID[which]);
        for (const bit of bits) png[(bit >> 3) % png.length] ^= 1 << (bit & 7);
        await refusedOrDrawable(png);
      }),
      { numRuns: 300 },
    );
  });

  it('random bytes overwritten, and the chunk CRC made right again so the damage reaches IHDR, PLTE and the image data', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.nat(VALID.length - 1),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (which, writes, fixCrc) => {
          const png = Buffer.from(VALID[which]);
          for (const [at, byte] of writes) png[8 + (at % (png.length - 8))] = byte;
          if (fixCrc) fixCrcs(png);
          if (await refusedOrDrawable(png)) accepted++;
        },
      ),
      { numRuns: 300 },
    );
    expect(accepted, 'some damage (a palette entry, a pixel in a stored block) leaves a drawable PNG').to.be.greaterThan(0);
  });
});

/** Rewrites the CRC of each chunk whose length still fits, as a careful forger would. */
function fixCrcs(png: Buffer) {
  let offset = 8;
  while (offset + 12 <= png.length) {
    const length = png.readUInt32BE(offset);
    if (length > png.length - offset - 12) return;
    png.writeUInt32BE(zlib.crc32(png.subarray(offset + 4, offset + 8 + length)), offset + 8 + length);
    offset += 12 + length;
  }
}
