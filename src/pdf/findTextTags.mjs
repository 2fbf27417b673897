// @ts-check
// The child program of the text-tag finder (textTags.ts), run in the pool of pool.ts: the text tags
// printed in a PDF, such as {{signature:tenant}}, {{text:tenant:rent}}, {{radio:tenant:Plan:Basic|Pro}}
// or {{calculated:tenant:Total:[Rent] * [Months]}}, each with the box it is printed in (PDF points from
// the bottom-left corner of its 1-based page), and warnings for tags it cannot use.
// argv[2] is {fieldTypes, optionTypes, maxTags, remove}: with `remove`, each answer also carries the PDF
// without the tags it found (removeTextTags.mjs). Plain JavaScript, so that it starts without a TypeScript loader.
import { createRequire } from 'node:module';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { removeTextTags } from './removeTextTags.mjs';
import { serveJobs } from './serveJobs.mjs';

const require = createRequire(import.meta.url);
const { StandardFontEmbedder, StandardFonts } = require('pdf-lib');

const { fieldTypes, optionTypes, maxTags, remove } = JSON.parse(process.argv[2]);
// type:role, type:role:label or type:role:label:rest, where the rest (options or a formula) may hold colons
// ("9:00|10:00") and square brackets, and no part a brace.
const TAG = /^([^:{}]*):([^:{}]*)(?::([^:{}]*)(?::([^{}]*))?)?$/;

/** @typedef {Awaited<ReturnType<import('pdfjs-dist/legacy/build/pdf.mjs').PDFPageProxy['getTextContent']>>} TextContent */
/** @typedef {Extract<TextContent['items'][number], { str: string }>} TextItem */
/** @typedef {{ text: string, runs: { item: TextItem, start: number }[], baseline: number }} Line */
/** @typedef {{ role: string, type: string, label: string | null, options?: string[], formula?: string }} Field */
/** @typedef {{ x: number, y: number, width: number, height: number }} Box */
/** @typedef {Field & Box & { page: number, tag: string }} TagField */
/** @typedef {{ fields: TagField[], warnings: string[], full: boolean }} Found */

/**
 * The page's text as lines: each line the text of its items and, for each item, where its characters
 * start in that text. A line ends where pdf.js says one does (hasEOL) or where the baseline moves.
 */
/** @param {TextContent['items']} items */
function linesOf(items) {
  /** @type {Line[]} */
  const lines = [];
  /** @type {Line | undefined} */
  let line;
  for (const item of items) {
    if (!('str' in item)) continue;
    const baseline = item.transform[5];
    const size = Math.hypot(item.transform[2], item.transform[3]) || 1;
    if (item.str && (!line || Math.abs(line.baseline - baseline) > size / 2)) {
      line = { text: '', runs: [], baseline };
      lines.push(line);
    }
    if (item.str) {
      /** @type {Line} */ (line).runs.push({ item, start: /** @type {Line} */ (line).text.length }); // made above when undefined
      /** @type {Line} */ (line).text += item.str;
    }
    if (item.hasEOL) line = undefined;
  }
  return lines;
}

/** @param {number} value */
const round = (value) => Math.round(value * 100) / 100;

// pdf.js gives the width of an item, not of each glyph: a character's share of it is an equal one in a
// monospaced font, else its share in Helvetica's metrics, exact for Helvetica and close for most faces.
// (pdf-lib's StandardFonts and @pdf-lib/standard-fonts' FontNames are two enums of the same names.)
const helvetica = StandardFontEmbedder.for(/** @type {import('@pdf-lib/standard-fonts').FontNames} */ (/** @type {unknown} */ (StandardFonts.Helvetica)));
/**
 * @param {string} text
 * @param {number} count
 * @param {boolean} monospaced
 */
function shareOf(text, count, monospaced) {
  if (monospaced) return count / text.length;
  try {
    return helvetica.widthOfTextAtSize(text.slice(0, count), 1) / helvetica.widthOfTextAtSize(text, 1);
  } catch {
    return count / text.length;
  }
}

/** The box of characters [start, end) of a line, in page points, across the items that hold them. */
/**
 * @param {Line} line
 * @param {number} start
 * @param {number} end
 * @param {TextContent['styles']} styles
 * @param {number[]} origin
 * @returns {Box | undefined}
 */
function boxOf(line, start, end, styles, origin) {
  let left = Infinity;
  let right = -Infinity;
  let bottom = Infinity;
  let top = -Infinity;
  for (const { item, start: at } of line.runs) {
    const from = Math.max(start, at);
    const to = Math.min(end, at + item.str.length);
    if (from >= to) continue;
    const [a, b, c, d, x, y] = item.transform;
    if (b !== 0 || c !== 0 || a <= 0 || d <= 0) return undefined; // rotated or mirrored text
    const style = styles[item.fontName] ?? {};
    const monospaced = style.fontFamily === 'monospace';
    // Braces reach higher and lower than most letters: the box holds at least [-0.25, 0.8] of the font size.
    const ascent = Math.max(style.ascent ?? 0, 0.8);
    const descent = Math.min(style.descent ?? 0, -0.25);
    left = Math.min(left, x + item.width * shareOf(item.str, from - at, monospaced));
    right = Math.max(right, x + item.width * shareOf(item.str, to - at, monospaced));
    bottom = Math.min(bottom, y + descent * d);
    top = Math.max(top, y + ascent * d);
  }
  if (!(right > left && top > bottom)) return undefined;
  const x = Math.max(0, left - origin[0]);
  const y = Math.max(0, bottom - origin[1]);
  return { x: round(x), y: round(y), width: round(right - origin[0] - x), height: round(top - origin[1] - y) };
}

