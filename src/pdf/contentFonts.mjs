// @ts-check
// What a font says about the codes a page shows: the text of each code (its ToUnicode CMap, else its
// encoding and glyph names) and its width, as pdf.js reads them. One reading for the text extraction
// (readText.mjs) and the removal of text tags (removeTextTags.mjs). Fonts pdf.js reads but this does not
// (Type3, CID fonts without ToUnicode, symbolic fonts, CMaps that use others) throw Unsupported.
import { Lexer, Name, Operator, Unsupported } from './contentReader.mjs';

/** Code-to-text entries of one ToUnicode CMap at most. */
const MAX_CMAP_ENTRIES = 1 << 17;
/** Codes one range of a CMap or of a /W array covers at most. */
const MAX_RANGE = 0xffff;

/**
 * The objects a font is read from: `get` resolves a reference (and gives anything else back as it is);
 * dictionaries are plain objects keyed by name, streams `{ dict }` whose bytes `streamData` decodes.
 * @typedef {{ get: (value: any) => any, streamData: (stream: any) => string }} Objects
 */
/**
 * A font's codes: how many bytes each takes, the text of one (undefined when the font does not say),
 * its width in thousandths of the font size (undefined when the font has no widths) and its base font.
 * @typedef {{ codeBytes: number, unicode: (code: number) => string | undefined, width: (code: number) => number | undefined, baseFont: string }} Font
 */

const macRoman = new TextDecoder('macintosh');

/** WinAnsiEncoding's glyph names for codes 32 to 255 (ISO 32000-1 Annex D, as pdf.js lists them). */
const WIN_ANSI_NAMES = `space exclam quotedbl numbersign dollar percent ampersand quotesingle parenleft parenright asterisk plus comma
hyphen period slash zero one two three four five six seven eight nine colon semicolon less equal greater
question at A B C D E F G H I J K L M N O P Q R S T U V W X Y Z bracketleft backslash bracketright asciicircum
underscore grave a b c d e f g h i j k l m n o p q r s t u v w x y z braceleft bar braceright asciitilde
bullet Euro bullet quotesinglbase florin quotedblbase ellipsis dagger daggerdbl circumflex perthousand Scaron
guilsinglleft OE bullet Zcaron bullet bullet quoteleft quoteright quotedblleft quotedblright bullet endash
emdash tilde trademark scaron guilsinglright oe bullet zcaron Ydieresis space exclamdown cent sterling
currency yen brokenbar section dieresis copyright ordfeminine guillemotleft logicalnot hyphen registered
macron degree plusminus twosuperior threesuperior acute mu paragraph periodcentered cedilla onesuperior
ordmasculine guillemotright onequarter onehalf threequarters questiondown Agrave Aacute Acircumflex Atilde
Adieresis Aring AE Ccedilla Egrave Eacute Ecircumflex Edieresis Igrave Iacute Icircumflex Idieresis Eth Ntilde
Ograve Oacute Ocircumflex Otilde Odieresis multiply Oslash Ugrave Uacute Ucircumflex Udieresis Yacute Thorn
germandbls agrave aacute acircumflex atilde adieresis aring ae ccedilla egrave eacute ecircumflex edieresis
igrave iacute icircumflex idieresis eth ntilde ograve oacute ocircumflex otilde odieresis divide oslash ugrave
uacute ucircumflex udieresis yacute thorn ydieresis`.split(/\s+/);
/** WinAnsi's text for codes 0x7F to 0x9F, where it is not Latin-1 (the codes it leaves out are bullets, as in pdf.js). */
const WIN_ANSI_7F =
  '\u2022\u20ac\u2022\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u2022\u017d\u2022\u2022\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u2022\u017e\u0178';
/** @type {Map<string, string>} Glyph names: WinAnsi's (a name's first code wins: space is 32, not 160), and nbspace. */
const GLYPH_NAMES = new Map([['nbspace', '\u00a0']]);
WIN_ANSI_NAMES.forEach((name, index) => {
  const code = 32 + index;
  if (!GLYPH_NAMES.has(name)) GLYPH_NAMES.set(name, code >= 0x7f && code <= 0x9f ? WIN_ANSI_7F[code - 0x7f] : String.fromCharCode(code));
});
/**
 * WinAnsiEncoding read through its glyph names, as pdf.js reads it (160 is a space, 173 a hyphen). Not
 * TextDecoder('windows-1252'): Node 20's reads 0x80 to 0x9F as Latin-1's control characters.
 * @param {number} code
 */
