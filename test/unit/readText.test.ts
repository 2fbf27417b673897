import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Config } from '../../src/config';
import { createPdfTextExtractor, type PdfTextExtractor } from '../../src/pdf/text';
import { searchWords } from '../../src/search/text';
import { launchChromium } from '../support/browser';
import { assemblePdf, makeDoubledPageTree, makeEncryptedPdf, makeObjectStreamBomb, makePdf } from '../support/pdfs';
import { pdfJsPages } from '../support/pdfjsText';

// The extractor's own reader (src/pdf/readText.mjs) must find the words pdf.js finds, or leave the PDF to
// pdf.js: search sees no difference between the two.

type ReadText = (bytes: Buffer, maxChars: number) => string;
let readText: ReadText;
let Unsupported: new () => Error;

const pdfJsText = async (bytes: Buffer) => (await pdfJsPages(bytes)).join('\n');

const words = (text: string) => searchWords(text.replaceAll('\u0000', '').toLowerCase()).split(' ').filter(Boolean);

async function expectSameWords(bytes: Buffer) {
  const ours = words(readText(bytes, 1_000_000));
  const theirs = words(await pdfJsText(bytes));
  expect(theirs.length, 'pdf.js finds words').to.be.above(0);
  expect(new Set(ours)).to.deep.equal(new Set(theirs));
  expect(ours).to.deep.equal(theirs); // in the same order, for phrases
}

/** Pages of lines of words, drawn line by line with a standard font (no widths in the PDF), as pdf-lib does. */
async function linesPdf(objectStreams: boolean) {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let number = 1; number <= 3; number++) {
    const page = pdf.addPage([595, 842]);
    for (let line = 0; line < 60; line++)
      page.drawText(`${number}.${line} The parties agree: clause ${line * 7} of page ${number}, café`, { x: 40, y: 810 - line * 12, size: 10, font });
    page.drawText('Several\nlines in\none call', { x: 300, y: 100, size: 10, font, lineHeight: 12 });
  }
  return Buffer.from(await pdf.save({ useObjectStreams: objectStreams }));
}

/** Two words on one line, the second placed after the first in a font without widths: only pdf.js knows whether they touch. */
function sameLineWithoutWidths() {
  const content = 'BT /F1 12 Tf 50 700 Td (Hello) Tj ET BT /F1 12 Tf 90 700 Td (World) Tj ET';
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]);
}

const HTML_PAGES: Record<string, string> = {
  'paragraphs and justified text': `<h1>Service Agreement</h1><p>This agreement is made between Ada Lovelace and Charles Babbage on 26 November 2026. The parties agree to confidentiality, payment within 30 days, and termination with notice.</p><p style="text-align:justify">Justified text stretches the spaces between words so that every line fills the column: officially, the office affirms fifty-five different flows.</p>`,
  'styles, spacing and sizes': `<p>Mixed <b>bold</b> and <i>italic</i> and <span style="font-family:monospace">monospace code()</span> and <span style="font-family:serif">serif words</span>, with<b>out</b> spaces between<i>styles</i>.</p><p style="letter-spacing:3px">Spaced letters here</p><p style="word-spacing:20px">wide word spacing</p><p style="font-size:6px">tiny print at six pixels</p>`,
  'tables and lists': `<table border=1><tr><th>Name</th><th>E-mail</th><th>Amount</th></tr><tr><td>Ada</td><td>ada@example.com</td><td>€1,234.56</td></tr><tr><td>Grace Hopper</td><td>grace@example.org</td><td>$99</td></tr></table><ul><li>First item</li><li>Second item</li></ul>`,
  'other scripts': `<p>Ελληνικά γράμματα, русский текст, Zürich Straße, naïve café, déjà vu, 日本語のテキスト</p>`,
  'columns, rotation and SVG': `<div style="columns:2">${'Column text flows into two columns with many words. '.repeat(30)}</div><p style="transform:rotate(90deg);width:200px">Rotated words go sideways</p><svg width="300" height="60"><text x="10" y="30">SVG text label</text></svg>`,
};

describe('reading a PDF’s text without pdf.js (src/pdf/readText.mjs)', function () {
  this.timeout(60_000);

  before(async () => {
    ({ readText } = await import('../../src/pdf/readText.mjs'));
    ({ Unsupported } = await import('../../src/pdf/contentReader.mjs'));
  });

  describe('finds the words pdf.js finds', () => {
    it('in a one-line PDF of pdf-lib', async () => expectSameWords(await makePdf(['Signet test document, version 2'])));
    it('in lines drawn one by one, written directly', async () => expectSameWords(await linesPdf(false)));
    it('in lines drawn one by one, in object streams', async () => expectSameWords(await linesPdf(true)));

    describe('in PDFs printed by Chromium', () => {
      const pdfs = new Map<string, Buffer>();
      before(async () => {
        const browser = await launchChromium();
        try {
          const page = await browser.newPage();
          for (const [name, html] of Object.entries(HTML_PAGES)) {
            await page.setContent(`<html><body style="font-family:sans-serif">${html}</body></html>`);
            pdfs.set(name, await page.pdf({ format: 'A4' }));
          }
        } finally {
          await browser.close();
        }
      });
      for (const name of Object.keys(HTML_PAGES)) it(name, async () => expectSameWords(pdfs.get(name)!));
    });
  });

  describe('leaves to pdf.js what it cannot read with confidence', () => {
    const expectUnsupported = (bytes: Buffer) => expect(() => readText(bytes, 1_000_000)).to.throw(Unsupported);

    it('an encrypted PDF', async () => expectUnsupported(await makeEncryptedPdf()));
    it('a Type3 font', () =>
      expectUnsupported(
        assemblePdf([
          '<< /Type /Catalog /Pages 2 0 R >>',
          '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
          '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
          '<< /Length 26 >>\nstream\nBT /F1 12 Tf (abc) Tj ET\n\nendstream',
          '<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [1 0 0 1 0 0] /CharProcs << >> /Encoding << /Differences [97 /a /b /c] >> /FirstChar 97 /LastChar 99 /Widths [1 1 1] >>',
        ]),
      ));
    it('text placed after glyphs of a font without widths, on the same line', () => expectUnsupported(sameLineWithoutWidths()));
    it('a stream that inflates past its cap, quickly', () => expectUnsupported(makeObjectStreamBomb()));
    it('a page tree that lists a node twice', () => expectUnsupported(makeDoubledPageTree()));
  });

  describe('in the extractor’s PDF processes (extractText.mjs)', () => {
    let extractor: PdfTextExtractor;
    before(() => (extractor = createPdfTextExtractor({ PDF_POOL_SIZE: 1, PDF_TIMEOUT_MS: 20_000, PDF_MAX_MEMORY_MB: 256 } as Config, '/nonexistent')));
    after(() => extractor.close());

    it('reads what it can itself and the rest with pdf.js', async () => {
      expect(words(await extractor.extractText({ bytes: await makePdf(['Plain words here']) }))).to.deep.equal(['plain', 'words', 'here']);
      expect(words(await extractor.extractText({ bytes: sameLineWithoutWidths() }))).to.deep.equal(['hello', 'world']);
    });
  });
});
