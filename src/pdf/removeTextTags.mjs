// @ts-check
// Takes the text tags that placed a template's fields ({{signature:tenant}} …) out of a PDF: the glyphs of
// each tag are deleted from its page's content stream, and the text after them on the same line is moved
// back to where it was with a TJ adjustment, so nothing else on the page shifts. The page is read with the
// reader of the text extraction (contentReader.mjs, contentFonts.mjs), so that its glyphs read as pdf.js
// reads them. A tag that cannot be rewritten safely is painted over in white instead (its text then stays
// in the file's text layer):
//   * text drawn inside a form XObject or an annotation, not in the page's own content stream;
//   * fonts that reader leaves to pdf.js (Type3, vertical writing, composite fonts with an encoding other
//     than Identity-H or without a ToUnicode map, CMaps past its caps), and simple fonts without /Widths
//     that are not one of the standard 14;
//   * a page whose content is over MAX_CONTENT_BYTES decoded, or that this reader cannot follow (a filter
//     pdf-lib cannot decode, an unterminated array, nesting past its cap), and a tag whose glyphs are not
//     found where pdf.js measured it.
// Run in the PDF pool's child (findTextTags.mjs), never in the api process. Plain JavaScript, as its caller.
import { createRequire } from 'node:module';
import { readFont } from './contentFonts.mjs';
import { eachOperation, Name, transform } from './contentReader.mjs';

const require = createRequire(import.meta.url);
const {
  PDFDocument,
  PDFArray,
  PDFBool,
  PDFDict,
  PDFHexString,
  PDFName,
  PDFNull,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFString,
  StandardFontEmbedder,
  StandardFonts,
  decodePDFRawStream,
  rgb,
} = require('pdf-lib');

/** @typedef {import('pdf-lib').PDFPage} Page */
/** @typedef {{ operator: string, operands: any[], start: number, end: number }} Operation */
/** @typedef {[number, number, number, number, number, number]} Matrix */
/**
 * How to read the strings shown in one font: the bytes of a code, what a code reads as, its width (glyph
 * space, thousandths of the size); undefined where the font does not say.
 * @typedef {{ codeBytes: number, unicode: (code: number) => string | undefined, width: (code: number) => number | undefined }} FontReader
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

/**
 * The operations of a content stream (a latin1 string: one character per byte): each operator with its
 * operands (numbers, Names, strings of bytes, arrays, dictionaries) and its [start, end) in the source.
 * @param {string} source
 */
function readOperations(source) {
  /** @type {Operation[]} */
  const operations = [];
  eachOperation(source, (operator, operands, start, end) => operations.push({ operator, operands: operands.slice(), start, end }));
  return operations;
}

/** @param {any} operand the name this operand is, if it is one */
const nameOf = (operand) => (operand instanceof Name ? operand.name : undefined);
/** @param {any} operand the bytes of this operand (latin1), if it is a string */
const bytesOf = (operand) => (typeof operand === 'string' ? operand : undefined);
/**
 * @param {any[]} operands
 * @param {number} k
 * @returns {number} operand k if it is a number, else 0
 */
const numberAt = (operands, k) => {
  const operand = operands[k];
  return typeof operand === 'number' ? operand : 0;
};

// --- Fonts: read by contentFonts.mjs from pdf-lib's objects, with the standard 14's widths where a font has none. ---

/**
 * pdf-lib's objects as contentFonts.mjs reads them: names as Names, numbers, booleans and strings (latin1)
 * as values, arrays as arrays and dictionaries as plain objects of their entries (resolved when read),
 * streams as { dict, stream }.
 * @param {import('pdf-lib').PDFContext} context
 * @returns {import('./contentFonts.mjs').Objects}
 */
function objectsOf(context) {
  /** @param {import('pdf-lib').PDFDict} dict */
  const entriesOf = (dict) => {
    /** @type {{ [key: string]: any }} */
    const entries = Object.create(null);
    for (const [key, value] of dict.entries()) entries[key.decodeText()] = value;
    return entries;
  };
  return {
    get(value) {
      const object = value instanceof PDFRef ? context.lookup(value) : value;
      if (object instanceof PDFName) return new Name(object.decodeText());
      if (object instanceof PDFNumber) return object.asNumber();
      if (object instanceof PDFBool) return object.asBoolean();
      if (object === PDFNull) return null;
      if (object instanceof PDFString || object instanceof PDFHexString) return Buffer.from(object.asBytes()).toString('latin1');
      if (object instanceof PDFArray) return object.asArray();
      if (object instanceof PDFRawStream) return { dict: entriesOf(object.dict), stream: object };
      if (object instanceof PDFDict) return entriesOf(object);
      return object;
    },
    streamData: ({ stream }) => Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1'),
  };
}

/** @type {Set<string>} */
const standardFontNames = new Set(Object.values(StandardFonts));
/**
 * @param {string} name
 * @returns {name is import('@pdf-lib/standard-fonts').FontNames}
 */
