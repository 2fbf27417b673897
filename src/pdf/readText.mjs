// @ts-check
// A PDF's text the cheap way, for the common case (extractText.mjs): the page content streams walked
// directly — inflated, tokenized, the strings of Tj, TJ, ' and " decoded with the font's ToUnicode CMap
// or a simple encoding — with pdf.js's rules for where one word ends and the next begins, so that
// search finds the same words. Anything it cannot decode with confidence (encryption, Type3 fonts, CID
// fonts without ToUnicode, filters other than Flate, text whose spacing it cannot place, right-to-left
// scripts) throws Unsupported: the caller asks pdf.js instead. Runs in a PDF process of the pool, whose
// limits bound it; every inflated stream is also capped.
import zlib from 'node:zlib';

export class Unsupported extends Error {}

/** The most bytes one inflated stream may have; more is left to pdf.js (and the pool's limits). */
const MAX_STREAM_BYTES = 64 * 1024 * 1024;
/** Nesting of form XObjects and page-tree levels followed at most. */
const MAX_DEPTH = 32;
/** Code-to-text entries of one ToUnicode CMap at most. */
const MAX_CMAP_ENTRIES = 1 << 17;

// pdf.js's thresholds (getTextContent), in units of the font size.
const TRACKING_SPACE = 0.102;
const NEGATIVE_SPACE = -0.2;
const VERTICAL_SHIFT = 0.25;

class Name {
  /** @param {string} name */
  constructor(name) {
    this.name = name;
  }
}
class Ref {
  /** @param {number} num */
  constructor(num) {
    this.num = num;
  }
}
class Operator {
  /** @param {string} op */
  constructor(op) {
    this.op = op;
  }
}
/** @typedef {{ [key: string]: any }} Dict */
/** @typedef {{ dict: Dict, start: number, end: number }} Stream */

const isSpace = (/** @type {number} */ c) => c === 32 || c === 10 || c === 13 || c === 9 || c === 12 || c === 0;
/** A digit, sign or point: the operators, names and keywords that fill a content stream skip the number test. */
const startsNumber = (/** @type {number} */ c) => (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
const isDelimiter = (/** @type {number} */ c) =>
  c === 40 || c === 41 || c === 60 || c === 62 || c === 91 || c === 93 || c === 123 || c === 125 || c === 47 || c === 37;

/** Reads PDF objects (and content-stream operators) from a latin1 string, one byte per character. */
class Lexer {
  /** @param {string} text @param {number} [position] */
  constructor(text, position = 0) {
    this.text = text;
    this.pos = position;
  }

  skipSpace() {
    const { text } = this;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (isSpace(c)) this.pos++;
      else if (c === 37) {
        while (this.pos < text.length && text.charCodeAt(this.pos) !== 10 && text.charCodeAt(this.pos) !== 13) this.pos++;
      } else break;
    }
  }

  /** The next object or operator; undefined at the end. `]` and `>>` come back as operators. @returns {any} */
  next() {
    this.skipSpace();
    const { text } = this;
    if (this.pos >= text.length) return undefined;
    const c = text.charCodeAt(this.pos);
    if (c === 40) return this.literalString();
    if (c === 47) {
      const start = ++this.pos;
      while (this.pos < text.length && !isSpace(text.charCodeAt(this.pos)) && !isDelimiter(text.charCodeAt(this.pos))) this.pos++;
      const name = text.slice(start, this.pos);
      return new Name(name.includes('#') ? name.replace(/#([0-9a-fA-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16))) : name);
    }
    if (c === 60) {
      if (text.charCodeAt(this.pos + 1) === 60) {
        this.pos += 2;
        return this.dictionary();
      }
      const end = text.indexOf('>', this.pos);
      if (end < 0) throw new Unsupported('unterminated hex string');
      let hex = text.slice(this.pos + 1, end).replace(/[^0-9a-fA-F]/g, '');
      this.pos = end + 1;
      if (hex.length % 2) hex += '0';
      return Buffer.from(hex, 'hex').toString('latin1');
    }
    if (c === 91) {
      this.pos++;
      const items = [];
      for (;;) {
        const item = this.next();
        if (item === undefined) throw new Unsupported('unterminated array');
        if (item instanceof Operator && item.op === ']') return items;
        items.push(item);
      }
    }
    if (c === 93) {
      this.pos++;
      return new Operator(']');
    }
    if (c === 62 && text.charCodeAt(this.pos + 1) === 62) {
      this.pos += 2;
      return new Operator('>>');
    }
    const start = this.pos;
    while (this.pos < text.length && !isSpace(text.charCodeAt(this.pos)) && !isDelimiter(text.charCodeAt(this.pos))) this.pos++;
    if (this.pos === start) {
      this.pos++; // a stray delimiter
      return new Operator(text[start]);
    }
    const word = text.slice(start, this.pos);
    if (startsNumber(c) && /^[+-]?(\d+\.?\d*|\.\d+)$/.test(word)) return Number(word);
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'null') return null;
    return new Operator(word);
  }

  dictionary() {
    /** @type {Dict} */
    const dict = Object.create(null);
    for (;;) {
      const key = this.next();
      if (key instanceof Operator && key.op === '>>') return dict;
      if (!(key instanceof Name)) throw new Unsupported('bad dictionary');
      dict[key.name] = this.value();
    }
  }

  /** An object, with `n g R` read as a reference. */
  value() {
    const item = this.next();
    if (typeof item === 'number' && Number.isInteger(item)) {
      const saved = this.pos;
      const gen = this.next();
      if (typeof gen === 'number') {
        const r = this.next();
        if (r instanceof Operator && r.op === 'R') return new Ref(item);
      }
      this.pos = saved;
    }
    return item;
  }

  literalString() {
    const { text } = this;
    let depth = 1;
    let out = '';
    this.pos++;
    while (this.pos < text.length) {
      const ch = text[this.pos++];
      if (ch === '(') depth++;
      else if (ch === ')' && --depth === 0) return out;
      if (ch !== '\\') {
        out += ch;
        continue;
      }
      const e = text[this.pos++];
      const escapes = /** @type {Record<string, string>} */ ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' });
      if (e in escapes) out += escapes[e];
      else if (e >= '0' && e <= '7') {
        let octal = e;
        while (octal.length < 3 && text[this.pos] >= '0' && text[this.pos] <= '7') octal += text[this.pos++];
        out += String.fromCharCode(parseInt(octal, 8) & 0xff);
      } else if (e === '\r') {
        if (text[this.pos] === '\n') this.pos++;
      } else if (e !== '\n') out += e;
    }
    throw new Unsupported('unterminated string');
  }
}

/** Arrays inside a dictionary read by `value()` keep `n g R` as numbers: resolve them here. */
function fixRefs(/** @type {any} */ value) {
  if (!Array.isArray(value)) return value;
  const out = [];
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] === 'number' && typeof value[i + 1] === 'number' && value[i + 2] instanceof Operator && value[i + 2].op === 'R') {
      out.push(new Ref(value[i]));
      i += 2;
    } else out.push(value[i]);
  }
  return out;
}

