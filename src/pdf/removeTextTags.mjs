// @ts-check
// Takes the text tags that placed a template's fields ({{signature:tenant}} …) out of a PDF: the glyphs of
// each tag are deleted from its page's content stream, and the text after them on the same line is moved
// back to where it was with a TJ adjustment, so nothing else on the page shifts. A tag that cannot be
// rewritten safely is painted over in white instead (its text then stays in the file's text layer):
//   * text drawn inside a form XObject or an annotation, not in the page's own content stream;
//   * Type3 fonts, vertical writing, composite fonts with an encoding other than Identity-H or without a
//     ToUnicode map, simple fonts without /Widths that are not one of the standard 14;
//   * a page whose content is over MAX_CONTENT_BYTES decoded, or that this reader cannot follow (a filter
//     pdf-lib cannot decode, unbalanced arrays), and a tag whose glyphs are not found where pdf.js measured it.
// Run in the PDF pool's child (findTextTags.mjs), never in the api process. Plain JavaScript, as its caller.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { PDFDocument, PDFArray, PDFDict, PDFName, PDFNumber, PDFRawStream, StandardFontEmbedder, StandardFonts, decodePDFRawStream, rgb } = require('pdf-lib');
const { Encodings } = require('@pdf-lib/standard-fonts');

/** @typedef {import('pdf-lib').PDFObject} PDFObject */
/** @typedef {import('pdf-lib').PDFPage} Page */
/**
 * An operand of a content stream: a number, boolean or null; a name, a string's bytes or a keyword found inside
 * an array or dictionary; an array; a dictionary (keyed by its names).
 * @typedef {number | boolean | null | { name: string } | { string: Uint8Array } | { keyword: string } | OperandArray | OperandDict} Operand
 */
/** @typedef {Operand[]} OperandArray (named apart: a typedef cannot hold a recursive array type inline) */
/** @typedef {{ [name: string]: Operand }} OperandDict */
/** @typedef {{ operator: string, operands: Operand[], start: number, end: number }} Operation */
/** @typedef {[number, number, number, number, number, number]} Matrix */
/**
 * How to read the strings shown in one font: the length of the code at `at`, what a code reads as, its width
 * (glyph space, thousandths of the size); undefined where the font does not say.
 * @typedef {{ codeLength: (bytes: Uint8Array, at: number) => number, unicodeOf: (bytes: Uint8Array) => string | undefined, widthOf: (bytes: Uint8Array) => number | undefined }} FontReader
 */
/** @typedef {{ ctm: Matrix, font: FontReader | undefined, size: number, charSpacing: number, wordSpacing: number, scale: number, leading: number, rise: number }} TextState */
/**
 * A glyph shown on the page: its operation, string (index within a TJ array, -1 for the operation's one string)
 * and [from, to) bytes in it; its text and width, whether it is a space (word spacing applies), its origin in
 * user space and the text state it was shown in.
 * @typedef {{ operationIndex: number, stringIndex: number, from: number, to: number, text: string | undefined, width: number | undefined, isSpace: boolean, x: number, y: number, state: TextState }} Glyph
 */
/** @typedef {{ x: number, y: number, width: number, height: number }} Box */
/** @typedef {Box & { page: number, tag: string }} Tag a tag findTextTags.mjs found: its 1-based page, its text, its box */

/** Pages with more content than this (decoded) keep it as it is, and their tags are covered. */
export const MAX_CONTENT_BYTES = 8 * 1024 * 1024;
const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const DELIMITERS = new Set([...'()<>[]{}/%'].map((character) => character.charCodeAt(0)));

// --- Reading a content stream: tokens, then operations with their operands and where they stand. ---

/** @param {number} byte */
const isRegular = (byte) => !WHITESPACE.has(byte) && !DELIMITERS.has(byte);

/** @typedef {{ value: { string: Uint8Array }, end: number }} StringRead */

/**
 * @param {string} source
 * @param {number} at
 * @returns {StringRead}
 */
