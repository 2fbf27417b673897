// @ts-check
// A PDF's text the cheap way, for the common case (extractText.mjs): the page content streams walked
// directly — inflated, tokenized, the strings of Tj, TJ, ' and " decoded with the font's ToUnicode CMap
// or a simple encoding (contentReader.mjs, contentFonts.mjs) — with pdf.js's rules for where one word
// ends and the next begins, so that search finds the same words. Anything it cannot decode with
// confidence (encryption, Type3 fonts, CID fonts without ToUnicode, filters other than Flate, text whose
// spacing it cannot place, right-to-left scripts) throws Unsupported: the caller asks pdf.js instead.
// Runs in a PDF process of the pool, whose limits bound it; every inflated stream is also capped.
import { readFont } from './contentFonts.mjs';
import { eachOperation, Name, Ref, transform, Unsupported } from './contentReader.mjs';
import { Document, MAX_DEPTH } from './pdfObjects.mjs';

/** @typedef {import('./contentReader.mjs').Dict} Dict */

// pdf.js's thresholds (getTextContent), in units of the font size.
const TRACKING_SPACE = 0.102;
const NEGATIVE_SPACE = -0.2;
const VERTICAL_SHIFT = 0.25;

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

/** @typedef {{ unicode: string, category: number, width: number | undefined }} Glyph */

/**
 * A font whose codes' text, category and width (in units of the font size) are looked up once each; a
 * code the font gives no text for is left to pdf.js.
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
        if (unicode === undefined) throw new Unsupported('code without unicode');
        const width = font.width(code);
        glyphs[code] = glyph = { unicode, category: categoryOf(unicode), width: width === undefined ? undefined : width / 1000 };
      }
      return glyph;
    },
  };
}

/**
 * The text of one page, in pdf.js's words: glyphs placed next to each other (a gap under about a tenth
 * of the font size) make one word; a space glyph, a wider gap, another line, a new font or a form
 * XObject end it.
 */
class PageText {
  /** @param {Document} doc @param {number[]} view */
  constructor(doc, view) {
    this.doc = doc;
    this.view = view;
    this.out = ''; // a string, not an array of glyphs joined at the end: one glyph each, they cost more to join
    this.separator = ''; // what goes before the next glyph: '', ' ' or '\n'
    /** @type {Map<any, ReturnType<typeof loadFont>>} */
    this.fonts = new Map();
    // The current word (pdf.js's text content item) and the place after its last glyph.
    this.item = {
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
    this.drift = 0;
    this.line = 0;
  }

  flush() {
    if (this.item.open) this.separator ||= ' ';
    this.item.open = false;
  }
}

/** One content stream (the page's, or a form XObject's) read into the text of its page, with its own graphics and text state. */
class ContentText {
  /** @param {PageText} page @param {Dict} res @param {number[]} ctm @param {number} depth */
  constructor(page, res, ctm, depth) {
    if (depth > MAX_DEPTH) throw new Unsupported('form nesting');
    this.page = page;
    this.res = res;
    this.depth = depth;
    this.state = { ctm, font: /** @type {ReturnType<typeof loadFont> | null} */ (null), fontKey: '', fontSize: 0, tc: 0, tw: 0, th: 1, tl: 0, rise: 0 };
    /** @type {(typeof this.state)[]} */
    this.saved = [];
    this.tm = [1, 0, 0, 1, 0, 0];
    this.tlm = [1, 0, 0, 1, 0, 0];
    /** @type {Dict | undefined} */
    this.fontsOfRes = undefined;
    // The glyph's transform (pdf.js's getCurrentTextTransform): its linear part changes only with the
    // matrices, the font size and the scaling, so it is kept until one of those does. Both matrices are
    // replaced, never changed in place, but for the text matrix's place (translate): the same arrays
    // mean the same linear part.
    // Its place (glyph[0], glyph[1]) is computed per glyph, without allocating: in a Float64Array, as a
    // double in an object's field would be a new heap number at every write.
    this.linear = [1, 0, 0, 1];
    /** @type {number[] | null} */
    this.linearCtm = null;
    /** @type {number[] | null} */
    this.linearTm = null;
    this.linearSize = 0;
    this.linearScale = 0;
    this.glyph = new Float64Array(2);
  }

  /** @param {string} data */
  read(data) {
    eachOperation(data, (operator, operands) => this.operate(operator, operands));
  }