/** The objects of a PDF file, found by scanning for `n g obj` (and inside object streams), later ones winning. */
class Document {
  /** @param {Buffer} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.text = bytes.toString('latin1');
    /** @type {Map<number, { offset: number } | { stream: number, index: number }>} */
    this.where = new Map();
    /** @type {Map<number, any>} */
    this.cache = new Map();
    /** @type {Map<number, Map<number, any>>} */
    this.objectStreams = new Map();
    this.catalog = undefined;
    this.scan();
  }

  scan() {
    const pattern = /(\d+)\s+\d+\s+obj\b/g;
    /** @type {number[]} */
    const objectStreams = [];
    let match;
    while ((match = pattern.exec(this.text))) {
      const num = Number(match[1]);
      const offset = match.index + match[0].length;
      this.where.set(num, { offset });
      this.cache.delete(num);
      let object;
      try {
        object = this.parseAt(offset);
      } catch {
        continue;
      }
      if (object && typeof object === 'object' && 'dict' in object) {
        pattern.lastIndex = object.end;
        const type = object.dict.Type;
        if (type instanceof Name && type.name === 'ObjStm') objectStreams.push(num);
        if (type instanceof Name && type.name === 'XRef' && object.dict.Encrypt) throw new Unsupported('encrypted');
      }
    }
    for (const num of objectStreams) this.indexObjectStream(num);
    if (/\/Encrypt\b/.test(this.text)) throw new Unsupported('encrypted');
  }

  /** @param {number} num */
  indexObjectStream(num) {
    const own = this.where.get(num);
    const streamOffset = own && 'offset' in own ? own.offset : 0;
    const stream = this.get(new Ref(num));
    const data = this.streamData(stream);
    const lexer = new Lexer(data);
    const count = Number(stream.dict.N);
    const first = Number(stream.dict.First);
    if (!(count >= 0 && count <= data.length / 4) || !(first >= 0)) throw new Unsupported('bad object stream');
    /** @type {Map<number, { data: string, offset: number }>} */
    const objects = new Map();
    for (let index = 0; index < count; index++) {
      const objectNum = lexer.next();
      const offset = lexer.next();
      if (typeof objectNum !== 'number' || typeof offset !== 'number') throw new Unsupported('bad object stream');
      const where = this.where.get(objectNum);
      // An object written directly and in a stream: the one later in the file wins (incremental updates).
      if (where && 'offset' in where && where.offset > streamOffset) continue;
      this.where.set(objectNum, { stream: num, index });
      this.cache.delete(objectNum);
      objects.set(index, { data, offset: first + offset });
    }
    this.objectStreams.set(num, objects);
  }

  /** @param {number} offset */
  parseAt(offset) {
    const lexer = new Lexer(this.text, offset);
    const value = fixRefs(lexer.value());
    const save = lexer.pos;
    lexer.skipSpace();
    if (value && typeof value === 'object' && !Array.isArray(value) && this.text.startsWith('stream', lexer.pos)) {
      let start = lexer.pos + 6;
      if (this.text[start] === '\r') start++;
      if (this.text[start] === '\n') start++;
      const length = value.Length;
      let end = typeof length === 'number' ? start + length : -1;
      if (end < 0 || end > this.text.length || !/^\s*endstream/.test(this.text.slice(end, end + 20))) {
        end = this.text.indexOf('endstream', start);
        if (end < 0) throw new Unsupported('unterminated stream');
      }
      return { dict: fixDict(value), start, end };
    }
    lexer.pos = save;
    return fixDict(value);
  }

  /** @param {any} value */
  get(value) {
    for (let hops = 0; value instanceof Ref; hops++) {
      if (hops > MAX_DEPTH) throw new Unsupported('reference loop');
      const num = value.num;
      if (this.cache.has(num)) {
        value = this.cache.get(num);
        continue;
      }
      const where = this.where.get(num);
      let object = null;
      if (where && 'offset' in where) object = this.parseAt(where.offset);
      else if (where) {
        const entry = this.objectStreams.get(where.stream)?.get(where.index);
        if (entry) object = fixDict(fixRefs(new Lexer(entry.data, entry.offset).value()));
      }
      this.cache.set(num, object);
      value = object;
    }
    return value;
  }

  /** The decoded bytes of a stream, as a latin1 string. @param {Stream} stream */
  streamData(stream) {
    if (!stream || typeof stream.start !== 'number') throw new Unsupported('not a stream');
    let data = this.bytes.subarray(stream.start, stream.end);
    let filters = this.get(stream.dict.Filter);
    if (filters === undefined || filters === null) filters = [];
    if (!Array.isArray(filters)) filters = [filters];
    const parms = this.get(stream.dict.DecodeParms);
    if (parms && (Array.isArray(parms) ? parms.some((p) => p !== null) : true)) throw new Unsupported('decode parameters');
    for (const filter of filters.map((/** @type {any} */ f) => this.get(f))) {
      if (!(filter instanceof Name) || (filter.name !== 'FlateDecode' && filter.name !== 'Fl')) throw new Unsupported('filter');
      try {
        data = zlib.inflateSync(data, { maxOutputLength: MAX_STREAM_BYTES, finishFlush: zlib.constants.Z_SYNC_FLUSH });
      } catch {
        throw new Unsupported('inflate');
      }
    }
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('latin1');
  }

  root() {
    const trailers = [...this.text.matchAll(/trailer\s*<</g)];
    for (const trailer of trailers.reverse()) {
      const dict = new Lexer(this.text, trailer.index + 'trailer'.length).value();
      const root = dict && fixDict(dict).Root;
      if (root) return this.get(root);
    }
    // A cross-reference stream's dictionary, or else any catalog.
    /** @type {any} */
    let catalog;
    for (const num of [...this.where.keys()].sort((a, b) => a - b)) {
      let object;
      try {
        object = this.get(new Ref(num));
      } catch {
        continue;
      }
      if (object?.dict?.Type instanceof Name && object.dict.Type.name === 'XRef' && object.dict.Root) return this.get(object.dict.Root);
      if (object?.Type instanceof Name && object.Type.name === 'Catalog') catalog = object;
    }
    if (!catalog) throw new Unsupported('no catalog');
    return catalog;
  }

  /** Each page with its inherited resources and box, in order. */
  pages() {
    /** @type {{ page: Dict, resources: Dict, view: number[] }[]} */
    const pages = [];
    const seen = new Set();
    /** @param {any} node @param {any} inherited @param {number} depth */
    const walk = (node, inherited, depth) => {
      if (depth > MAX_DEPTH || seen.has(node)) throw new Unsupported('page tree');
      seen.add(node);
      const dict = this.get(node);
      if (!dict || typeof dict !== 'object') return;
      const here = {
        resources: dict.Resources ?? inherited.resources,
        mediaBox: dict.MediaBox ?? inherited.mediaBox,
        cropBox: dict.CropBox ?? inherited.cropBox,
      };
      const kids = this.get(dict.Kids);
      if (Array.isArray(kids)) {
        for (const kid of kids) walk(kid, here, depth + 1);
        return;
      }
      pages.push({ page: dict, resources: this.get(here.resources) ?? {}, view: this.view(here.mediaBox, here.cropBox) });
    };
    walk(this.root().Pages, {}, 0);
    return pages;
  }

  /** pdf.js's page.view: the crop box within the media box. @param {any} mediaBox @param {any} cropBox */
  view(mediaBox, cropBox) {
    /** @param {any} box */
    const rect = (box) => {
      const numbers = this.get(box);
      if (!Array.isArray(numbers) || numbers.length !== 4) return undefined;
      const [x1, y1, x2, y2] = numbers.map((n) => this.get(n));
      if (![x1, y1, x2, y2].every((n) => typeof n === 'number')) return undefined;
      return [Math.min(x1, x2), Math.min(y1, y2), Math.max(x1, x2), Math.max(y1, y2)];
    };
    const media = rect(mediaBox) ?? [0, 0, 612, 792];
    const crop = rect(cropBox);
    if (!crop) return media;
    const box = [Math.max(media[0], crop[0]), Math.max(media[1], crop[1]), Math.min(media[2], crop[2]), Math.min(media[3], crop[3])];
    return box[0] < box[2] && box[1] < box[3] ? box : media;
  }
}

