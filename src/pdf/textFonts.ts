import fs from 'node:fs';
import path from 'node:path';
import fontkit from '@pdf-lib/fontkit';
import { type Color, type PDFDocument, type PDFFont, type PDFPage, StandardFonts } from 'pdf-lib';
import { codePointName, fontIndexFor, TEXT_FONT_FILES } from './drawableText';

// Text in a sealed PDF: a value the standard PDF fonts can encode whole (WinAnsi: English and most
// Western European text) is drawn in them, as it always was, at no cost in the file. Any other value is
// drawn in embedded fonts, subsets holding only the glyphs used, each run of it in the font that has its
// characters as drawableText.ts assigns them (the standard fonts had drawn those characters as '?').
// Every font is embedded only for the value that needs it: DejaVu is hinted, so even a small subset of
// it costs ~10 KB, which a plain English request does not pay.

export type Face = 'regular' | 'bold' | 'italic';

const STANDARD_FONTS: Record<Face, StandardFonts> = {
  regular: StandardFonts.Helvetica,
  bold: StandardFonts.HelveticaBold,
  italic: StandardFonts.TimesRomanItalic,
};
const DEJAVU = path.dirname(require.resolve('dejavu-fonts-ttf/package.json'));
/** The embedded font each face prefers; a character it lacks is drawn in the font drawableText.ts assigns it. */
const FACE_FILES: Record<Face, string> = {
  regular: TEXT_FONT_FILES[0],
  bold: path.join(DEJAVU, 'ttf/DejaVuSans-Bold.ttf'),
  italic: path.join(DEJAVU, 'ttf/DejaVuSerif-Italic.ttf'), // typed signatures and initials
};

// Read once per thread: a font file's bytes, and the characters of each face's font.
const bytesOf = new Map<string, Buffer>();
const readFont = (file: string) => bytesOf.get(file) ?? bytesOf.set(file, fs.readFileSync(file)).get(file)!;
const faceCharacters = new Map<Face, Set<number>>();
function charactersOf(face: Face): Set<number> {
  if (!faceCharacters.has(face)) {
    const font = fontkit.create(readFont(FACE_FILES[face]));
    faceCharacters.set(face, new Set(font.characterSet.filter((codePoint) => font.hasGlyphForCodePoint(codePoint))));
  }
  return faceCharacters.get(face)!;
}

interface Run {
  file: string;
  text: string;
}

/**
 * The text as runs each drawn in one font file; a character no font may show is written out as [U+XXXX],
 * never dropped. Each character's font depends on it alone, so a part of a value needs no other font.
 */
function runsOf(text: string, face: Face): Run[] {
  const runs: Run[] = [];
  const add = (file: string, part: string) => {
    const last = runs.at(-1);
    if (last?.file === file) last.text += part;
    else runs.push({ file, text: part });
  };
  for (const character of text) {
    const index = fontIndexFor(character);
    if (index === undefined) add(FACE_FILES[face], `[${codePointName(character)}]`);
    else add(charactersOf(face).has(character.codePointAt(0)!) ? FACE_FILES[face] : TEXT_FONT_FILES[index], character);
  }
  return runs;
}

/** One value's text in one face: its parts (lines, shortened forms) are measured and drawn in the fonts chosen for the whole. */
export interface StyledText {
  width(part: string, size: number): number;
  heightAtSize(size: number, options?: { descender?: boolean }): number;
  draw(page: PDFPage, part: string, options: { x: number; y: number; size: number; color?: Color }): void;
}

// fontkit subsets a font by copying each glyph's data as stored, and WOFF2 (the format of the CJK slices)
// stores glyphs transformed: its subsets drew nothing. Their glyphs are written anew from their outlines.
interface SubsetInternals {
  font: { getGlyph(id: number): { path: { commands: unknown[] }; advanceWidth: number; _getMetrics(): { leftBearing: number } } };
  glyphEncoder: { encodeSimple(path: unknown, instructions: number[]): Buffer };
  glyf: Buffer[];
  loca: { offsets: number[] };
  hmtx: { metrics: { advance: number; bearing: number }[] };
  offset: number;
  _addGlyph(id: number): number;
}

