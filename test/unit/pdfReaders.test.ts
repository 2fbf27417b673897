import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { searchWords } from '../../src/search/text';
import { launchChromium } from '../support/browser';
import { assemblePdf, makeDoubledPageTree, makeManyPagePdf, makeObjectStreamBomb, makePdf } from '../support/pdfs';
import { pdfJsPages } from '../support/pdfjsText';

// The text extraction for search (readText.mjs) and the removal of text tags (removeTextTags.mjs) read a
// page with one reader (contentReader.mjs, contentFonts.mjs): on the same PDFs, each reads the text pdf.js
// reads, or leaves the PDF (or font) alone.

let readText: typeof import('../../src/pdf/readText.mjs').readText;
let readPage: typeof import('../../src/pdf/removeTextTags.mjs').readPage;
let Unsupported: typeof import('../../src/pdf/contentReader.mjs').Unsupported;

const words = (text: string) => searchWords(text.replaceAll('\u0000', '').toLowerCase()).split(' ').filter(Boolean);
/** The glyphs of a text in order, without the spaces between words that each reader places its own way. */
const glyphs = (text: string) => text.normalize('NFKC').replace(/\s+/g, '');

/** Each page's glyphs as removeTextTags.mjs reads them, as `glyphs` gives them (undefined where it cannot read one). */
async function tagReaderPages(bytes: Buffer): Promise<(string | undefined)[]> {
  const pdf = await PDFDocument.load(bytes, { updateMetadata: false });
  return pdf.getPages().map((page) => {
    const texts = readPage(pdf, page)?.glyphs.map((glyph) => glyph.text) ?? [];
    return texts.includes(undefined) ? undefined : glyphs(texts.join(''));
  });
}

const stream = (data: string) => `<< /Length ${data.length} >>\nstream\n${data}\nendstream`;
/** A one-page PDF: content stream `content`, font /F1 the dictionary `font`, and more objects from number 6. */
function pagePdf(content: string, font: string, more: string[] = []) {
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    stream(content),
    font,
    ...more,
  ]);
}
const HELVETICA = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
/** Helvetica whose text comes from the ToUnicode CMap (object 6) holding these bfchar and bfrange lines. */
const withToUnicode = (content: string, cmap: string) =>
  pagePdf(content, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding /ToUnicode 6 0 R >>', [
    stream(`/CIDInit /ProcSet findresource begin 12 dict begin begincmap 1 begincodespacerange <00> <FF> endcodespacerange\n${cmap}\nendcmap end end`),
  ]);

async function linesPdf() {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([595, 842]);
  for (let line = 0; line < 20; line++)
    page.drawText(`${line}. The parties agree: {{text:tenant:rent}} clause ${line * 7}, café`, { x: 40, y: 810 - line * 14, size: 10, font });
  page.drawText('Several\nlines in\none call', { x: 300, y: 100, size: 10, font, lineHeight: 12 });
  return Buffer.from(await pdf.save());
}

const CORPUS: Record<string, () => Buffer | Promise<Buffer>> = {
  'one line of pdf-lib': () => makePdf(['Signet test document, version 2']),
  'lines of pdf-lib, with a tag': linesPdf,
  'WinAnsi codes where it is not Latin-1, and its space and hyphen at 160 and 173': () =>
    pagePdf('BT /F1 12 Tf 50 700 Td (Price \\200 5 \\226 \\223quoted\\224\\240co\\255op) Tj ET', HELVETICA),
  'a literal string with escapes, octal codes and a continued line': () =>
    pagePdf('BT /F1 12 Tf 50 700 Td (Oct\\141l \\(paren\\) con\\\ntinued\\051 tab\\there) Tj ET', HELVETICA),
  // Read as written, as pdf.js and Poppler do: a bare CR is the code 13, a CR LF the codes 13 and 10.
  'a literal string with a bare CR, a CR LF and an LF in it': () =>
    pagePdf(
      'BT /F1 24 Tf 50 700 Td (x\ry\r\nz\nw) Tj ET',
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [10 /L 13 /C] >> >>',
    ),
  'braces and letters by glyph names (/Differences)': () =>
    pagePdf(
      'BT /F1 12 Tf 50 700 Td (Rent \\001\\001text:tenant:rent\\002\\002 caf\\003 caf\\004) Tj ET',
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [1 /braceleft /braceright /uni00E9 /eacute] >> >>',
    ),
  'a ToUnicode CMap of one-byte codes, with bfchar and bfrange': () =>
    withToUnicode(
      'BT /F1 12 Tf 50 700 Td (ABCD EF) Tj ET',
      '1 beginbfchar <44> <0058> endbfchar 2 beginbfrange <41> <43> <0061> <45> <46> [<0070> <00710072>] endbfrange',
    ),
  'a ToUnicode CMap whose codes are written with two bytes, for one-byte codes': () =>
    withToUnicode('BT /F1 12 Tf 50 700 Td (AB) Tj ET', '1 beginbfrange <0041> <0042> <0062> endbfrange'),
  'a bfrange counting past the end of its last byte': () => withToUnicode('BT /F1 12 Tf 50 700 Td (AB) Tj ET', '1 beginbfrange <41> <42> <00FF> endbfrange'),
};