const isStandardFontName = (name) => standardFontNames.has(name);

/**
 * How to read strings shown in this font, or undefined for the fonts left to the white cover. A font
 * without widths is measured with the standard 14's metrics, when it is one of them (as pdf.js does).
 * @param {import('./contentFonts.mjs').Objects} objects
 * @param {any} ref
 * @returns {FontReader | undefined}
 */
function fontReader(objects, ref) {
  /** @type {import('./contentFonts.mjs').Font} */
  let font;
  try {
    font = readFont(objects, ref);
  } catch {
    return undefined;
  }
  const baseFont = font.baseFont.replace(/^[A-Z]{6}\+/, '');
  if (!isStandardFontName(baseFont)) return font;
  const metrics = StandardFontEmbedder.for(baseFont);
  /** @param {number} code */
  const measured = (code) => {
    try {
      return metrics.widthOfTextAtSize(font.unicode(code) ?? '', 1000);
    } catch {
      return undefined;
    }
  };
  return { ...font, width: (code) => font.width(code) ?? measured(code) };
}

// --- Following the text on a page: each glyph with where it comes from, what it reads as and where it is drawn. ---

/**
 * @param {number} x
 * @param {number} y
 * @returns {Matrix}
 */
const translation = (x, y) => [1, 0, 0, 1, x, y];
/** @type {Matrix} */
const IDENTITY = [1, 0, 0, 1, 0, 0];
/**
 * @param {any[]} operands
 * @returns {operands is Matrix}
 */
const isMatrix = (operands) => operands.length === 6 && operands.every((value) => typeof value === 'number');
/**
 * m after n, as a Matrix.
 * @param {Matrix} m
 * @param {Matrix} n
 * @returns {Matrix}
 */
const after = (m, n) => /** @type {Matrix} */ (transform(m, n));

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
    lineMatrix = after(lineMatrix, translation(x, y));
    textMatrix = lineMatrix;
  };
  /**
   * @param {number} operationIndex
   * @param {number} stringIndex
   * @param {string | undefined} bytes nothing is shown when the operand is not a string
   */
  const show = (operationIndex, stringIndex, bytes) => {
    if (bytes === undefined) return;
    const reader = state.font;
    const length = reader?.codeBytes ?? 1;
    for (let at = 0; at < bytes.length; at += length) {
      const code = length === 2 ? bytes.charCodeAt(at) * 256 + bytes.charCodeAt(at + 1) : bytes.charCodeAt(at);
      const width = reader?.width(code);
      const [x, y] = after(state.ctm, after(textMatrix, translation(0, state.rise))).slice(4);
      const isSpace = length === 1 && code === 0x20;
      glyphs.push({ operationIndex, stringIndex, from: at, to: at + length, text: reader?.unicode(code), width, isSpace, x, y, state });
      const advance = ((width ?? 0) / 1000) * state.size + state.charSpacing + (isSpace ? state.wordSpacing : 0);
      textMatrix = after(textMatrix, translation(advance * state.scale, 0));
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
        if (isMatrix(operands)) state = { ...state, ctm: after(state.ctm, operands) };
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
          else if (typeof item === 'number') textMatrix = after(textMatrix, translation((-item / 1000) * state.size * state.scale, 0));
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
/** @param {number[]} bytes */
const hexString = (bytes) => `<${Buffer.from(bytes).toString('hex')}>`;

/**
 * A TJ array without the deleted glyphs: each run of them becomes the number that moves the pen as far as they did.
 * @param {any[]} items
 * @param {(itemIndex: number) => Map<number, Glyph>} deletedOf the deleted glyphs of an item, by the byte they start at
 */
function rewrittenArray(items, deletedOf) {
  /** @type {string[]} */
  const parts = [];
  items.forEach((item, itemIndex) => {
    const string = bytesOf(item);
    if (string === undefined) {
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
        kept.push(string.charCodeAt(at));
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
 * The page's content, its operations and the glyphs they show, read as the text extraction reads them;
 * undefined when its content cannot be read here.
 * @param {import('pdf-lib').PDFDocument} pdf
 * @param {Page} page
 */
export function readPage(pdf, page) {
  const source = pageContent(page);
  if (source === undefined) return undefined;
  const objects = objectsOf(pdf.context);
  const fonts = objects.get(objects.get(page.node.Resources())?.Font);
  /** @type {Map<string | undefined, FontReader | undefined>} */
  const readers = new Map();
  /** @param {string | undefined} name */
  const fontsByName = (name) => {
    if (!readers.has(name)) readers.set(name, fonts && name ? fontReader(objects, fonts[name]) : undefined);
    return readers.get(name);
  };
  const operations = readOperations(source);
  return { source, operations, glyphs: glyphsOf(operations, fontsByName) };
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
  const read = readPage(pdf, page);
  if (read === undefined) return tags;
  const { source, operations, glyphs } = read;
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
