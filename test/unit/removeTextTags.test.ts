import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import type { Config } from '../../src/config';
import { createTextTagFinder, type TextTagFinder } from '../../src/pdf/textTags';

// Text tags are taken out of a template's PDF: their glyphs deleted from the page's content stream, the rest
// of the line left exactly where it was; what cannot be rewritten is covered in white, and said so.

interface Word {
  text: string;
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}

describe('removing text tags from a PDF (src/pdf/removeTextTags.mjs, in the PDF pool)', function () {
  this.timeout(60_000);
  let finder: TextTagFinder;
  let dir: string;

  before(() => {
    finder = createTextTagFinder({ PDF_POOL_SIZE: 1, PDF_TIMEOUT_MS: 20_000, PDF_MAX_MEMORY_MB: 256 } as Config);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-tags-'));
  });
  after(async () => {
    await finder.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Every word poppler's pdftotext reads, with its box. */
  function wordsOf(pdf: Uint8Array): Word[] {
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
    fs.writeFileSync(file, pdf);
    const html = execFileSync('pdftotext', ['-bbox', file, '-']).toString();
    return [...html.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((match) => ({
      text: match[5],
      xMin: Number(match[1]),
      yMin: Number(match[2]),
      xMax: Number(match[3]),
      yMax: Number(match[4]),
    }));
  }

  /** The PDF without its tags: no word of it has a brace, and every other word is where it was, to 0.01 point. */
  async function expectTagsRemoved(original: Uint8Array, tagCount: number) {
    const removal = await finder.removeTags(original);
    expect(removal.fields).to.have.length(tagCount);
    expect(removal.coveredTags).to.deep.equal([]);
    const before = wordsOf(original);
    const after = wordsOf(removal.pdf);
    expect(before.filter((word) => word.text.includes('{{'))).to.have.length.at.least(1);
    expect(after.filter((word) => /[{}]/.test(word.text))).to.deep.equal([]);
    const kept = before.filter((word) => !/[{}]/.test(word.text));
    expect(after.map((word) => word.text).sort()).to.deep.equal(kept.map((word) => word.text).sort());
    for (const word of kept) {
      const moved = after.find((candidate) => candidate.text === word.text && Math.abs(candidate.yMin - word.yMin) < 0.5)!;
      expect(moved, word.text).to.not.equal(undefined);
      expect(Math.abs(moved.xMin - word.xMin), `${word.text} stays in place`).to.be.below(0.01);
      expect(Math.abs(moved.xMax - word.xMax), `${word.text} stays in place`).to.be.below(0.01);
    }
    return removal;
  }

  /** A one-page PDF whose content stream is `content`, with Helvetica as /F1. */
  async function pdfWithContent(content: string, formContent?: string) {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([595, 842]);
    page.node.setFontDictionary(PDFName.of('F1'), font.ref);
    if (formContent) {
      const form = pdf.context.flateStream(formContent, { Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 595, 842], Resources: { Font: { F1: font.ref } } });
      page.node.setXObject(PDFName.of('X1'), pdf.context.register(form));
    }
    page.node.set(PDFName.of('Contents'), pdf.context.register(pdf.context.flateStream(content)));
    return pdf.save({ useObjectStreams: false });
  }

  it('text drawn by pdf-lib (a standard font without /Widths): the tags go, the words around them stay', async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([595, 842]);
    page.drawText('Monthly rent: {{text:tenant:rent}} per month', { x: 60, y: 600, size: 12, font });
    page.drawText('{{signature:tenant}}', { x: 60, y: 400, size: 16, font });
    page.drawText('Sign {{initials:tenant}} {{date:tenant}} here', { x: 300, y: 400, size: 10, font });
    await expectTagsRemoved(await pdf.save(), 4);
  });

  it('a tag split over several Tj and TJ operators, with kerning, character and word spacing, scaling and the quote operators', async () => {
    const content = [
      'BT /F1 12 Tf 1 0 0 1 60 700 Tm (Rent: {{te) Tj (xt:ten) Tj [(ant:r) -20 (ent}}) 10 ( per month)] TJ ET',
      'BT /F1 11 Tf 0.5 Tc 3 Tw 90 Tz 14 TL 60 650 Td (Then {{signature:tenant}} and more) Tj',
      "({{date:tenant}} on the next line) '",
      '2 0.25 (Last {{initials:tenant}} line) " ET',
      'q 1 0 0 1 0 -100 cm BT /F1 12 Tf 60 500 Td [({{checkbox:) 50 (tenant:ok}}) ( moved by cm)] TJ ET Q',
    ].join('\n');
    await expectTagsRemoved(await pdfWithContent(content), 5);
  });

  it('a simple font with /Widths and a /Differences encoding: braces drawn by codes 1 and 2', async () => {
    const pdf = await PDFDocument.create();
    const helvetica = await pdf.embedFont(StandardFonts.Helvetica);
    const widths = Array.from({ length: 126 }, (_, index) => {
      const code = index + 1;
      if (code === 1 || code === 2) return helvetica.widthOfTextAtSize(code === 1 ? '{' : '}', 1000);
      return code >= 32 ? helvetica.widthOfTextAtSize(String.fromCharCode(code), 1000) : 0;
    });
    const font = pdf.context.obj({
      Type: 'Font',
      Subtype: 'Type1',
      BaseFont: 'Helvetica',
      FirstChar: 1,
      LastChar: 126,
      Widths: widths,
      Encoding: { Type: 'Encoding', BaseEncoding: 'WinAnsiEncoding', Differences: [1, PDFName.of('braceleft'), PDFName.of('braceright')] },
    });
    const page = pdf.addPage([595, 842]);
    page.node.setFontDictionary(PDFName.of('F2'), pdf.context.register(font));
    const content = 'BT /F2 12 Tf 60 700 Td (Rent \\001\\001text:tenant:rent\\002\\002 each month) Tj ET';
    page.node.set(PDFName.of('Contents'), pdf.context.register(pdf.context.flateStream(content)));
    await expectTagsRemoved(await pdf.save({ useObjectStreams: false }), 1);
  });

  it('a PDF printed by Chromium (composite fonts, Identity-H with a ToUnicode map)', async function () {
    const html = path.join(dir, 'lease.html');
    fs.writeFileSync(
      html,
      `<body style="font: 14px 'DejaVu Serif'"><p>Tenant signs here: {{signature:tenant}} and dates {{date:tenant}} today.</p>
       <p style="font-family: 'Liberation Sans'">Rent {{text:tenant:rent}} each month, initials {{initials:tenant}} please.</p></body>`,
    );
    const printed = path.join(dir, 'lease.pdf');
    execFileSync(
      '/usr/bin/chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-pdf-header-footer',
        `--print-to-pdf=${printed}`,
        `file://${html}`,
      ],
      { timeout: 45_000, stdio: 'ignore' },
    );
    expect(execFileSync('pdffonts', [printed]).toString()).to.contain('Identity-H');
    await expectTagsRemoved(fs.readFileSync(printed), 4);
  });

  it('a tag drawn inside a form XObject is covered in white instead, and named', async () => {
    const content = 'BT /F1 12 Tf 60 700 Td (Rent {{text:tenant:rent}} monthly) Tj ET /X1 Do';
    const removal = await finder.removeTags(await pdfWithContent(content, 'BT /F1 12 Tf 60 600 Td ({{signature:tenant}}) Tj ET'));
    expect(removal.fields.map((field) => field.tag)).to.deep.equal(['{{text:tenant:rent}}', '{{signature:tenant}}']);
    expect(removal.coveredTags).to.deep.equal(['{{signature:tenant}} on page 1']);
    const words = wordsOf(removal.pdf).map((word) => word.text);
    expect(words).to.not.include('{{text:tenant:rent}}');
    expect(words).to.include('{{signature:tenant}}'); // painted over, still in the text layer
  });
});