const HTML_PAGES: Record<string, string> = {
  'paragraphs with tags': `<p>This agreement is made between Ada Lovelace and Charles Babbage on 26 November 2026: {{signature:tenant}} {{date:tenant}}.</p><p style="font-family:serif">Rent {{text:tenant:rent}} each month, initials {{initials:tenant}}.</p>`,
  'styles, spacing and sizes': `<p>Mixed <b>bold</b> and <i>italic</i> and <span style="font-family:monospace">monospace code()</span>, with<b>out</b> spaces between<i>styles</i>.</p><p style="letter-spacing:3px">Spaced letters</p><p style="font-size:6px">tiny print</p>`,
  'tables and other scripts': `<table border=1><tr><th>Name</th><th>Amount</th></tr><tr><td>Ada</td><td>€1,234.56</td></tr></table><p>Ελληνικά, русский, Zürich Straße, naïve café, 日本語</p>`,
};

describe('one PDF content reader for search and for text tags, against pdf.js', function () {
  this.timeout(60_000);
  const corpus = new Map<string, Buffer>();

  before(async () => {
    ({ readText } = await import('../../src/pdf/readText.mjs'));
    ({ Unsupported } = await import('../../src/pdf/contentReader.mjs'));
    ({ readPage } = await import('../../src/pdf/removeTextTags.mjs'));
    for (const [name, make] of Object.entries(CORPUS)) corpus.set(name, await make());
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      for (const [name, html] of Object.entries(HTML_PAGES)) {
        await page.setContent(`<html><body style="font-family:sans-serif">${html}</body></html>`);
        corpus.set(`printed by Chromium: ${name}`, await page.pdf({ format: 'A4' }));
      }
    } finally {
      await browser.close();
    }
  });

  it('reads the same text as pdf.js in each PDF of the corpus, in both consumers', async () => {
    expect(corpus.size).to.equal(Object.keys(CORPUS).length + Object.keys(HTML_PAGES).length);
    for (const [name, bytes] of corpus) {
      const pages = await pdfJsPages(bytes);
      expect(words(pages.join('\n')), `${name}: pdf.js finds words`).to.not.deep.equal([]);
      expect(words(readText(bytes, 1_000_000)), `${name}: the text for search`).to.deep.equal(words(pages.join('\n')));
      expect(await tagReaderPages(bytes), `${name}: the glyphs of the tag remover`).to.deep.equal(pages.map(glyphs));
    }
  });

  it('reads a bare CR in a literal string as the code 13, as pdf.js does', async () => {
    const bytes = corpus.get('a literal string with a bare CR, a CR LF and an LF in it')!;
    expect((await pdfJsPages(bytes))[0].trim()).to.equal('xCyCLzLw');
    expect(readText(bytes, 1_000_000)).to.equal('xCyCLzLw');
  });

  it('leaves alone, in both, a ToUnicode CMap past its cap of entries, which pdf.js still reads', async () => {
    const ranges = Array.from({ length: 3 }, (_, index) => `<0${index + 1}0000> <0${index + 1}FFFE> <0041>`).join(' ');
    const bytes = withToUnicode('BT /F1 12 Tf 50 700 Td (A) Tj ET', `1 beginbfchar <41> <0062> endbfchar 3 beginbfrange ${ranges} endbfrange`);
    expect(words((await pdfJsPages(bytes)).join(''))).to.deep.equal(['b']);
    expect(() => readText(bytes, 1_000_000)).to.throw(Unsupported);
    expect(await tagReaderPages(bytes)).to.deep.equal([undefined]);
  });

  it('refuses the hostile PDFs of the upload checks, or finds them as empty as pdf.js does', async () => {
    expect(() => readText(makeObjectStreamBomb(), 1_000_000)).to.throw(Unsupported);
    expect(() => readText(makeDoubledPageTree(), 1_000_000)).to.throw(Unsupported);
    const blank = makeManyPagePdf(50);
    expect(readText(blank, 1_000_000).trim()).to.equal('');
    expect((await pdfJsPages(blank)).join('').trim()).to.equal('');
    expect(await tagReaderPages(blank)).to.deep.equal(Array.from({ length: 50 }, () => ''));
    const nested = pagePdf(`BT /F1 12 Tf 50 700 Td ${'['.repeat(1000)}(deep)${']'.repeat(1000)} TJ ET`, HELVETICA);
    expect(() => readText(nested, 1_000_000)).to.throw(Unsupported);
    const pdf = await PDFDocument.load(nested);
    expect(() => readPage(pdf, pdf.getPage(0))).to.throw(Unsupported);
  });
});