/** @param {any} value */
function fixDict(value) {
  if (Array.isArray(value)) return fixRefs(value).map(fixDict);
  if (value && typeof value === 'object' && !(value instanceof Name) && !(value instanceof Ref) && !(value instanceof Operator)) {
    for (const key of Object.keys(value)) value[key] = fixDict(value[key]);
  }
  return value;
}

const STANDARD_FONTS = /^(Helvetica|Arial|Times|Courier)/;
const GLYPH_NAMES = /** @type {Record<string, string>} */ ({
  space: ' ',
  exclam: '!',
  quotedbl: '"',
  numbersign: '#',
  dollar: '$',
  percent: '%',
  ampersand: '&',
  quotesingle: "'",
  parenleft: '(',
  parenright: ')',
  asterisk: '*',
  plus: '+',
  comma: ',',
  hyphen: '-',
  period: '.',
  slash: '/',
  zero: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
  colon: ':',
  semicolon: ';',
  less: '<',
  equal: '=',
  greater: '>',
  question: '?',
  at: '@',
  bracketleft: '[',
  backslash: '\\',
  bracketright: ']',
  asciicircum: '^',
  underscore: '_',
  grave: '`',
  braceleft: '{',
  bar: '|',
  braceright: '}',
  asciitilde: '~',
  quoteleft: '\u2018',
  quoteright: '\u2019',
  quotedblleft: '\u201c',
  quotedblright: '\u201d',
  endash: '\u2013',
  emdash: '\u2014',
  bullet: '\u2022',
  nbspace: '\u00a0',
});