  fontDict() {
    const { doc } = this.page;
    return (this.fontsOfRes ??= doc.get(doc.get(this.res.Font)) ?? {});
  }

  textTransform() {
    const { state, tm, glyph } = this;
    const { ctm: c, fontSize, th, rise } = state;
    if (this.linearCtm !== c || this.linearTm !== tm || this.linearSize !== fontSize || this.linearScale !== th) {
      this.linear = transform(c, transform([tm[0], tm[1], tm[2], tm[3], 0, 0], [fontSize * th, 0, 0, fontSize, 0, 0])).slice(0, 4);
      [this.linearCtm, this.linearTm, this.linearSize, this.linearScale] = [c, tm, fontSize, th];
    }
    const x = tm[2] * rise + tm[4];
    const y = tm[3] * rise + tm[5];
    glyph[0] = c[0] * x + c[2] * y + c[4];
    glyph[1] = c[1] * x + c[3] * y + c[5];
    return this.linear;
  }

  /** @param {number} x */
  translate(x) {
    const { tm } = this;
    tm[4] += tm[0] * x;
    tm[5] += tm[1] * x;
  }

  setLine() {
    this.tm = this.tlm.slice();
    this.page.drift = 0;
    this.page.line++;
  }

  openItem() {
    const { item } = this.page;
    if (item.open) return;
    const trm = this.textTransform();
    item.open = true;
    item.fontSize = this.state.fontSize;
    item.height = length(trm[2], trm[3]);
    item.advanceScale = length(this.state.ctm[0], this.state.ctm[1]) * length(this.tlm[0], this.tlm[1]);
  }

  /** pdf.js's compareWithLastPosition, reduced to: does this glyph continue the word? @param {number} glyphWidth */
  place(glyphWidth) {
    const { page, glyph } = this;
    const { item, view, drift } = page;
    const trm = this.textTransform();
    let x = glyph[0];
    let y = glyph[1];
    if (drift === 0 && (x + glyphWidth < view[0] || x > view[2] || y < view[1] || y > view[3])) return false;
    if (!item.open || item.prev === null) return true; // a new word either way
    if (item.afterSpace) {
      page.flush(); // a space glyph ends the word, wherever the next glyph is
      return true;
    }
    const known = (drift === 0 && item.prevDrift === 0) || (item.prevLine === page.line && item.prevDrift === drift);
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
      page.separator = Math.abs(advanceY) > (advanceX < NEGATIVE_SPACE * item.fontSize ? 0.5 : 1) * item.height ? '\n' : ' ';
      item.open = false;
    } else if (advanceX > TRACKING_SPACE * item.fontSize || Math.abs(advanceY) > item.height * VERTICAL_SHIFT) page.flush();
    return true;
  }