const winAnsi = (code) => (code < 32 ? String.fromCharCode(code) : GLYPH_NAMES.get(WIN_ANSI_NAMES[code - 32]));

/** The text of a glyph name (uniXXXX and uXXXX[XX] included), undefined for one it does not know. @param {string} glyph */
export function unicodeOfGlyphName(glyph) {
  const known = GLYPH_NAMES.get(glyph);
  if (known !== undefined) return known;
  const hex = /^uni([0-9A-F]{4})$/.exec(glyph) ?? /^u([0-9A-F]{4,6})$/.exec(glyph);
  const codePoint = hex ? parseInt(hex[1], 16) : NaN;
  return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : undefined;
}

const STANDARD_FONTS = /^(Helvetica|Arial|Times|Courier)/;
/** StandardEncoding: ASCII but for two quotes; the rest of it is left to pdf.js. @param {number} code */
function standardEncoding(code) {
  if (code === 0x27) return '\u2019';
  if (code === 0x60) return '\u2018';
  if (code >= 0x20 && code < 0x7f) return String.fromCharCode(code);
  return undefined;
}

/** UTF-16BE bytes (latin1) as text. @param {string} bytes */
const utf16 = (bytes) =>
  Buffer.from(bytes.length % 2 ? `\0${bytes}` : bytes, 'latin1')
    .swap16()
    .toString('utf16le');

/**
 * A ToUnicode CMap: the text of each code, by its value (as pdf.js keys them), and the longest code's bytes.
 * @param {string} data
 */
export function parseToUnicode(data) {
  /** @type {Map<number, string>} */
  const map = new Map();
  let codeBytes = 0;
  const lexer = new Lexer(data);
  /** @type {any[]} */
  const operands = [];
  const code = (/** @type {string} */ bytes) => {
    if (typeof bytes !== 'string') throw new Unsupported('cmap code');
    codeBytes = Math.max(codeBytes, bytes.length);
    let value = 0;
    for (let i = 0; i < bytes.length; i++) value = value * 256 + bytes.charCodeAt(i);
    return value;
  };
  for (let item = lexer.next(); item !== undefined; item = lexer.next()) {
    if (!(item instanceof Operator)) {
      operands.push(item);
      continue;
    }
    if (item.op === 'usecmap') throw new Unsupported('usecmap');
    if (item.op === 'endbfchar') {
      for (let i = 0; i + 1 < operands.length; i += 2) if (typeof operands[i + 1] === 'string') map.set(code(operands[i]), utf16(operands[i + 1]));
    } else if (item.op === 'endbfrange') {
      for (let i = 0; i + 2 < operands.length; i += 3) {
        const [low, high, target] = [code(operands[i]), code(operands[i + 1]), operands[i + 2]];
        if (high < low || high - low > MAX_RANGE || map.size + high - low > MAX_CMAP_ENTRIES) throw new Unsupported('cmap range');
        // A string target counts up in its last UTF-16 unit (pdf.js counts up its last byte, carrying into the one before).
        const text = typeof target === 'string' ? utf16(target) : '';
        for (let c = low; c <= high; c++) {
          if (Array.isArray(target)) {
            if (typeof target[c - low] === 'string') map.set(c, utf16(target[c - low]));
          } else if (text) map.set(c, text.slice(0, -1) + String.fromCharCode(text.charCodeAt(text.length - 1) + c - low));
        }
      }
    }
    if (item.op !== ']') operands.length = 0;
    if (map.size > MAX_CMAP_ENTRIES) throw new Unsupported('cmap size');
  }
  return { map, codeBytes };
}

/**
 * The widths of a CID font's /W array, by CID. @param {Objects} doc @param {any} list
 * @returns {Map<number, number>}
 */
