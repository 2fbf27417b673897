// @ts-check
// The one reader of PDF syntax for the text of pages: objects and content-stream operations, read from a
// latin1 string (one character per byte). It serves the text extraction for search (readText.mjs) and
// the removal of text tags (removeTextTags.mjs), so that both read a page as pdf.js does; fonts are in
// contentFonts.mjs. Anything it cannot read throws Unsupported.

export class Unsupported extends Error {}

/** Arrays and dictionaries nested in each other at most: a deeper one is hostile, not a document. */
const MAX_NESTING = 128;

export class Name {
  /** @param {string} name */
  constructor(name) {
    this.name = name;
  }
}
export class Ref {
  /** @param {number} num */
  constructor(num) {
    this.num = num;
  }
}
/** A keyword: an operator of a content stream, or `R`, `obj`, `]`, `>>` and the like while reading objects. */
export class Operator {
  /** @param {string} op */
  constructor(op) {
    this.op = op;
  }
}
/** @typedef {{ [key: string]: any }} Dict */

const isSpace = (/** @type {number} */ c) => c === 32 || c === 10 || c === 13 || c === 9 || c === 12 || c === 0;
/** A digit, sign or point: the operators, names and keywords that fill a content stream skip the number test. */
const startsNumber = (/** @type {number} */ c) => (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
const isDelimiter = (/** @type {number} */ c) =>
  c === 40 || c === 41 || c === 60 || c === 62 || c === 91 || c === 93 || c === 123 || c === 125 || c === 47 || c === 37;
const ESCAPES = /** @type {Record<string, string>} */ ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' });

/** Reads PDF objects (and content-stream operators) from a latin1 string, one byte per character. */
export class Lexer {
  /** @param {string} text @param {number} [position] */
  constructor(text, position = 0) {
    this.text = text;
    this.pos = position;
    this.depth = 0;
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

  /**
   * The next object or operator; undefined at the end. Strings come back as their bytes (latin1), `]` and
   * `>>` as operators. @returns {any}
   */
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
        return this.nested(() => this.dictionary());
      }
      const end = text.indexOf('>', this.pos);
      if (end < 0) throw new Unsupported('unterminated hex string');
      // As pdf.js: characters other than hex digits are skipped, and an odd last digit is followed by 0.
      let hex = text.slice(this.pos + 1, end).replace(/[^0-9a-fA-F]/g, '');
      this.pos = end + 1;
      if (hex.length % 2) hex += '0';
      return Buffer.from(hex, 'hex').toString('latin1');
    }
    if (c === 91) {
      this.pos++;
      return this.nested(() => this.array());
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

  /** @template T @param {() => T} read */
  nested(read) {
    if (++this.depth > MAX_NESTING) throw new Unsupported('nesting');
    const value = read();
    this.depth--;
    return value;
  }

  array() {
    const items = [];
    for (;;) {
      const item = this.next();
      if (item === undefined) throw new Unsupported('unterminated array');
      if (item instanceof Operator && item.op === ']') return items;
      items.push(item);
    }
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

  /**
   * A literal string's bytes. An end of line in it is kept as it is written (a bare CR stays a CR): ISO
   * 32000-1 7.3.4.2 reads any end of line as one LF, but pdf.js and Poppler keep the byte, and the text we
   * read must be the text pdf.js reads (it measured the tags, and it reads what we cannot).
   */
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
      if (e in ESCAPES) out += ESCAPES[e];
      else if (e >= '0' && e <= '7') {
        let octal = e;
        while (octal.length < 3 && text[this.pos] >= '0' && text[this.pos] <= '7') octal += text[this.pos++];
        out += String.fromCharCode(parseInt(octal, 8) & 0xff);
      } else if (e === '\r') {
        if (text[this.pos] === '\n') this.pos++; // a line continued
      } else if (e !== '\n' && e !== undefined) out += e; // an unknown escape drops its backslash
    }
    throw new Unsupported('unterminated string');
  }
}

/** The end of an inline image's data, from `at` (after ID): after the EI between whitespace that ends it. */
function endOfInlineImage(/** @type {string} */ text, /** @type {number} */ at) {
  const end = /[\0\t\n\f\r ]EI(?=[\0\t\n\f\r ]|$)/g;
  end.lastIndex = at;
  if (!end.exec(text)) throw new Unsupported('inline image');
  return end.lastIndex;
}

/**
 * Calls `visit` with each operation of a content stream in order: its operator, its operands and its
 * [start, end) in `data` (from its first operand). The operands array is reused once `visit` returns. An
 * inline image (BI … ID data EI) is a BI and an ID operation, the ID ending after EI.
 * @param {string} data
 * @param {(operator: string, operands: any[], start: number, end: number) => void} visit
 */
export function eachOperation(data, visit) {
  const lexer = new Lexer(data);
  /** @type {any[]} */
  const operands = [];
  let start = 0;
  for (;;) {
    lexer.skipSpace();
    if (operands.length === 0) start = lexer.pos;
    const token = lexer.next();
    if (token === undefined) return;
    if (!(token instanceof Operator)) {
      operands.push(token);
      continue;
    }
    if (token.op === 'ID') lexer.pos = endOfInlineImage(data, lexer.pos);
    visit(token.op, operands, start, lexer.pos);
    operands.length = 0;
  }
}

/** @param {number[]} m @param {number[]} n  m after n (pdf.js's Util.transform(m, n)). */
export const transform = (m, n) => [
  m[0] * n[0] + m[2] * n[1],
  m[1] * n[0] + m[3] * n[1],
  m[0] * n[2] + m[2] * n[3],
  m[1] * n[2] + m[3] * n[3],
  m[0] * n[4] + m[2] * n[5] + m[4],
  m[1] * n[4] + m[3] * n[5] + m[5],
];