/** @param {string} glyph */
function unicodeOfGlyphName(glyph) {
  if (/^[A-Za-z]$/.test(glyph)) return glyph;
  if (glyph in GLYPH_NAMES) return GLYPH_NAMES[glyph];
  const uni = /^uni([0-9A-F]{4})$/.exec(glyph);
  if (uni) return String.fromCharCode(parseInt(uni[1], 16));
  throw new Unsupported(`glyph name ${glyph}`);
}

const winAnsi = new TextDecoder('windows-1252');
const macRoman = new TextDecoder('macintosh');
/** StandardEncoding: ASCII but for two quotes; the rest of it is left to pdf.js. @param {number} code */
function standardEncoding(code) {
  if (code === 0x27) return '\u2019';
  if (code === 0x60) return '\u2018';
  if (code >= 0x20 && code < 0x7f) return String.fromCharCode(code);
  return undefined;
}

/** @param {string} data */
function parseToUnicode(data) {
  /** @type {Map<number, string>} */
  const map = new Map();
  let codeBytes = 0;
  const lexer = new Lexer(data);
  /** @type {any[]} */
  const operands = [];
  const utf16 = (/** @type {string} */ bytes) =>
    Buffer.from(bytes.length % 2 ? `\0${bytes}` : bytes, 'latin1')
      .swap16()
      .toString('utf16le');
  const code = (/** @type {string} */ bytes) => {
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
      for (let i = 0; i + 1 < operands.length; i += 2) map.set(code(operands[i]), utf16(operands[i + 1]));
    } else if (item.op === 'endbfrange') {
      for (let i = 0; i + 2 < operands.length; i += 3) {
        const [low, high, target] = [code(operands[i]), code(operands[i + 1]), operands[i + 2]];
        if (high < low || high - low > 0xffff || map.size + high - low > MAX_CMAP_ENTRIES) throw new Unsupported('cmap range');
        for (let c = low; c <= high; c++) {
          if (Array.isArray(target)) {
            if (typeof target[c - low] === 'string') map.set(c, utf16(target[c - low]));
          } else {
            const text = utf16(target);
            map.set(c, text.slice(0, -1) + String.fromCharCode(text.charCodeAt(text.length - 1) + c - low));
          }
        }
      }
    }
    if (item.op !== ']') operands.length = 0;
    if (map.size > MAX_CMAP_ENTRIES) throw new Unsupported('cmap size');
  }
  return { map, codeBytes };
}

/**
 * @typedef {{ codeBytes: number, unicode: (code: number) => string, width: (code: number) => number | undefined, name: string }} Font
 */

/** @typedef {{ unicode: string, category: number, width: number | undefined }} Glyph */

/**
 * A font whose codes' text, category and width are looked up once each.
 * @param {Document} doc @param {any} ref @returns {{ codeBytes: number, glyph: (code: number) => Glyph }}
 */
function loadFont(doc, ref) {
  const font = readFont(doc, ref);
  /** @type {Glyph[]} */
  const glyphs = [];
  return {
    codeBytes: font.codeBytes,
    glyph(code) {
      let glyph = glyphs[code];
      if (glyph === undefined) {
        const unicode = font.unicode(code);
        glyphs[code] = glyph = { unicode, category: categoryOf(unicode), width: font.width(code) };
      }
      return glyph;
    },
  };
}

