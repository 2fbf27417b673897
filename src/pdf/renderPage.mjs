// The child program of the page renderer (pageRenderer.ts), run in the pool of pool.ts: one page of a
// PDF as a PDF of its own, with a template's fields drawn on it (each a tinted box in its role's colour,
// labelled "role · label"), for pdftoppm to render. Loading a whole PDF with pdf-lib can take seconds
// (an accepted PDF may hold 100,000 objects): here it costs a child, never the api's event loop.
// Plain JavaScript, so that it starts without a TypeScript loader.
import { createRequire } from 'node:module';
import { serveJobs } from './serveJobs.mjs';

const require = createRequire(import.meta.url);
const { PDFDocument, StandardFonts, rgb } = require('pdf-lib');

/** One colour per role, in signing order (then round again). */
const ROLE_COLOURS = [rgb(0.11, 0.39, 0.85), rgb(0.85, 0.33, 0.1), rgb(0.13, 0.6, 0.3), rgb(0.6, 0.2, 0.7), rgb(0.75, 0.6, 0.05), rgb(0.8, 0.1, 0.35)];

/** Standard fonts encode only WinAnsi: anything else becomes '?' rather than throwing (as pageWriter.ts does). */
function encodable(text, font) {
  const supported = new Set(font.getCharacterSet());
  return Array.from(text.replace(/[\r\n\t]+/g, ' '))
    .map((character) => (supported.has(character.codePointAt(0)) ? character : '?'))
    .join('');
}

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

/** `{ page, roles, fields }`: the 1-based page, and the template's roles and fields (none for a plain page). */
async function renderPage(bytes, { page: pageNumber, roles, fields }) {
  const source = await PDFDocument.load(bytes, { updateMetadata: false });
  const single = await PDFDocument.create();
  const [page] = await single.copyPages(source, [pageNumber - 1]);
  single.addPage(page);
  const onPage = fields.filter((field) => field.page === pageNumber);
  if (onPage.length > 0) {
    const font = await single.embedFont(StandardFonts.Helvetica);
    for (const field of onPage) {
      const colour = ROLE_COLOURS[Math.max(0, roles.findIndex((role) => role.name === field.role)) % ROLE_COLOURS.length];
      drawField(page, field, colour, font);
    }
  }
  const { width, height } = page.getSize();
  return { pdf: await single.save(), width, height };
}

serveJobs(renderPage);