/** One tag's text (between the braces) as a field, or the warning that says why it is not one. */
/**
 * @param {string} inner
 * @param {string} tag
 * @param {number} page
 * @returns {{ field?: Field, warning?: string }}
 */
function readTag(inner, tag, page) {
  const match = TAG.exec(inner);
  const parts = match?.slice(1).map((part) => part?.trim());
  if (!parts || !parts[0] || !parts[1] || parts[2] === '') {
    return { warning: `page ${page}: ${tag} is malformed: write {{type:role}} or {{type:role:label}}` };
  }
  // Types are read in any case: {{signerName:…}} or {{SIGNERNAME:…}}.
  const type = fieldTypes.find((/** @type {string} */ known) => known.toLowerCase() === parts[0].toLowerCase());
  if (!type) {
    return { warning: `page ${page}: ${tag} has an unknown type "${parts[0]}" (known: ${fieldTypes.join(', ')})` };
  }
  return withRest({ role: parts[1], type, label: parts[2] ?? null }, parts[3], `page ${page}: ${tag}`);
}

/**
 * A tag's field with what follows its label: the options of an option type (required), the formula of a
 * calculated field (required), nothing on any other type. `at` names the tag in a warning.
 * @param {Field} field
 * @param {string | undefined} rest
 * @param {string} at
 * @returns {{ field?: Field, warning?: string }}
 */
function withRest(field, rest, at) {
  const { type } = field;
  if (optionTypes.includes(type)) {
    const write = `write {{${type}:role:label:option 1|option 2}}`;
    if (!rest) return { warning: `${at} needs its options: ${write}` };
    const options = rest.split('|').map((option) => option.trim());
    if (options.includes('')) return { warning: `${at} has an empty option: ${write}, with an option on each side of every |` };
    return { field: { ...field, options } };
  }
  if (type === 'calculated') {
    if (!rest)
      return { warning: `${at} needs its formula: write {{calculated:role:label:[Field 1] + [Field 2]}}, each field named by its label in square brackets` };
    // Formulas name fields in braces ({Rent}), which a tag cannot hold: a tag writes [Rent]. Checked when the field is placed.
    return { field: { ...field, formula: rest.replace(/\[([^[\]]*)\]/g, '{$1}') } };
  }
  if (rest !== undefined) {
    return {
      warning: `${at} has a fourth part, which only ${optionTypes.join(', ')} (its options) and calculated (its formula) take: write {{${type}:role}} or {{${type}:role:label}}`,
    };
  }
  return { field };
}

/**
 * @param {Line[]} lines
 * @param {number} page
 * @param {TextContent['styles']} styles
 * @param {number[]} origin
 * @param {Found} found
 */
function findTagsOnPage(lines, page, styles, origin, found) {
  let skipUntil = 0; // characters of a line already read as the end of a tag split across lines
  lines.forEach((line, index) => {
    if (found.full) return;
    const { text } = line;
    let at = skipUntil;
    skipUntil = 0;
    for (let open = text.indexOf('{{', at); open !== -1; open = text.indexOf('{{', at)) {
      const close = text.indexOf('}}', open + 2);
      if (close === -1) {
        const next = lines[index + 1]?.text ?? '';
        const end = next.indexOf('}}');
        if (end !== -1 && !next.slice(0, end).includes('{{')) {
          found.warnings.push(`page ${page}: a tag is split across lines ("${text.slice(open)}" … "${next.slice(0, end + 2)}"): keep each tag on one line`);
          skipUntil = end + 2;
        } else {
          found.warnings.push(`page ${page}: ${text.slice(open)} is malformed: a tag opened with {{ must close with }} on the same line`);
        }
        return;
      }
      at = close + 2;
      const tag = text.slice(open, at);
      const { field, warning } = readTag(text.slice(open + 2, close), tag, page);
      if (warning) {
        found.warnings.push(warning);
        continue;
      }
      const box = boxOf(line, open, at, styles, origin);
      if (!box) {
        found.warnings.push(`page ${page}: ${tag} is not printed as horizontal text; it is left out`);
        continue;
      }
      if (found.fields.length === maxTags) {
        found.warnings.push(`page ${page}: ${tag} and any after it are left out: at most ${maxTags} tags are read`);
        found.full = true;
        return;
      }
      found.fields.push({ .../** @type {Field} */ (field), page, ...box, tag });
    }
  });
}

/** @param {Buffer} bytes */
async function findTextTags(bytes) {
  const task = getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 });
  /** @type {Found} */
  const found = { fields: [], warnings: [], full: false };
  try {
    const pdf = await task.promise;
    for (let number = 1; number <= pdf.numPages && !found.full; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      findTagsOnPage(linesOf(content.items), number, content.styles, page.view, found);
      page.cleanup();
    }
  } finally {
    await task.destroy();
  }
  return { fields: found.fields, warnings: found.warnings };
}

/** The tags, and with `remove` the PDF without them and the tags that could only be covered in white. */
/** @param {Buffer} bytes */
async function findAndRemoveTextTags(bytes) {
  const scan = await findTextTags(bytes);
  if (!remove) return scan;
  const { pdf, covered } = await removeTextTags(bytes, scan.fields);
  return { ...scan, pdf, coveredTags: covered.map((field) => `${field.tag} on page ${field.page}`) };
}

serveJobs(findAndRemoveTextTags);