function cidWidths(doc, list) {
  const widths = new Map();
  const w = doc.get(list) ?? [];
  if (!Array.isArray(w)) return widths;
  for (let i = 0; i < w.length;) {
    const first = doc.get(w[i]);
    const next = doc.get(w[i + 1]);
    if (typeof first !== 'number') throw new Unsupported('W');
    if (Array.isArray(next)) {
      if (next.length > MAX_RANGE) throw new Unsupported('W range');
      next.forEach((width, j) => widths.set(first + j, doc.get(width)));
      i += 2;
    } else {
      const width = doc.get(w[i + 2]);
      if (typeof next !== 'number' || next - first > MAX_RANGE) throw new Unsupported('W range');
      for (let c = first; c <= next; c++) widths.set(c, width);
      i += 3;
    }
  }
  return widths;
}

/** @param {Objects} doc @param {any} ref @returns {Font} */
export function readFont(doc, ref) {
  const font = doc.get(ref);
  if (!font || typeof font !== 'object') throw new Unsupported('font');
  const subtype = doc.get(font.Subtype)?.name;
  const toUnicodeStream = doc.get(font.ToUnicode);
  const toUnicode = toUnicodeStream?.dict ? parseToUnicode(doc.streamData(toUnicodeStream)) : undefined;
  const baseFont = doc.get(font.BaseFont)?.name ?? '';
  if (subtype === 'Type0') {
    const encoding = doc.get(font.Encoding);
    if (!(encoding instanceof Name) || encoding.name !== 'Identity-H' || !toUnicode) throw new Unsupported('CID font');
    const descendant = doc.get(doc.get(font.DescendantFonts)?.[0]);
    const widths = cidWidths(doc, descendant?.W);
    const defaultWidth = doc.get(descendant?.DW) ?? 1000;
    return {
      codeBytes: 2,
      baseFont,
      unicode: (code) => toUnicode.map.get(code) ?? String.fromCharCode(code), // as pdf.js does (.notdef is 0, a NUL)
      width: (code) => widths.get(code) ?? defaultWidth,
    };
  }
  if (subtype !== 'Type1' && subtype !== 'TrueType' && subtype !== 'MMType1') throw new Unsupported(`font ${subtype}`);
  const descriptor = doc.get(font.FontDescriptor);
  const embedded = Boolean(descriptor && (descriptor.FontFile || descriptor.FontFile2 || descriptor.FontFile3));
  const symbolic = Boolean((doc.get(descriptor?.Flags) ?? 0) & 4);
  /** @type {(code: number) => string | undefined} */
  let byEncoding = () => undefined;
  const encoding = doc.get(font.Encoding);
  const base = encoding instanceof Name ? encoding.name : doc.get(encoding?.BaseEncoding)?.name;
  if (base === 'WinAnsiEncoding') byEncoding = winAnsi;
  else if (base === 'MacRomanEncoding') byEncoding = (code) => macRoman.decode(Uint8Array.of(code));
  else if (base === 'StandardEncoding' || (base === undefined && !symbolic && !embedded && STANDARD_FONTS.test(baseFont))) byEncoding = standardEncoding;
  else if (!toUnicode) throw new Unsupported('simple font encoding');
  /** @type {Map<number, string>} */
  const differences = new Map();
  const list = doc.get(encoding?.Differences);
  if (Array.isArray(list)) {
    let code = 0;
    for (const entry of list.map((e) => doc.get(e))) {
      if (typeof entry === 'number') code = entry;
      else if (entry instanceof Name) differences.set(code++, entry.name);
    }
  }
  if (symbolic && !toUnicode) throw new Unsupported('symbolic font');
  const widthList = doc.get(font.Widths);
  const firstChar = doc.get(font.FirstChar) ?? 0;
  // As pdf.js: a code that /Widths leaves out is MissingWidth wide, 0 by default; without /Widths, the font does not say.
  const missingWidth = doc.get(descriptor?.MissingWidth) ?? 0;
  return {
    codeBytes: 1,
    baseFont,
    unicode: (code) => {
      const mapped = toUnicode?.map.get(code);
      if (mapped !== undefined) return mapped;
      const glyph = differences.get(code);
      const text = glyph !== undefined ? unicodeOfGlyphName(glyph) : byEncoding(code);
      return text === '\ufffd' ? undefined : text;
    },
    width: (code) => {
      if (!Array.isArray(widthList)) return undefined;
      const width = doc.get(widthList[code - firstChar]);
      return typeof width === 'number' ? width : typeof missingWidth === 'number' ? missingWidth : 0;
    },
  };
}