/** @param {Document} doc @param {any} ref @returns {Font} */
function readFont(doc, ref) {
  const font = doc.get(ref);
  if (!font || typeof font !== 'object') throw new Unsupported('font');
  const subtype = doc.get(font.Subtype)?.name;
  const toUnicodeStream = doc.get(font.ToUnicode);
  const toUnicode = toUnicodeStream?.dict ? parseToUnicode(doc.streamData(toUnicodeStream)) : undefined;
  if (subtype === 'Type0') {
    const encoding = doc.get(font.Encoding);
    if (!(encoding instanceof Name) || encoding.name !== 'Identity-H' || !toUnicode) throw new Unsupported('CID font');
    const descendant = doc.get(doc.get(font.DescendantFonts)?.[0]);
    const widths = new Map();
    const w = doc.get(descendant?.W) ?? [];
    for (let i = 0; i < w.length;) {
      const first = doc.get(w[i]);
      const next = doc.get(w[i + 1]);
      if (Array.isArray(next)) {
        next.forEach((width, j) => widths.set(first + j, doc.get(width)));
        i += 2;
      } else {
        const width = doc.get(w[i + 2]);
        if (next - first > 0xffff) throw new Unsupported('W range');
        for (let c = first; c <= next; c++) widths.set(c, width);
        i += 3;
      }
    }
    const defaultWidth = doc.get(descendant?.DW) ?? 1000;
    return /** @type {Font} */ ({
      codeBytes: 2,
      name: String(ref?.num ?? Math.random()),
      unicode: (code) => toUnicode.map.get(code) ?? String.fromCharCode(code), // as pdf.js does (.notdef is 0, a NUL)
      width: (code) => (widths.get(code) ?? defaultWidth) / 1000,
    });
  }
  if (subtype !== 'Type1' && subtype !== 'TrueType' && subtype !== 'MMType1') throw new Unsupported(`font ${subtype}`);
  const descriptor = doc.get(font.FontDescriptor);
  const embedded = Boolean(descriptor && (descriptor.FontFile || descriptor.FontFile2 || descriptor.FontFile3));
  const symbolic = Boolean((doc.get(descriptor?.Flags) ?? 0) & 4);
  const baseFont = doc.get(font.BaseFont)?.name ?? '';
  /** @type {(code: number) => string | undefined} */
  let byEncoding = () => undefined;
  const encoding = doc.get(font.Encoding);
  const base = encoding instanceof Name ? encoding.name : doc.get(encoding?.BaseEncoding)?.name;
  if (base === 'WinAnsiEncoding') byEncoding = (code) => winAnsi.decode(Uint8Array.of(code));
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
  const missingWidth = doc.get(descriptor?.MissingWidth);
  return /** @type {Font} */ ({
    codeBytes: 1,
    name: String(ref?.num ?? Math.random()),
    unicode: (code) => {
      const mapped = toUnicode?.map.get(code);
      if (mapped !== undefined) return mapped;
      const glyph = differences.get(code);
      const text = glyph !== undefined ? unicodeOfGlyphName(glyph) : byEncoding(code);
      if (text === undefined || text === '\ufffd') throw new Unsupported('code without unicode');
      return text;
    },
    width: (code) => {
      const width = Array.isArray(widthList) ? doc.get(widthList[code - firstChar]) : undefined;
      if (typeof width === 'number') return width / 1000;
      return typeof missingWidth === 'number' && Array.isArray(widthList) ? missingWidth / 1000 : undefined;
    },
  });
}

/** @param {number[]} m @param {number[]} n  m after n (pdf.js's Util.transform(m, n)). */
const transform = (m, n) => [
  m[0] * n[0] + m[2] * n[1],
  m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3],
  m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4],
  m[1] * n[4] + m[3] * n[5] + m[5],
];

const RIGHT_TO_LEFT = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]/;
const NORMALIZE =
  /([\u00a0\u00b5\u037e\u0eb3\u2000-\u200a\u202f\u2126\ufb00-\ufb04\ufb06\ufb20-\ufb36\ufb38-\ufb3c\ufb3e\ufb40-\ufb41\ufb43-\ufb44\ufb46-\ufba1\ufba4-\ufba9\ufbae-\ufbb1\ufbd3-\ufbdc\ufbde-\ufbe7\ufbea-\ufbf8\ufbfc-\ufbfd\ufc00-\ufc5d\ufc64-\ufcf1\ufcf5-\ufd3d\ufd88\ufdf4\ufdfa-\ufdfb\ufe71\ufe77\ufe79\ufe7b\ufe7d]+)|(\ufb05+)/gu;