function readLiteralString(source, at) {
  /** @type {number[]} */
  const bytes = [];
  let depth = 1;
  let i = at + 1;
  while (i < source.length) {
    const byte = source.charCodeAt(i);
    if (byte === 0x5c) {
      const next = source[i + 1];
      const simple = /** @type {Partial<Record<string, number>>} */ ({ n: 10, r: 13, t: 9, b: 8, f: 12, '(': 40, ')': 41, '\\': 92 })[next];
      if (simple !== undefined) {
        bytes.push(simple);
        i += 2;
      } else if (/[0-7]/.test(next ?? '')) {
        const [digits] = /** @type {RegExpExecArray} */ (/^[0-7]{1,3}/.exec(source.slice(i + 1, i + 4))); // next is one
        bytes.push(parseInt(digits, 8) & 0xff);
        i += 1 + digits.length;
      } else if (next === '\r' || next === '\n') {
        i += source.slice(i + 1, i + 3) === '\r\n' ? 3 : 2;
      } else {
        i += 1; // an unknown escape: the backslash is dropped
      }
      continue;
    }
    if (byte === 0x28) depth++;
    if (byte === 0x29 && --depth === 0) return { value: { string: Uint8Array.from(bytes) }, end: i + 1 };
    if (byte === 0x0d) {
      bytes.push(0x0a);
      i += source[i + 1] === '\n' ? 2 : 1;
      continue;
    }
    bytes.push(byte);
    i++;
  }
  throw new Error('unterminated string');
}

/**
 * @param {string} source
 * @param {number} at
 * @returns {StringRead}
 */
function readHexString(source, at) {
  const close = source.indexOf('>', at);
  if (close === -1) throw new Error('unterminated hex string');
  let digits = source.slice(at + 1, close).replace(/[\s\0]/g, '');
  if (!/^[0-9a-fA-F]*$/.test(digits)) throw new Error('bad hex string');
  if (digits.length % 2) digits += '0';
  return { value: { string: Uint8Array.from(Buffer.from(digits, 'hex')) }, end: close + 1 };
}

/**
 * The end of an inline image's data: the EI that follows whitespace and is followed by whitespace.
 * @param {string} source
 * @param {number} at
 */
function endOfInlineImage(source, at) {
  const match = /[\0\t\n\f\r ]EI(?=[\0\t\n\f\r ]|$)/g;
  match.lastIndex = at;
  const found = match.exec(source);
  if (!found) throw new Error('unterminated inline image');
  return found.index + 3;
}

/**
 * The operations of a content stream (a latin1 string: one character per byte): each operator with its
 * operands (numbers, names, {string: bytes}, arrays, dicts as plain objects) and its [start, end) in the source.
 * @param {string} source
 */
export function readOperations(source) {
  /** @type {Operation[]} */
  const operations = [];
  /** @type {{ kind: 'array' | 'dict', items: Operand[], start: number }[]} */
  const open = []; // arrays and dictionaries being read, innermost last
  /** @type {Operand[]} */
  let operands = [];
  let operandsStart = -1;
  /**
   * @param {Operand} value
   * @param {number} start
   */
  const add = (value, start) => {
    if (open.length) return open[open.length - 1].items.push(value);
    if (operands.length === 0) operandsStart = start;
    operands.push(value);
  };
  /** @param {'array' | 'dict'} kind */
  const close = (kind) => {
    const container = open.pop();
    if (container?.kind !== kind) throw new Error(`unbalanced ${kind}`);
    if (kind === 'array') return add(container.items, container.start);
    /** @type {OperandDict} */
    const dict = {};
    for (let k = 0; k + 1 < container.items.length; k += 2) {
      const key = nameOf(container.items[k]);
      if (key !== undefined) dict[key] = container.items[k + 1];
    }
    add(dict, container.start);
  };
  let i = 0;
  while (i < source.length) {
    const byte = source.charCodeAt(i);
    const character = source[i];
    const start = i;
    if (WHITESPACE.has(byte)) {
      i++;
    } else if (character === '%') {
      while (i < source.length && source[i] !== '\r' && source[i] !== '\n') i++;
    } else if (character === '(') {
      const { value, end } = readLiteralString(source, i);
      add(value, start);
      i = end;
    } else if (source.startsWith('<<', i)) {
      open.push({ kind: 'dict', items: [], start });
      i += 2;
    } else if (source.startsWith('>>', i)) {
      close('dict');
      i += 2;
    } else if (character === '<') {
      const { value, end } = readHexString(source, i);
      add(value, start);
      i = end;
    } else if (character === '[') {
      open.push({ kind: 'array', items: [], start });
      i++;
    } else if (character === ']') {
      close('array');
      i++;
    } else if (character === '/') {
      let end = i + 1;
      while (end < source.length && isRegular(source.charCodeAt(end))) end++;
      add({ name: source.slice(i + 1, end) }, start);
      i = end;
    } else if (!isRegular(byte)) {
      i++; // a stray delimiter carries nothing
    } else {
      let end = i;
      while (end < source.length && isRegular(source.charCodeAt(end))) end++;
      const word = source.slice(i, end);
      i = end;
      if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) add(Number(word), start);
      else if (word === 'true' || word === 'false') add(word === 'true', start);
      else if (word === 'null') add(null, start);
      else if (open.length)
        add({ keyword: word }, start); // not an operator inside an array or dictionary
      else {
        if (word === 'ID') i = endOfInlineImage(source, i);
        operations.push({ operator: word, operands, start: operands.length ? operandsStart : start, end: i });
        operands = [];
      }
    }
  }
  return operations;
}

