// @ts-check
// The objects of a PDF file, read the cheap way for readText.mjs: found by scanning for `n g obj` (and
// inside object streams), the pages walked with their inherited resources and boxes, streams inflated
// (Flate only) within a cap. What it cannot read with confidence (encryption, other filters) throws
// Unsupported: the caller asks pdf.js instead.
import zlib from 'node:zlib';
import { Lexer, Name, Operator, Ref, Unsupported } from './contentReader.mjs';

/** The most bytes one inflated stream may have; more is left to pdf.js (and the pool's limits). */
const MAX_STREAM_BYTES = 64 * 1024 * 1024;
/** Nesting of form XObjects and page-tree levels followed at most. */
export const MAX_DEPTH = 32;

/** @typedef {import('./contentReader.mjs').Dict} Dict */
/** @typedef {{ dict: Dict, start: number, end: number }} Stream */

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
export class Document {
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
