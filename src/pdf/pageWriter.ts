import { PDFDocument, PDFImage, PDFPage, rgb } from 'pdf-lib';
import { type Face, TextFonts } from './textFonts';

export const A4: [number, number] = [595, 842];
const MARGIN = 50;
const LINE_GAP = 1.4;
const MAX_LINES_PER_VALUE = 6;

/** Splits text into lines no wider than width: at spaces where it can, mid-word where a word is too long alone. */
export function wrapText(text: string, fits: (line: string) => boolean, maxLines = MAX_LINES_PER_VALUE): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
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
  let last = Array.from(kept[maxLines - 1]);
  while (last.length && !fits(`${last.join('')}...`)) last = last.slice(0, -1);
  kept[maxLines - 1] = `${last.join('')}...`;
  return kept;
}

/** Writes lines top to bottom on A4 pages, starting a new page (with the same heading) when one fills up. */
export class PageWriter {
  private page!: PDFPage;
  private y = 0;

  private constructor(
    private readonly pdf: PDFDocument,
    private readonly heading: string,
    readonly fonts: TextFonts,
  ) {}

  static async start(pdf: PDFDocument, heading: string): Promise<PageWriter> {
    const writer = new PageWriter(pdf, heading, TextFonts.of(pdf));
    await writer.newPage();
    return writer;
  }

  get width() {
    return A4[0] - 2 * MARGIN;
  }

  async newPage() {
    this.page = this.pdf.addPage(A4);
    this.y = A4[1] - MARGIN;
    await this.line(this.heading, { size: 18, face: 'bold' });
    this.space(8);
  }

  /** Makes sure the next block of the given height stays on one page. */
  async keepTogether(height: number) {
    if (this.y - height < MARGIN) await this.newPage();
  }

  space(height: number) {
    this.y -= height;
  }

  async line(text: string, options: { size?: number; face?: Face; indent?: number } = {}) {
    const size = options.size ?? 10;
    const face = options.face ?? 'regular';
    const indent = options.indent ?? 0;
    const style = await this.fonts.style(text, face);
    for (const part of wrapText(text, (line) => style.width(line, size) <= this.width - indent)) {
      await this.keepTogether(size * LINE_GAP);
      this.y -= size * LINE_GAP;
      style.draw(this.page, part, { x: MARGIN + indent, y: this.y, size, color: rgb(0, 0, 0) });
    }
  }

  /** A label in bold followed by its value, the value wrapping under itself. */
  async field(label: string, value: string, size = 9) {
    const labelWidth = 90;
    const labelStyle = await this.fonts.style(label, 'bold');
    const valueStyle = await this.fonts.style(value || '-', 'regular');
    const lines = wrapText(value || '-', (line) => valueStyle.width(line, size) <= this.width - labelWidth);
    for (const [index, part] of lines.entries()) {
      await this.keepTogether(size * LINE_GAP);
      this.y -= size * LINE_GAP;
      if (index === 0) labelStyle.draw(this.page, label, { x: MARGIN, y: this.y, size });
      valueStyle.draw(this.page, part, { x: MARGIN + labelWidth, y: this.y, size });
    }
  }

  async image(image: PDFImage, maxWidth: number, maxHeight: number) {
    const scale = Math.min(maxWidth / image.width, maxHeight / image.height, 1);
    const height = image.height * scale;
    await this.keepTogether(height + 4);
    this.y -= height + 4;
    this.page.drawImage(image, { x: MARGIN, y: this.y, width: image.width * scale, height });
  }
}