/** @param {Operand | undefined} operand the name this operand is, if it is one */
const nameOf = (operand) => (operand instanceof Object && 'name' in operand && typeof operand.name === 'string' ? operand.name : undefined);
/** @param {Operand | undefined} operand the bytes of this operand, if it is a string */
const bytesOf = (operand) => (operand instanceof Object && 'string' in operand && operand.string instanceof Uint8Array ? operand.string : undefined);
/**
 * @param {Operand[]} operands
 * @param {number} k
 * @returns {number} operand k if it is a number, else 0
 */
const numberAt = (operands, k) => {
  const operand = operands[k];
  return typeof operand === 'number' ? operand : 0;
};

// --- Fonts: how a string's bytes split into character codes, what each code reads as, and its width. ---

// WinAnsi's table, in ascending code points: each with its code and glyph name (a later code point wins a
// name or code it shares with an earlier one, as 160 does 32's "space").
const winAnsi = Encodings.WinAnsi.supportedCodePoints.map((codePoint) => ({ ...Encodings.WinAnsi.encodeUnicodeCodePoint(codePoint), codePoint }));
const unicodeOfGlyphName = new Map(winAnsi.map(({ name, codePoint }) => [name, String.fromCodePoint(codePoint)]));
const winAnsiUnicode = new Map(winAnsi.map(({ code, codePoint }) => [code, String.fromCodePoint(codePoint)]));
/** @type {Set<string>} */
const standardFontNames = new Set(Object.values(StandardFonts));
/**
 * @param {string} name
 * @returns {name is import('@pdf-lib/standard-fonts').FontNames}
 */
const isStandardFontName = (name) => standardFontNames.has(name);

/**
 * @param {string} name
 * @returns {string | undefined}
 */
function glyphNameToUnicode(name) {
  if (unicodeOfGlyphName.has(name)) return unicodeOfGlyphName.get(name);
  const hex = /^uni([0-9A-F]{4})$/.exec(name) ?? /^u([0-9A-F]{4,6})$/.exec(name);
  return hex ? String.fromCodePoint(parseInt(hex[1], 16)) : undefined;
}

/** @param {Uint8Array} bytes */
const hexKey = (bytes) => Buffer.from(bytes).toString('hex');
/** @param {string} hex */
const utf16 = (hex) =>
  Buffer.from(hex.length % 4 ? `00${hex}` : hex, 'hex')
    .swap16()
    .toString('utf16le');

/**
 * A ToUnicode CMap: the text of a code (its bytes), from bfchar and bfrange entries.
 * @param {string} text
 */
