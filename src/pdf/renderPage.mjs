// @ts-check
// The child program of the page renderer (pageRenderer.ts), run in the pool of pool.ts: one page of a
// PDF as a PNG, with a template's fields drawn on it (each a tinted box in its role's colour, labelled
// "role · label"). pdf-lib cuts the page out as a PDF of its own and draws the fields; pdf.js renders
// that page on a Skia canvas (@napi-rs/canvas, prebuilt in its npm package), so rendering needs nothing
// outside node_modules. Loading a whole PDF can take seconds (an accepted PDF may hold 100,000 objects)
// and a page can be made costly to draw: here it costs a child, within the pool's time and memory
// limits, never the api's event loop. Plain JavaScript, so that it starts without a TypeScript loader.
import { createRequire } from 'node:module';
import path from 'node:path';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { serveJobs } from './serveJobs.mjs';

const require = createRequire(import.meta.url);
const { PDFDocument, StandardFonts, rgb } = require('pdf-lib');
const { createCanvas } = require('@napi-rs/canvas');

/** The longest side of a rendered page, in pixels: a poster-sized page is scaled down to it. */
const MAX_RENDER_PIXELS = 4000;
const MAX_PNG_BYTES = 64 * 1024 * 1024;
const pdfjsDir = path.dirname(require.resolve('pdfjs-dist/package.json'));
// Fonts a PDF names without embedding, and CJK character maps, from pdfjs-dist itself: never the machine's.
const pdfjsData = { standardFontDataUrl: `${path.join(pdfjsDir, 'standard_fonts')}/`, cMapUrl: `${path.join(pdfjsDir, 'cmaps')}/`, cMapPacked: true };

// pdf.js warns on stderr about every odd object; the picture is what counts.
console.warn = () => undefined;
console.log = () => undefined;

/** One colour per role, in signing order (then round again). */
const ROLE_COLOURS = [rgb(0.11, 0.39, 0.85), rgb(0.85, 0.33, 0.1), rgb(0.13, 0.6, 0.3), rgb(0.6, 0.2, 0.7), rgb(0.75, 0.6, 0.05), rgb(0.8, 0.1, 0.35)];

/** Standard fonts encode only WinAnsi: anything else becomes '?' rather than throwing (as pageWriter.ts does). */
/**
 * @param {string} text
 * @param {import('pdf-lib').PDFFont} font
 */
function encodable(text, font) {
  const supported = new Set(font.getCharacterSet());
  return Array.from(text.replace(/[\r\n\t]+/g, ' '))
    .map((character) => (supported.has(/** @type {number} */ (character.codePointAt(0))) ? character : '?'))
    .join('');
}

/** @typedef {{ page: number, x: number, y: number, width: number, height: number, role: string, type: string, label?: string }} Field */

/**
 * @param {import('pdf-lib').PDFPage} page
 * @param {Field} field
 * @param {import('pdf-lib').RGB} colour
 * @param {import('pdf-lib').PDFFont} font
 */
function drawField(page, field, colour, font) {
  // Field coordinates count from the page's bottom-left corner; the page's own coordinates from its MediaBox origin.
  const origin = page.getMediaBox();
  const x = origin.x + field.x;
  const y = origin.y + field.y;
  page.drawRectangle({ x, y, width: field.width, height: field.height, color: colour, opacity: 0.15, borderColor: colour, borderWidth: 1.5 });
  const label = encodable(`${field.role} · ${field.label ?? field.type}`, font);
  const size = Math.max(4, Math.min(9, field.height - 3));
  // Inside the box's top-left corner where it fits; above the box for a field too small to hold it.
  if (font.widthOfTextAtSize(label, size) <= field.width - 4) page.drawText(label, { x: x + 2, y: y + field.height - size - 1, size, font, color: colour });
  else page.drawText(label, { x, y: y + field.height + 2, size: 7, font, color: colour });
}

/**
 * The first page of `pdf` as a PNG, one pixel per point (as pdftoppm -r 72 did) unless its longer side
 * would pass MAX_RENDER_PIXELS. No scripts: eval is off, as it is for every PDF we did not make.
 */
/** @param {Uint8Array} pdf */
async function rasterize(pdf) {
  const task = getDocument({ data: pdf, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0, ...pdfjsData });
  try {
    const page = await (await task.promise).getPage(1);
    const { width, height } = page.getViewport({ scale: 1 });
    const viewport = page.getViewport({ scale: Math.min(1, MAX_RENDER_PIXELS / Math.max(width, height)) });
    const canvas = createCanvas(Math.max(1, Math.round(viewport.width)), Math.max(1, Math.round(viewport.height)));
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    // Skia's 2D context draws what pdf.js asks of a browser's (it lacks only focus rings).
    await page.render({ canvasContext: /** @type {CanvasRenderingContext2D} */ (/** @type {unknown} */ (context)), viewport }).promise;
    return await canvas.encode('png');
  } finally {
    await task.destroy();
  }
}

/**
 * `{ page, roles, fields }`: the 1-based page, and the template's roles and fields (none for a plain
 * page). Answers `{ png }`, or `{ problem }` when pdf.js cannot draw the page (a verdict on the PDF).
 */
/**
 * @param {Buffer} bytes
 * @param {{ page: number, roles: { name: string }[], fields: Field[] }} input
 */
async function renderPage(bytes, { page: pageNumber, roles, fields }) {
  const source = await PDFDocument.load(bytes, { updateMetadata: false });
  const single = await PDFDocument.create();
  const [page] = await single.copyPages(source, [pageNumber - 1]);
  single.addPage(page);
  const onPage = fields.filter((field) => field.page === pageNumber);
  if (onPage.length > 0) {
    const font = await single.embedFont(StandardFonts.Helvetica);
    for (const field of onPage) {
      const colour =
        ROLE_COLOURS[
          Math.max(
            0,
            roles.findIndex((role) => role.name === field.role),
          ) % ROLE_COLOURS.length
        ];
      drawField(page, field, colour, font);
    }
  }
  let png;
  try {
    png = await rasterize(await single.save());
  } catch (error) {
    return { problem: `pdf.js could not draw it: ${String(/** @type {Error | undefined} */ (error)?.message ?? error).slice(0, 300)}` };
  }
  return png.length > MAX_PNG_BYTES ? { problem: `the image would be over ${MAX_PNG_BYTES / 2 ** 20} MB` } : { png };
}

serveJobs(renderPage);
