import zlib from 'node:zlib';
import { expect } from 'chai';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { PNG } from 'pngjs';
import { loadConfig } from '../../src/config';
import { AppError } from '../../src/errors';
import { createPageRenderer, type PageRenderer } from '../../src/pdf/pageRenderer';

// Page images are drawn with npm packages alone (pdf.js on @napi-rs/canvas): with PATH empty, no
// program of the machine (pdftoppm or any other) can be found, for the api or its children.

/** A page of `width` × `height` points with "Signet" written near its top-left corner in Helvetica (not embedded). */
async function pagePdf(width = 595.28, height = 841.89) {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([width, height]);
  page.drawText('Signet', { x: 40, y: height - 80, size: 36, font: await pdf.embedFont(StandardFonts.Helvetica) });
  return pdf.save();
}

const pixelAt = (png: PNG, x: number, y: number) => {
  const offset = (png.width * y + x) * 4;
  return [png.data[offset], png.data[offset + 1], png.data[offset + 2]];
};
const isWhite = (rgb: number[]) => rgb.every((value) => value === 255);

describe('the page renderer, with nothing on PATH', function () {
  this.timeout(60_000);
  const path = process.env.PATH;
  let pages: PageRenderer;

  before(() => {
    process.env.PATH = '';
    pages = createPageRenderer(loadConfig({ PDF_POOL_SIZE: '1' }));
  });

  after(async () => {
    process.env.PATH = path;
    await pages.close();
  });

  it('draws a page one pixel per point: its text dark, a field tinted in its role’s colour, the rest white', async () => {
    const field = { role: 'tenant', type: 'signature' as const, page: 1, x: 50, y: 100, width: 150, height: 40, label: 'sign here', required: true };
    const png = PNG.sync.read(await pages.renderPng(await pagePdf(), 1, { roles: [{ name: 'tenant' }], fields: [field] }));
    expect([png.width, png.height]).to.deep.equal([595, 842]);
    // "Signet" at 36 pt on a baseline 80 points below the top: some pixel of its first letters is dark.
    const text = Array.from({ length: 40 }, (_, dx) => pixelAt(png, 40 + dx, 70)).filter((rgb) => rgb.every((value) => value < 128));
    expect(text.length, 'dark pixels of the text').to.be.greaterThan(0);
    // Inside the field (PDF y counts from the bottom): tinted, bluer than it is red.
    const [red, green, blue] = pixelAt(png, 125, 842 - 110);
    expect(isWhite([red, green, blue])).to.equal(false);
    expect(blue).to.be.greaterThan(red);
    expect(isWhite(pixelAt(png, 400, 400))).to.equal(true);
  });

  it('scales a poster-sized page down to 4000 pixels on its longer side', async () => {
    const png = PNG.sync.read(await pages.renderPng(await pagePdf(14_400, 7_200), 1));
    expect([png.width, png.height]).to.deep.equal([4000, 2000]);
  });

  it('a page whose image would take hundreds of megabytes to draw is a 400 naming PDF_MAX_MEMORY_MB, never a 500', async () => {
    // 12,000 × 12,000 RGB pixels: a 420 KB stream that inflates to 432 MB.
    const side = 12_000;
    const pdf = await PDFDocument.create();
    const page = pdf.addPage([200, 200]);
    const pixels = zlib.deflateSync(Buffer.alloc(side * side * 3), { level: 1 });
    const image = pdf.context.stream(pixels, {
      Type: 'XObject',
      Subtype: 'Image',
      Width: side,
      Height: side,
      ColorSpace: 'DeviceRGB',
      BitsPerComponent: 8,
      Filter: 'FlateDecode',
    });
    page.node.setXObject(PDFName.of('Big'), pdf.context.register(image));
    page.node.set(PDFName.of('Contents'), pdf.context.register(pdf.context.flateStream('q 200 0 0 200 0 0 cm /Big Do Q')));
    const failure = await pages.renderPng(await pdf.save(), 1).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).to.be.instanceOf(AppError);
    expect((failure as AppError).details).to.deep.equal(['page 1 could not be rendered: content exceeds the limit of 256 MB of memory (PDF_MAX_MEMORY_MB)']);
  });
});