function readToUnicode(text) {
  /** @type {Map<string, string>} */
  const single = new Map();
  for (const [, block] of text.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const [, code, unicode] of block.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]*)>/g)) single.set(code.toLowerCase(), utf16(unicode));
  }
  /** @type {{ length: number, low: number, high: number, start: string, targets: string[] | undefined }[]} */
  const ranges = [];
  for (const [, block] of text.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    for (const [, low, high, start, list] of block.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(?:<([0-9a-fA-F]+)>|\[([^\]]*)\])/g)) {
      const targets = list === undefined ? undefined : [...list.matchAll(/<([0-9a-fA-F]*)>/g)].map((match) => utf16(match[1]));
      ranges.push({ length: low.length / 2, low: parseInt(low, 16), high: parseInt(high, 16), start, targets });
    }
  }
  return {
    /**
     * @param {Uint8Array} bytes
     * @returns {string | undefined}
     */
    unicodeOf(bytes) {
      const key = hexKey(bytes);
      if (single.has(key)) return single.get(key);
      const code = parseInt(key, 16);
      const range = ranges.find((candidate) => candidate.length === bytes.length && code >= candidate.low && code <= candidate.high);
      if (!range) return undefined;
      if (range.targets) return range.targets[code - range.low];
      // The last byte of the start value counts up through the range.
      const first = Buffer.from(range.start.length % 2 ? `0${range.start}` : range.start, 'hex');
      first[first.length - 1] += code - range.low;
      return utf16(first.toString('hex'));
    },
  };
}

/**
 * @param {import('pdf-lib').PDFDict} dict
 * @param {string} key
 */
const lookupNumber = (dict, key) => {
  const value = dict.lookup(PDFName.of(key));
  return value instanceof PDFNumber ? value.asNumber() : undefined;
};
/**
 * @param {import('pdf-lib').PDFDict} dict
 * @param {string} key
 */
