import { PDFDocument, PDFFont, PDFImage, PDFPage, StandardFonts, rgb } from 'pdf-lib';

export const A4: [number, number] = [595, 842];
const MARGIN = 50;
const LINE_GAP = 1.4;
const MAX_LINES_PER_VALUE = 6;

/** Standard fonts encode only WinAnsi; anything else (and control characters) becomes '?' rather than throwing. */
export function encodableText(text: string, font: PDFFont): string {
  const supported = new Set(font.getCharacterSet());
  return Array.from(text.replace(/[\r\n\t]+/g, ' '))
    .map((character) => (supported.has(character.codePointAt(0)!) ? character : '?'))
    .join('');
}

/** Splits text into lines no wider than width: at spaces where it can, mid-word where a word is too long alone. */
export function wrapText(text: string, font: PDFFont, size: number, width: number, maxLines = MAX_LINES_PER_VALUE): string[] {
  const fits = (line: string) => font.widthOfTextAtSize(line, size) <= width;
  const lines: string[] = [];
  let line = '';
  for (const word of encodableText(text, font).split(' ')) {
    const candidate = line ? `${line} ${word}` : word;
    if (fits(candidate)) {
      line = candidate;
      continue;
    }
    if (line) lines.push(line);
    line = '';
    for (const character of word) {
      if (!fits(line + character)) {
        lines.push(line);
        line = '';
      }
      line += character;
    }
  }
  lines.push(line);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  let last = kept[maxLines - 1];
  while (last && !fits(`${last}...`)) last = last.slice(0, -1);
  kept[maxLines - 1] = `${last}...`;
  return kept;
}

/** Writes lines top to bottom on A4 pages, starting a new page (with the same heading) when one fills up. */
export class PageWriter {
  private page!: PDFPage;
  private y = 0;

  private constructor(
    private readonly pdf: PDFDocument,
    private readonly heading: string,
    readonly regular: PDFFont,
    readonly bold: PDFFont,
  ) {}

  static async start(pdf: PDFDocument, heading: string): Promise<PageWriter> {
    const writer = new PageWriter(pdf, heading, await pdf.embedFont(StandardFonts.Helvetica), await pdf.embedFont(StandardFonts.HelveticaBold));
    writer.newPage();
    return writer;
  }

  get width() {
    return A4[0] - 2 * MARGIN;
  }

  newPage() {
    this.page = this.pdf.addPage(A4);
    this.y = A4[1] - MARGIN;
    this.line(this.heading, { size: 18, font: this.bold });
    this.space(8);
  }

  /** Makes sure the next block of the given height stays on one page. */
  keepTogether(height: number) {
    if (this.y - height < MARGIN) this.newPage();
  }

  space(height: number) {
    this.y -= height;
  }

  line(text: string, options: { size?: number; font?: PDFFont; indent?: number } = {}) {
    const size = options.size ?? 10;
    const font = options.font ?? this.regular;
    const indent = options.indent ?? 0;
    for (const part of wrapText(text, font, size, this.width - indent)) {
      this.keepTogether(size * LINE_GAP);
      this.y -= size * LINE_GAP;
      this.page.drawText(part, { x: MARGIN + indent, y: this.y, size, font, color: rgb(0, 0, 0) });
    }
  }

  /** A label in bold followed by its value, the value wrapping under itself. */
  field(label: string, value: string, size = 9) {
    const labelWidth = 90;
    const lines = wrapText(value || '-', this.regular, size, this.width - labelWidth);
    lines.forEach((part, index) => {
      this.keepTogether(size * LINE_GAP);
      this.y -= size * LINE_GAP;
      if (index === 0) this.page.drawText(encodableText(label, this.bold), { x: MARGIN, y: this.y, size, font: this.bold });
      this.page.drawText(part, { x: MARGIN + labelWidth, y: this.y, size, font: this.regular });
    });
  }

  image(image: PDFImage, maxWidth: number, maxHeight: number) {
    const scale = Math.min(maxWidth / image.width, maxHeight / image.height, 1);
    const height = image.height * scale;
    this.keepTogether(height + 4);
    this.y -= height + 4;
    this.page.drawImage(image, { x: MARGIN, y: this.y, width: image.width * scale, height });
  }
}
