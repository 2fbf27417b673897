import { PDFDocument, type PDFFont, type PDFPage, rgb, StandardFonts } from 'pdf-lib';
import { encodableText } from '../pdf/pageWriter';
import { renderFirstPagePng } from '../pdf/rasterize';
import type { TemplateField, TemplateRole } from './layout';

/** One colour per role, in signing order (then round again). */
const ROLE_COLOURS = [rgb(0.11, 0.39, 0.85), rgb(0.85, 0.33, 0.1), rgb(0.13, 0.6, 0.3), rgb(0.6, 0.2, 0.7), rgb(0.75, 0.6, 0.05), rgb(0.8, 0.1, 0.35)];

/**
 * A PNG of one page of a template with its fields drawn on it, each a tinted box in its role's colour,
 * labelled "role · label" (or the field's type). The fields are drawn with pdf-lib onto a copy of that
 * page alone, which poppler's pdftoppm then renders (src/pdf/rasterize.ts).
 */
export async function renderTemplatePage(pdf: Uint8Array, pageNumber: number, roles: TemplateRole[], fields: TemplateField[], timeoutMs: number): Promise<Buffer> {
  const source = await PDFDocument.load(pdf, { updateMetadata: false });
  const single = await PDFDocument.create();
  const [page] = await single.copyPages(source, [pageNumber - 1]);
  single.addPage(page);
  const font = await single.embedFont(StandardFonts.Helvetica);
  for (const field of fields.filter((candidate) => candidate.page === pageNumber)) {
    const colour = ROLE_COLOURS[Math.max(0, roles.findIndex((role) => role.name === field.role)) % ROLE_COLOURS.length];
    drawField(page, field, colour, font);
  }
  const { width, height } = page.getSize();
  return renderFirstPagePng(await single.save(), { width, height, timeoutMs });
}

function drawField(page: PDFPage, field: TemplateField, colour: ReturnType<typeof rgb>, font: PDFFont) {
  // Field coordinates count from the page's bottom-left corner; the page's own coordinates from its MediaBox origin.
  const origin = page.getMediaBox();
  const x = origin.x + field.x;
  const y = origin.y + field.y;
  page.drawRectangle({ x, y, width: field.width, height: field.height, color: colour, opacity: 0.15, borderColor: colour, borderWidth: 1.5 });
  const label = encodableText(`${field.role} · ${field.label ?? field.type}`, font);
  const size = Math.max(4, Math.min(9, field.height - 3));
  // Inside the box's top-left corner where it fits; above the box for a field too small to hold it.
  if (font.widthOfTextAtSize(label, size) <= field.width - 4) page.drawText(label, { x: x + 2, y: y + field.height - size - 1, size, font, color: colour });
  else page.drawText(label, { x, y: y + field.height + 2, size: 7, font, color: colour });
}