const lookupName = (dict, key) => {
  const value = dict.lookup(PDFName.of(key));
  return value instanceof PDFName ? value.decodeText() : undefined;
};
/** @param {PDFObject | undefined} array */
const numbersOf = (array) => (array instanceof PDFArray ? array.asArray().map((_, index) => array.lookup(index)) : []);
/** @param {PDFObject | undefined} value a number's value, if it is one */
const asNumber = (value) => (value instanceof PDFNumber ? value.asNumber() : undefined);
/** @param {PDFObject | undefined} stream */
const streamText = (stream) => (stream instanceof PDFRawStream ? Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1') : undefined);

/**
 * A composite (Type0) font: Identity-H codes of two bytes, widths from /W, text from its ToUnicode map.
 * @param {import('pdf-lib').PDFDict} font
 * @returns {FontReader | undefined}
 */
function compositeFont(font) {
  if (lookupName(font, 'Encoding') !== 'Identity-H') return undefined;
  const toUnicodeText = streamText(font.lookup(PDFName.of('ToUnicode')));
  const descendant = numbersOf(font.lookup(PDFName.of('DescendantFonts')))[0];
  if (!toUnicodeText || !(descendant instanceof PDFDict)) return undefined;
  const toUnicode = readToUnicode(toUnicodeText);
  const defaultWidth = lookupNumber(descendant, 'DW') ?? 1000;
  /** @type {Map<number, number>} */
  const widths = new Map();
  const list = numbersOf(descendant.lookup(PDFName.of('W')));
  for (let i = 0; i < list.length;) {
    const first = asNumber(list[i]) ?? NaN;
    const next = list[i + 1];
    if (next instanceof PDFArray) {
      numbersOf(next).forEach((width, offset) => width instanceof PDFNumber && widths.set(first + offset, width.asNumber()));
      i += 2;
    } else {
      const last = asNumber(next);
      const width = asNumber(list[i + 2]);
      if (last === undefined || width === undefined || last - first > 65535) break;
      for (let cid = first; cid <= last; cid++) widths.set(cid, width);
      i += 3;
    }
  }
  return {
    codeLength: () => 2,
    unicodeOf: (bytes) => toUnicode.unicodeOf(bytes),
    widthOf: (bytes) => widths.get((bytes[0] << 8) | bytes[1]) ?? defaultWidth,
  };
}

/**
 * A simple font: one byte per code; text from ToUnicode, else its encoding; widths from /Widths, else the standard 14's metrics.
 * @param {import('pdf-lib').PDFDict} font
 * @returns {FontReader | undefined}
 */
function simpleFont(font) {
  const toUnicodeText = streamText(font.lookup(PDFName.of('ToUnicode')));
  const toUnicode = toUnicodeText ? readToUnicode(toUnicodeText) : undefined;
  /** @type {Map<number, string | undefined>} */
  const differences = new Map();
  const encoding = font.lookup(PDFName.of('Encoding'));
  if (encoding instanceof PDFDict) {
    let code = 0;
    for (const item of numbersOf(encoding.lookup(PDFName.of('Differences')))) {
      if (item instanceof PDFNumber) code = item.asNumber();
      else if (item instanceof PDFName) differences.set(code++, glyphNameToUnicode(item.decodeText()));
    }
  }
  /** @param {Uint8Array} bytes */
  const unicodeOf = (bytes) => {
    const mapped = toUnicode?.unicodeOf(bytes);
    if (mapped !== undefined) return mapped;
    if (differences.has(bytes[0])) return differences.get(bytes[0]);
    return winAnsiUnicode.get(bytes[0]) ?? String.fromCharCode(bytes[0]);
  };
  const widthList = numbersOf(font.lookup(PDFName.of('Widths')));
  const firstChar = lookupNumber(font, 'FirstChar') ?? 0;
  const descriptor = font.lookup(PDFName.of('FontDescriptor'));
  const missingWidth = descriptor instanceof PDFDict ? (lookupNumber(descriptor, 'MissingWidth') ?? 0) : 0;
  const baseFont = (lookupName(font, 'BaseFont') ?? '').replace(/^[A-Z]{6}\+/, '');
  /** @type {FontReader['widthOf']} */
  let widthOf;
  if (widthList.length) {
    widthOf = (bytes) => asNumber(widthList[bytes[0] - firstChar]) ?? missingWidth;
  } else if (isStandardFontName(baseFont)) {
    const metrics = StandardFontEmbedder.for(baseFont);
    widthOf = (bytes) => {
      try {
        return metrics.widthOfTextAtSize(unicodeOf(bytes) ?? '', 1000);
      } catch {
        return undefined;
      }
    };
  } else return undefined;
  return { codeLength: () => 1, unicodeOf, widthOf };
}

/**
 * How to read strings shown in this font, or undefined for the fonts left to the white cover.
 * @param {PDFObject | undefined} font
 */
function fontReader(font) {
  if (!(font instanceof PDFDict)) return undefined;
  const subtype = lookupName(font, 'Subtype');
  if (subtype === 'Type0') return compositeFont(font);
  if (subtype === 'Type1' || subtype === 'TrueType' || subtype === 'MMType1') return simpleFont(font);
  return undefined;
}

// --- Following the text on a page: each glyph with where it comes from, what it reads as and where it is drawn. ---

/**
 * @param {Matrix} first
 * @param {Matrix} second
 * @returns {Matrix}
 */
const multiply = ([a1, b1, c1, d1, e1, f1], [a2, b2, c2, d2, e2, f2]) => [
  a1 * a2 + b1 * c2,
  a1 * b2 + b1 * d2,
  c1 * a2 + d1 * c2,
  c1 * b2 + d1 * d2,
  e1 * a2 + f1 * c2 + e2,
  e1 * b2 + f1 * d2 + f2,
];
/**
 * @param {number} x
 * @param {number} y
 * @returns {Matrix}
 */
const translation = (x, y) => [1, 0, 0, 1, x, y];
/** @type {Matrix} */
const IDENTITY = [1, 0, 0, 1, 0, 0];
/**
 * @param {Operand[]} operands
 * @returns {operands is Matrix}
 */
const isMatrix = (operands) => operands.length === 6 && operands.every((value) => typeof value === 'number');

/**
 * Every glyph the page's content stream shows, in order: its operation, string (index within a TJ array)
 * and bytes; its text, its width in glyph space, and its origin in user space. A glyph whose font cannot be
 * read has no text.
 * @param {Operation[]} operations
 * @param {(name: string | undefined) => FontReader | undefined} fontsByName
 */
function glyphsOf(operations, fontsByName) {
  /** @type {Glyph[]} */
  const glyphs = [];
  /** @type {TextState} */
  let state = { ctm: IDENTITY, font: undefined, size: 0, charSpacing: 0, wordSpacing: 0, scale: 1, leading: 0, rise: 0 };
  /** @type {TextState[]} */
  const saved = [];
  let textMatrix = IDENTITY;
  let lineMatrix = IDENTITY;
  /**
   * @param {number} x
   * @param {number} y
   */
  const nextLine = (x, y) => {
    lineMatrix = multiply(translation(x, y), lineMatrix);
    textMatrix = lineMatrix;
  };
  /**
   * @param {number} operationIndex
   * @param {number} stringIndex
   * @param {Uint8Array | undefined} bytes nothing is shown when the operand is not a string
   */
  const show = (operationIndex, stringIndex, bytes) => {
    if (!bytes) return;
    const reader = state.font;
    for (let at = 0; at < bytes.length;) {
      const length = reader ? reader.codeLength(bytes, at) : 1;
      const code = bytes.subarray(at, at + length);
      const width = reader?.widthOf(code);
      const [x, y] = multiply(multiply(translation(0, state.rise), textMatrix), state.ctm).slice(4);
      const isSpace = length === 1 && code[0] === 0x20;
      glyphs.push({ operationIndex, stringIndex, from: at, to: at + length, text: reader?.unicodeOf(code), width, isSpace, x, y, state });
      const advance = ((width ?? 0) / 1000) * state.size + state.charSpacing + (isSpace ? state.wordSpacing : 0);
      textMatrix = multiply(translation(advance * state.scale, 0), textMatrix);
      at += length;
    }
  };
  operations.forEach(({ operator, operands }, index) => {
    /** @param {number} k */
    const number = (k) => numberAt(operands, k);
    switch (operator) {
      case 'q':
        saved.push(state);
        break;
      case 'Q':
        state = saved.pop() ?? state;
        break;
      case 'cm':
        if (isMatrix(operands)) state = { ...state, ctm: multiply(operands, state.ctm) };
        break;
      case 'BT':
        textMatrix = lineMatrix = IDENTITY;
        break;
      case 'Tf':
        state = { ...state, font: fontsByName(nameOf(operands[0])), size: number(1) };
        break;
      case 'Tc':
        state = { ...state, charSpacing: number(0) };
        break;
      case 'Tw':
        state = { ...state, wordSpacing: number(0) };
        break;
      case 'Tz':
        state = { ...state, scale: number(0) / 100 };
        break;
      case 'TL':
        state = { ...state, leading: number(0) };
        break;
      case 'Ts':
        state = { ...state, rise: number(0) };
        break;
      case 'Tm':
        if (isMatrix(operands)) textMatrix = lineMatrix = operands;
        break;
      case 'Td':
        nextLine(number(0), number(1));
        break;
      case 'TD':
        state = { ...state, leading: -number(1) };
        nextLine(number(0), number(1));
        break;
      case 'T*':
        nextLine(0, -state.leading);
        break;
      case 'Tj':
        show(index, -1, bytesOf(operands[0]));
        break;
      case "'":
        nextLine(0, -state.leading);
        show(index, -1, bytesOf(operands[0]));
        break;
      case '"':
        state = { ...state, wordSpacing: number(0), charSpacing: number(1) };
        nextLine(0, -state.leading);
        show(index, -1, bytesOf(operands[2]));
        break;
      case 'TJ':
        (Array.isArray(operands[0]) ? operands[0] : []).forEach((item, itemIndex) => {
          const bytes = bytesOf(item);
          if (bytes) show(index, itemIndex, bytes);
          else if (typeof item === 'number') textMatrix = multiply(translation((-item / 1000) * state.size * state.scale, 0), textMatrix);
        });
        break;
    }
  });
  return glyphs;
}

/**
 * The glyphs of `tag` drawn where pdf.js found it (its box, from the page's view origin), not yet claimed by
 * another tag: [first, last] indices into `glyphs`, or undefined. Whitespace inside a tag is not compared.
 * @param {Glyph[]} glyphs
 * @param {Set<number>} claimed
 * @param {string} tag
 * @param {Box} box
 * @param {[number, number]} origin
 * @returns {[number, number] | undefined}
 */
function findTagGlyphs(glyphs, claimed, tag, box, origin) {
  const wanted = tag.replace(/\s+/g, '');
  const tolerance = Math.max(2, box.height / 2);
  /** @param {Glyph} glyph */
  const near = ({ x, y }) =>
    x - origin[0] >= box.x - tolerance &&
    x - origin[0] <= box.x + box.width + tolerance &&
    y - origin[1] >= box.y - tolerance &&
    y - origin[1] <= box.y + box.height + tolerance;
  for (let first = 0; first < glyphs.length; first++) {
    const firstText = glyphs[first].text;
    if (claimed.has(first) || !firstText || !wanted.startsWith(firstText) || !near(glyphs[first])) continue;
    let read = '';
    for (let last = first; last < glyphs.length && read.length < wanted.length; last++) {
      const { text } = glyphs[last];
      if (text === undefined || claimed.has(last)) break;
      read += text.replace(/\s+/g, '');
      if (!wanted.startsWith(read)) break;
      if (read === wanted) return [first, last];
    }
  }
  return undefined;
}

/**
 * Whether deleting these glyphs can be made up for exactly: known widths, upright text of a non-zero size.
 * @param {Glyph[]} glyphs
 */
const canDelete = (glyphs) => glyphs.every(({ width, state }) => width !== undefined && state.size !== 0);

// --- Writing the operations back. ---

/** @param {number} value */
const formatNumber = (value) => String(Math.round(value * 10000) / 10000);
/** @param {Uint8Array | number[]} bytes */
const hexString = (bytes) => `<${Buffer.from(bytes).toString('hex')}>`;

/**
 * A TJ array without the deleted glyphs: each run of them becomes the number that moves the pen as far as they did.
 * @param {Operand[]} items
 * @param {(itemIndex: number) => Map<number, Glyph>} deletedOf the deleted glyphs of an item, by the byte they start at
 */
function rewrittenArray(items, deletedOf) {
  /** @type {string[]} */
  const parts = [];
  items.forEach((item, itemIndex) => {
    const string = bytesOf(item);
    if (!string) {
      if (typeof item === 'number') parts.push(formatNumber(item));
      return;
    }
    const deleted = deletedOf(itemIndex);
    /** @type {number[]} */
    let kept = [];
    let shift = 0;
    const flush = () => {
      if (kept.length) parts.push(hexString(kept));
      if (shift) parts.push(formatNumber(shift));
      kept = [];
      shift = 0;
    };
    for (let at = 0; at < string.length;) {
      const glyph = deleted.get(at);
      if (glyph) {
        if (kept.length) {
          parts.push(hexString(kept));
          kept = [];
        }
        const { size, charSpacing, wordSpacing } = glyph.state;
        const width = /** @type {number} */ (glyph.width); // known: canDelete let it be deleted
        shift -= width + ((charSpacing + (glyph.isSpace ? wordSpacing : 0)) * 1000) / size;
        at = glyph.to;
      } else {
        if (shift) {
          parts.push(formatNumber(shift));
          shift = 0;
        }
        kept.push(string[at]);
        at++;
      }
    }
    flush();
  });
  return `[${parts.join(' ')}]`;
}

/**
 * The text of one text-showing operation without its deleted glyphs.
 * @param {Operation} operation
 * @param {Glyph[]} deleted
 */
function rewrittenOperation({ operator, operands }, deleted) {
  /** @param {number} itemIndex */
  const deletedOf = (itemIndex) => new Map(deleted.filter((glyph) => glyph.stringIndex === itemIndex).map((glyph) => [glyph.from, glyph]));
  if (operator === 'TJ') return `${rewrittenArray(Array.isArray(operands[0]) ? operands[0] : [], deletedOf)} TJ`; // an array: its glyphs were shown
  const string = operator === '"' ? operands[2] : operands[0];
  const array = rewrittenArray([string], () => deletedOf(-1));
  if (operator === 'Tj') return `${array} TJ`;
  if (operator === "'") return `T* ${array} TJ`;
  return `${formatNumber(numberAt(operands, 0))} Tw ${formatNumber(numberAt(operands, 1))} Tc T* ${array} TJ`;
}

/**
 * The page's content as one string (latin1), its streams joined as the page draws them.
 * @param {Page} page
 */
function pageContent(page) {
  const contents = page.node.Contents();
  const streams = contents instanceof PDFArray ? contents.asArray().map((_, index) => contents.lookup(index)) : [contents];
  if (!streams.every((stream) => stream instanceof PDFRawStream)) return undefined;
  const decoded = streams.map((stream) => decodePDFRawStream(stream).decode());
  if (decoded.reduce((total, bytes) => total + bytes.length, 0) > MAX_CONTENT_BYTES) return undefined;
  return decoded.map((bytes) => Buffer.from(bytes).toString('latin1')).join('\n');
}

/**
 * Deletes from one page the glyphs of the tags found on it; answers the tags it could not delete. The page
 * is changed only at the end, in one step: a failure before it leaves the page as it was.
 * @template {Tag} T
 * @param {import('pdf-lib').PDFDocument} pdf
 * @param {Page} page
 * @param {T[]} tags
 * @returns {T[]}
 */
function removeTagsFromPage(pdf, page, tags) {
  const source = pageContent(page);
  if (source === undefined) return tags;
  const fontDicts = page.node.Resources()?.lookup(PDFName.of('Font'));
  /** @type {Map<string | undefined, FontReader | undefined>} */
  const readers = new Map();
  /** @param {string | undefined} name */
  const fontsByName = (name) => {
    if (!readers.has(name)) readers.set(name, fontDicts instanceof PDFDict && name ? fontReader(fontDicts.lookup(PDFName.of(name))) : undefined);
    return readers.get(name);
  };
  const operations = readOperations(source);
  const glyphs = glyphsOf(operations, fontsByName);
  const crop = page.getCropBox();
  const media = page.getMediaBox();
  /** @type {[number, number]} */
  const origin = [Math.max(crop.x, media.x), Math.max(crop.y, media.y)]; // pdf.js measures from its view: CropBox within MediaBox
  /** @type {Set<number>} */
  const claimed = new Set();
  /** @type {T[]} */
  const left = [];
  for (const tag of tags) {
    const found = findTagGlyphs(glyphs, claimed, tag.tag, tag, origin);
    if (!found || !canDelete(glyphs.slice(found[0], found[1] + 1))) {
      left.push(tag);
      continue;
    }
    for (let index = found[0]; index <= found[1]; index++) claimed.add(index);
  }
  if (claimed.size === 0) return left;
  /** @type {Map<number, Glyph[]>} */
  const byOperation = new Map();
  for (const index of claimed) {
    const glyph = glyphs[index];
    const deleted = byOperation.get(glyph.operationIndex) ?? [];
    byOperation.set(glyph.operationIndex, deleted);
    deleted.push(glyph);
  }
  let output = '';
  let at = 0;
  for (const [operationIndex, deleted] of [...byOperation].sort(([a], [b]) => a - b)) {
    const operation = operations[operationIndex];
    output += source.slice(at, operation.start) + rewrittenOperation(operation, deleted);
    at = operation.end;
  }
  output += source.slice(at);
  page.node.set(PDFName.of('Contents'), pdf.context.register(pdf.context.flateStream(Buffer.from(output, 'latin1'))));
  return left;
}

/**
 * Paints white over a tag's box and a little beyond it (measured text is a little off).
 * @param {Page} page
 * @param {Box} tag
 */
function coverTag(page, tag) {
  const origin = page.getMediaBox();
  const [across, up] = [Math.max(1, tag.height * 0.15), Math.max(1, tag.height * 0.1)];
  page.drawRectangle({
    x: origin.x + tag.x - across,
    y: origin.y + tag.y - up,
    width: tag.width + 2 * across,
    height: tag.height + 2 * up,
    color: rgb(1, 1, 1),
  });
}

/**
 * The PDF without the given tags (fields found by findTextTags.mjs: page, box, tag): deleted from their
 * pages' content, or covered in white where that cannot be done. Answers the new bytes and the tags covered.
 * @template {Tag} T
 * @param {Uint8Array} bytes
 * @param {T[]} tags
 * @returns {Promise<{ pdf: Uint8Array, covered: T[] }>}
 */
export async function removeTextTags(bytes, tags) {
  const pdf = await PDFDocument.load(bytes, { updateMetadata: false });
  const pages = pdf.getPages();
  /** @type {T[]} */
  const covered = [];
  for (const number of new Set(tags.map((tag) => tag.page))) {
    const page = pages[number - 1];
    const onPage = tags.filter((tag) => tag.page === number);
    if (!page) continue;
    /** @type {T[]} */
    let left;
    try {
      left = removeTagsFromPage(pdf, page, onPage);
    } catch {
      left = onPage; // content this reader cannot follow: the cover does it
    }
    for (const tag of left) coverTag(page, tag);
    covered.push(...left);
  }
  return { pdf: await pdf.save({ useObjectStreams: false }), covered };
}