  /** @param {string} bytes @param {number} extraSpacing */
  show(bytes, extraSpacing) {
    const { state, page, glyph } = this;
    const { item } = page;
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
        if (width === undefined) page.drift++;
        this.translate((charSpacing + scaled + state.tw) * state.th);
        item.afterSpace = true;
        continue;
      }
      const diacritic = category === DIACRITIC;
      if (!diacritic && !this.place(scaled)) {
        if (width === undefined) page.drift++;
        this.translate(scaled * state.th);
        continue;
      }
      if (!item.open) {
        page.out += page.separator;
        page.separator = '';
      }
      this.openItem();
      item.afterSpace = false;
      if (diacritic) scaled = 0;
      if (width === undefined && !diacritic) page.drift++;
      this.translate(scaled * state.th);
      if (scaled || width === undefined) {
        item.prev = this.textTransform();
        item.prevX = glyph[0];
        item.prevY = glyph[1];
        item.prevDrift = page.drift;
        item.prevLine = page.line;
      }
      page.out += unicode;
      if (charSpacing) this.translate(charSpacing * state.th);
    }
  }

  /** TJ: strings, and numbers that move the pen between them. @param {any} elements */
  showArray(elements) {
    const { state } = this;
    if (!Array.isArray(elements) || !state.font) return;
    let buffer = '';
    for (const element of elements) {
      if (typeof element === 'string') buffer += element;
      else if (typeof element === 'number' && element !== 0) {
        const extra = (element * -state.fontSize) / 1000;
        if (buffer) this.show(buffer, extra);
        else this.translate((state.tc + extra) * state.th);
        buffer = '';
      }
    }
    if (buffer) this.show(buffer, 0);
  }

  /** Tf. @param {any} name @param {any} size */
  setFont(name, size) {
    const { state, page } = this;
    if (!(name instanceof Name)) return;
    if (state.font && name.name === state.fontKey && size === state.fontSize) return;
    page.flush();
    const ref = this.fontDict()[name.name];
    if (ref === undefined) throw new Unsupported('missing font');
    const key = ref instanceof Ref ? ref.num : ref;
    if (!page.fonts.has(key)) page.fonts.set(key, loadFont(page.doc, ref));
    state.font = page.fonts.get(key) ?? null;
    state.fontKey = name.name;
    state.fontSize = Number(size);
  }

  /** Do: a form XObject's text, in its own words. @param {any} name */
  drawXObject(name) {
    const { page, res, state } = this;
    const { doc } = page;
    const xobject = name instanceof Name ? doc.get(doc.get(doc.get(res.XObject)?.[name.name])) : undefined;
    page.flush();
    if (!xobject?.dict || doc.get(xobject.dict.Subtype)?.name !== 'Form') return;
    const matrix = doc.get(xobject.dict.Matrix);
    const formCtm =
      Array.isArray(matrix) && matrix.length === 6
        ? transform(
            state.ctm,
            matrix.map((n) => doc.get(n)),
          )
        : state.ctm;
    const outerDrift = page.drift;
    new ContentText(page, doc.get(xobject.dict.Resources) ?? res, formCtm, this.depth + 1).read(doc.streamData(xobject));
    page.flush();
    page.drift = outerDrift;
    page.line++;
  }

  /** @param {string} operator @param {any[]} a its operands */
  operate(operator, a) {
    const { state, page } = this;
    const { tlm } = this;
    switch (operator) {
      case 'q':
        this.saved.push({ ...state });
        break;
      case 'Q':
        Object.assign(state, this.saved.pop() ?? {});
        break;
      case 'cm':
        if (a.length >= 6) state.ctm = transform(state.ctm, a.slice(-6));
        break;
      case 'BT':
        this.tm = [1, 0, 0, 1, 0, 0];
        this.tlm = [1, 0, 0, 1, 0, 0];
        page.drift = 0;
        page.line++;
        break;
      case 'Tf': {
        const [name, size] = a.slice(-2);
        this.setFont(name, size);
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
        this.tlm = [tlm[0], tlm[1], tlm[2], tlm[3], tlm[0] * a.at(-2) + tlm[2] * a.at(-1) + tlm[4], tlm[1] * a.at(-2) + tlm[3] * a.at(-1) + tlm[5]];
        this.setLine();
        break;
      case 'Tm':
        if (a.length >= 6) this.tlm = a.slice(-6).map(Number);
        this.setLine();
        if (page.item.open) page.item.advanceScale = length(state.ctm[0], state.ctm[1]) * length(this.tlm[0], this.tlm[1]);
        break;
      case 'T*':
        this.tlm = [tlm[0], tlm[1], tlm[2], tlm[3], -tlm[2] * state.tl + tlm[4], -tlm[3] * state.tl + tlm[5]];
        this.setLine();
        break;
      case 'Tj':
        if (typeof a.at(-1) === 'string') this.show(a.at(-1), 0);
        break;
      case "'":
      case '"':
        if (operator === '"' && a.length >= 3) [state.tw, state.tc] = [Number(a.at(-3)), Number(a.at(-2))];
        this.tlm = [tlm[0], tlm[1], tlm[2], tlm[3], -tlm[2] * state.tl + tlm[4], -tlm[3] * state.tl + tlm[5]];
        this.setLine();
        if (typeof a.at(-1) === 'string') this.show(a.at(-1), 0);
        break;
      case 'TJ':
        this.showArray(a.at(-1));
        break;
      case 'gs': {
        const { doc } = page;
        const graphicsState = doc.get(doc.get(doc.get(this.res.ExtGState)?.[a.at(-1)?.name]));
        if (graphicsState?.Font) throw new Unsupported('font in ExtGState');
        break;
      }
      case 'Do':
        this.drawXObject(a.at(-1));
        break;
      case 'd0':
      case 'd1':
        throw new Unsupported('glyph procedure');
    }
  }
}

/** The text of one page's content. @param {Document} doc @param {string} content @param {Dict} resources @param {number[]} view */
function pageText(doc, content, resources, view) {
  const page = new PageText(doc, view);
  new ContentText(page, resources, [1, 0, 0, 1, 0, 0], 0).read(content);
  return page.out;
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