const [LETTER, WHITESPACE, DIACRITIC, FORMAT_MARK] = [0, 1, 2, 3];
/** Math.hypot of two, without its cost (a call with arguments; a tenth of the reading once). */
const length = (/** @type {number} */ x, /** @type {number} */ y) => Math.sqrt(x * x + y * y);
/** @type {Map<string, number>} */
const categories = new Map();
/** pdf.js's getCharUnicodeCategory. @param {string} unicode */
function categoryOf(unicode) {
  let category = categories.get(unicode);
  if (category === undefined) {
    category = /^\s/u.test(unicode) ? WHITESPACE : /^\p{Mn}$/u.test(unicode) ? DIACRITIC : /^\p{Cf}$/u.test(unicode) ? FORMAT_MARK : LETTER;
    if (categories.size < 65536) categories.set(unicode, category);
  }
  return category;
}

/**
 * The text of one page's content, in pdf.js's words: glyphs placed next to each other (a gap under
 * about a tenth of the font size) make one word; a space glyph, a wider gap, another line, a new font or
 * a form XObject end it.
 * @param {Document} doc @param {string} content @param {Dict} resources @param {number[]} view
 */
function pageText(doc, content, resources, view) {
  let out = ''; // a string, not an array of glyphs joined at the end: one glyph each, they cost more to join
  let separator = ''; // what goes before the next glyph: '', ' ' or '\n'
  /** @type {Map<any, ReturnType<typeof loadFont>>} */
  const fonts = new Map();
  // The current word (pdf.js's text content item) and the place after its last glyph.
  const item = {
    open: false,
    fontSize: 0,
    height: 0,
    advanceScale: 1,
    /** The transform after its last glyph: linear part and place. */
    prev: /** @type {number[] | null} */ (null),
    prevX: 0,
    prevY: 0,
    prevDrift: 0,
    prevLine: 0,
    afterSpace: false,
  };
  // Fonts without widths (the standard 14 often come without): glyphs advanced by an unknown width since
  // the line matrix was last set (drift), and which setting of it that was (line).
  let drift = 0;
  let line = 0;
  const flush = () => {
    if (item.open) separator ||= ' ';
    item.open = false;
  };

  /** @param {string} data @param {Dict} res @param {number[]} ctm @param {number} depth */
  const run = (data, res, ctm, depth) => {
    if (depth > MAX_DEPTH) throw new Unsupported('form nesting');
    const lexer = new Lexer(data);
    const state = { ctm, font: /** @type {ReturnType<typeof loadFont> | null} */ (null), fontKey: '', fontSize: 0, tc: 0, tw: 0, th: 1, tl: 0, rise: 0 };
    /** @type {typeof state[]} */
    const saved = [];
    let tm = [1, 0, 0, 1, 0, 0];
    let tlm = [1, 0, 0, 1, 0, 0];
    /** @type {any[]} */
    const operands = [];
    /** @type {Dict | undefined} */
    let fontsOfRes;
    const fontDict = () => (fontsOfRes ??= doc.get(doc.get(res.Font)) ?? {});

    // The glyph's transform (pdf.js's getCurrentTextTransform): its linear part changes only with the
    // matrices, the font size and the scaling, so it is kept until one of those does. Both matrices are
    // replaced, never changed in place, but for the text matrix's place (translate): the same arrays
    // mean the same linear part.
    // Its place (glyph[0], glyph[1]) is computed per glyph, without allocating: in a Float64Array, as a
    // double in a closure's variable would be a new heap number at every write.
    let linear = [1, 0, 0, 1];
    /** @type {number[] | null} */
    let linearCtm = null;
    /** @type {number[] | null} */
    let linearTm = null;
    let linearSize = 0;
    let linearScale = 0;
    const glyph = new Float64Array(2);
    const textTransform = () => {
      const { ctm: c, fontSize, th, rise } = state;
      if (linearCtm !== c || linearTm !== tm || linearSize !== fontSize || linearScale !== th) {
        linear = transform(c, transform([tm[0], tm[1], tm[2], tm[3], 0, 0], [fontSize * th, 0, 0, fontSize, 0, 0])).slice(0, 4);
        [linearCtm, linearTm, linearSize, linearScale] = [c, tm, fontSize, th];
      }
      const x = tm[2] * rise + tm[4];
      const y = tm[3] * rise + tm[5];
      glyph[0] = c[0] * x + c[2] * y + c[4];
      glyph[1] = c[1] * x + c[3] * y + c[5];
      return linear;
    };
    const translate = (/** @type {number} */ x) => {
      tm[4] += tm[0] * x;
      tm[5] += tm[1] * x;
    };
    const setLine = () => {
      tm = tlm.slice();
      drift = 0;
      line++;
    };
    const openItem = () => {
      if (item.open) return;
      const trm = textTransform();
      item.open = true;
      item.fontSize = state.fontSize;
      item.height = length(trm[2], trm[3]);
      item.advanceScale = length(state.ctm[0], state.ctm[1]) * length(tlm[0], tlm[1]);
    };

    /** pdf.js's compareWithLastPosition, reduced to: does this glyph continue the word? @param {number} glyphWidth */
    const place = (glyphWidth) => {
      const trm = textTransform();
      let x = glyph[0];
      let y = glyph[1];
      if (drift === 0 && (x + glyphWidth < view[0] || x > view[2] || y < view[1] || y > view[3])) return false;
      if (!item.open || item.prev === null) return true; // a new word either way
      if (item.afterSpace) {
        flush(); // a space glyph ends the word, wherever the next glyph is
        return true;
      }
      const known = (drift === 0 && item.prevDrift === 0) || (item.prevLine === line && item.prevDrift === drift);
      let lastX = item.prevX;
      let lastY = item.prevY;
      if (lastX === x && lastY === y && known) return true;
      if (trm[0] && trm[1] === 0 && trm[2] === 0) {
        if (trm[0] < 0) [x, y, lastX, lastY] = [-x, -y, -lastX, -lastY];
      } else if (trm[1] && trm[0] === 0 && trm[3] === 0) {
        [x, y, lastX, lastY] = trm[1] > 0 ? [y, x, lastY, lastX] : [-y, -x, -lastY, -lastX];
      } else {
        const rotate = (/** @type {number} */ px, /** @type {number} */ py, /** @type {number[]} */ m) => {
          const scale = Math.hypot(m[0], m[1]);
          return [(m[0] * px + m[1] * py) / scale, (m[2] * px + m[3] * py) / scale];
        };
        [x, y] = rotate(x, y, trm);
        [lastX, lastY] = rotate(lastX, lastY, item.prev);
      }
      const advanceY = y - lastY;
      const unaligned = !(trm[1] === 0 && trm[2] === 0 && item.prev[1] === 0 && item.prev[2] === 0);
      if (!known && (unaligned || Math.abs(advanceY) <= item.height)) throw new Unsupported('text placed after glyphs of unknown width');
      const advanceX = (x - lastX) / item.advanceScale;
      if (advanceX < NEGATIVE_SPACE * item.fontSize || Math.abs(advanceY) > item.height) {
        separator = Math.abs(advanceY) > (advanceX < NEGATIVE_SPACE * item.fontSize ? 0.5 : 1) * item.height ? '\n' : ' ';
        item.open = false;
      } else if (advanceX > TRACKING_SPACE * item.fontSize || Math.abs(advanceY) > item.height * VERTICAL_SHIFT) flush();
      return true;
    };

    /** @param {string} bytes @param {number} extraSpacing */
    const show = (bytes, extraSpacing) => {
      const font = state.font;
      if (!font) return;
      if (bytes.length % font.codeBytes) throw new Unsupported('odd code length');
      const count = bytes.length / font.codeBytes;
      for (let i = 0; i < count; i++) {
        const code = font.codeBytes === 2 ? bytes.charCodeAt(2 * i) * 256 + bytes.charCodeAt(2 * i + 1) : bytes.charCodeAt(i);
        const { unicode, category, width } = font.glyph(code);
        const charSpacing = state.tc + (i + 1 === count ? extraSpacing : 0);
        let scaled = (width ?? 0) * state.fontSize;
        if (category === FORMAT_MARK) continue;
        if (category === WHITESPACE) {
          if (width === undefined) drift++;
          translate((charSpacing + scaled + state.tw) * state.th);
          item.afterSpace = true;
          continue;
        }
        const diacritic = category === DIACRITIC;
        if (!diacritic && !place(scaled)) {
          if (width === undefined) drift++;
          translate(scaled * state.th);
          continue;
        }
        if (!item.open) {
          out += separator;
          separator = '';
        }
        openItem();
        item.afterSpace = false;
        if (diacritic) scaled = 0;
        if (width === undefined && !diacritic) drift++;
        translate(scaled * state.th);
        if (scaled || width === undefined) {
          item.prev = textTransform();
          item.prevX = glyph[0];
          item.prevY = glyph[1];
          item.prevDrift = drift;
          item.prevLine = line;
        }
        out += unicode;
        if (charSpacing) translate(charSpacing * state.th);
      }
    };

    for (let token = lexer.next(); token !== undefined; token = lexer.next()) {
      if (!(token instanceof Operator)) {
        operands.push(token);
        continue;
      }
      const a = operands;
      switch (token.op) {
        case 'q':
          saved.push({ ...state });
          break;
        case 'Q':
          Object.assign(state, saved.pop() ?? {});
          break;
        case 'cm':
          if (a.length >= 6) state.ctm = transform(state.ctm, a.slice(-6));
          break;
        case 'BT':
          tm = [1, 0, 0, 1, 0, 0];
          tlm = [1, 0, 0, 1, 0, 0];
          drift = 0;
          line++;
          break;
        case 'Tf': {
          const [name, size] = a.slice(-2);
          if (!(name instanceof Name)) break;
          if (state.font && name.name === state.fontKey && size === state.fontSize) break;
          flush();
          const ref = fontDict()[name.name];
          if (ref === undefined) throw new Unsupported('missing font');
          const key = ref instanceof Ref ? ref.num : ref;
          if (!fonts.has(key)) fonts.set(key, loadFont(doc, ref));
          state.font = fonts.get(key) ?? null;
          state.fontKey = name.name;
          state.fontSize = Number(size);
          break;
        }
        case 'Tc':
          state.tc = Number(a.at(-1));
          break;
        case 'Tw':
          state.tw = Number(a.at(-1));
          break;
        case 'Tz':
          state.th = Number(a.at(-1)) / 100;
          break;
        case 'TL':
          state.tl = Number(a.at(-1));
          break;
        case 'Ts':
          state.rise = Number(a.at(-1));
          break;
        case 'TD':
          state.tl = -Number(a.at(-1));
        // falls through
        case 'Td':
          tlm = [tlm[0], tlm[1], tlm[2], tlm[3], tlm[0] * a.at(-2) + tlm[2] * a.at(-1) + tlm[4], tlm[1] * a.at(-2) + tlm[3] * a.at(-1) + tlm[5]];
          setLine();
          break;
        case 'Tm':
          if (a.length >= 6) tlm = a.slice(-6).map(Number);
          setLine();
          if (item.open) item.advanceScale = length(state.ctm[0], state.ctm[1]) * length(tlm[0], tlm[1]);
          break;
        case 'T*':
          tlm = [tlm[0], tlm[1], tlm[2], tlm[3], -tlm[2] * state.tl + tlm[4], -tlm[3] * state.tl + tlm[5]];
          setLine();
          break;
        case 'Tj':
          if (typeof a.at(-1) === 'string') show(a.at(-1), 0);
          break;
        case "'":
        case '"':
          if (token.op === '"' && a.length >= 3) [state.tw, state.tc] = [Number(a.at(-3)), Number(a.at(-2))];
          tlm = [tlm[0], tlm[1], tlm[2], tlm[3], -tlm[2] * state.tl + tlm[4], -tlm[3] * state.tl + tlm[5]];
          setLine();
          if (typeof a.at(-1) === 'string') show(a.at(-1), 0);
          break;
        case 'TJ': {
          const elements = a.at(-1);
          if (!Array.isArray(elements) || !state.font) break;
          let buffer = '';
          for (const element of elements) {
            if (typeof element === 'string') buffer += element;
            else if (typeof element === 'number' && element !== 0) {
              const extra = (element * -state.fontSize) / 1000;
              if (buffer) show(buffer, extra);
              else translate((state.tc + extra) * state.th);
              buffer = '';
            }
          }
          if (buffer) show(buffer, 0);
          break;
        }
        case 'gs': {
          const graphicsState = doc.get(doc.get(doc.get(res.ExtGState)?.[a.at(-1)?.name]));
          if (graphicsState?.Font) throw new Unsupported('font in ExtGState');
          break;
        }
        case 'Do': {
          const name = a.at(-1);
          const xobject = name instanceof Name ? doc.get(doc.get(doc.get(res.XObject)?.[name.name])) : undefined;
          flush();
          if (xobject?.dict && doc.get(xobject.dict.Subtype)?.name === 'Form') {
            const matrix = doc.get(xobject.dict.Matrix);
            const formCtm =
              Array.isArray(matrix) && matrix.length === 6
                ? transform(
                    state.ctm,
                    matrix.map((n) => doc.get(n)),
                  )
                : state.ctm;
            const outerDrift = drift;
            run(doc.streamData(xobject), doc.get(xobject.dict.Resources) ?? res, formCtm, depth + 1);
            flush();
            drift = outerDrift;
            line++;
          }
          break;
        }
        case 'BI': {
          const end = /\sEI(?=[\s]|$)/g;
          end.lastIndex = lexer.text.indexOf('ID', lexer.pos) + 3;
          if (end.lastIndex < 3 || !end.exec(lexer.text)) throw new Unsupported('inline image');
          lexer.pos = end.lastIndex;
          break;
        }
        case 'd0':
        case 'd1':
          throw new Unsupported('glyph procedure');
      }
      operands.length = 0;
    }
  };
  run(content, resources, [1, 0, 0, 1, 0, 0], 0);
  return out;
}

/**
 * The text of a PDF, page after page (pages separated by '\n', words by a space or a line break), at
 * most about `maxChars` characters; Unsupported when it should be read by pdf.js instead.
 * @param {Buffer} bytes @param {number} maxChars
 */
export function readText(bytes, maxChars) {
  const doc = new Document(bytes);
  const pages = [];
  let length = 0;
  for (const { page, resources, view } of doc.pages()) {
    if (length >= maxChars) break;
    let contents = doc.get(page.Contents);
    if (contents === undefined || contents === null) contents = [];
    const streams = Array.isArray(contents) ? contents.map((ref) => doc.get(ref)) : [contents];
    const content = streams.map((stream) => doc.streamData(stream)).join('\n');
    const text = pageText(doc, content, resources, view).replace(NORMALIZE, (_, some, st) => (some ? some.normalize('NFKC') : 'ſt'.repeat(st.length)));
    if (RIGHT_TO_LEFT.test(text)) throw new Unsupported('right-to-left text');
    pages.push(text);
    length += text.length;
  }
  return pages.join('\n');
}