function addGlyphByOutline(this: SubsetInternals, id: number): number {
  const glyph = this.font.getGlyph(id);
  const data = glyph.path.commands.length > 0 ? this.glyphEncoder.encodeSimple(glyph.path, []) : Buffer.alloc(0);
  this.glyf.push(data);
  this.loca.offsets.push(this.offset);
  this.hmtx.metrics.push({ advance: glyph.advanceWidth, bearing: glyph._getMetrics().leftBearing });
  this.offset += data.length;
  return this.glyf.length - 1;
}

const WOFF2 = Buffer.from('wOF2', 'latin1');

/** fontkit as pdf-lib calls it, subsetting WOFF2 fonts by their glyphs' outlines. */
const fontkitForPdfLib: Parameters<PDFDocument['registerFontkit']>[0] = {
  create(bytes: Uint8Array, postscriptName?: string) {
    const font = fontkit.create(bytes, postscriptName);
    if (!Buffer.from(bytes.buffer, bytes.byteOffset, 4).equals(WOFF2)) return font;
    const createSubset = font.createSubset.bind(font);
    font.createSubset = () => Object.assign(createSubset(), { _addGlyph: addGlyphByOutline });
    return font;
  },
};

const forDocument = new WeakMap<PDFDocument, TextFonts>();

/** The fonts of one PDF, each embedded once, when a value first needs it. */
export class TextFonts {
  private readonly embedded = new Map<string, Promise<PDFFont>>();

  private constructor(private readonly pdf: PDFDocument) {
    pdf.registerFontkit(fontkitForPdfLib);
  }

  /** The one TextFonts of a PDF, so that everything drawn on it shares one subset of each font. */
  static of(pdf: PDFDocument): TextFonts {
    const existing = forDocument.get(pdf);
    if (existing) return existing;
    const created = new TextFonts(pdf);
    forDocument.set(pdf, created);
    return created;
  }

  private font(file: string | StandardFonts): Promise<PDFFont> {
    if (!this.embedded.has(file)) {
      const standard = Object.values(STANDARD_FONTS).includes(file as StandardFonts);
      this.embedded.set(file, standard ? this.pdf.embedFont(file) : this.pdf.embedFont(readFont(file), { subset: true }));
    }
    return this.embedded.get(file)!;
  }

  /** The fonts for a value in a face, embedded: the face's standard font if it encodes all of the value, else embedded fonts run by run. */
  async style(value: string, face: Face): Promise<StyledText> {
    const standard = await this.font(STANDARD_FONTS[face]);
    const encodable = new Set(standard.getCharacterSet());
    if (Array.from(value).every((character) => encodable.has(character.codePointAt(0)!) && fontIndexFor(character) !== undefined)) {
      return {
        width: (part, size) => standard.widthOfTextAtSize(part, size),
        heightAtSize: (size, options) => standard.heightAtSize(size, options),
        draw: (page, part, options) => page.drawText(part, { ...options, font: standard }),
      };
    }
    const fonts = new Map<string, PDFFont>();
    for (const file of new Set([FACE_FILES[face], ...runsOf(value, face).map((run) => run.file)])) fonts.set(file, await this.font(file));
    const runs = (part: string) => runsOf(part, face).map((run) => ({ text: run.text, font: fonts.get(run.file)! }));
    return {
      width: (part, size) => runs(part).reduce((sum, run) => sum + run.font.widthOfTextAtSize(run.text, size), 0),
      heightAtSize: (size, options) => fonts.get(FACE_FILES[face])!.heightAtSize(size, options),
      draw(page, part, { x, ...options }) {
        let at = x;
        for (const run of runs(part)) {
          page.drawText(run.text, { ...options, x: at, font: run.font });
          at += run.font.widthOfTextAtSize(run.text, options.size);
        }
      },
    };
  }
}
