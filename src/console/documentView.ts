import type { Db } from '../db';
import { attachment, parsePathParams } from '../api/route';
import { z } from '../api/validation';
import { presentDocument } from '../documents/presenter';
import { DocumentIdParams } from '../documents/schema';
import { getDocument, getDocumentFile, pageSizesOf } from '../documents/service';
import { validationError } from '../errors';
import { TemplatePreviewQuerySchema } from '../templates/schema';
import { html, type Html } from './html';
import { can, csrfField, dateTime, layout, type Frame } from './pages';
import type { ConsoleKit } from './kit';

/** A page number in a path (/pages/3.png): the same bounds as the template preview's. */
export const PageParams = z.object({ n: TemplatePreviewQuerySchema.shape.page });

/** A document with [width, height] in PDF points of each page: what the page images are sized by and the editor maps the mouse to. */
export async function documentPageSizes(db: Db, accountId: string, id: string) {
  const { document, content } = await getDocumentFile(db, accountId, id);
  return { document: presentDocument(document), pageSizes: await pageSizesOf(db, id, content) };
}

/** A page of a PDF as the console shows it: an image at its size in points (one pixel per point), loaded when scrolled to. */
export const pageImage = (src: string, [width, height]: [number, number], alt: string) =>
  html`<img src="${src}" width="${Math.round(width)}" height="${Math.round(height)}" loading="lazy" alt="${alt}">`;

/** The document view (/app/documents/:id), its page images and their sizes, and its original PDF. */
export function documentViewPages({ router, deps, requireLogin, frame, page, account }: ConsoleKit) {
  const { db, pages } = deps;

  router.get('/documents/:id', requireLogin, async (ctx) => {
    const { id } = parsePathParams(DocumentIdParams, ctx.params, 'Document');
    const document = presentDocument(await getDocument(db, account(ctx).id, id));
    const pageSizes = document.status === 'ready' ? (await documentPageSizes(db, account(ctx).id, id)).pageSizes : [];
    page(ctx, documentPage(frame(ctx, '/app/documents'), document, pageSizes));
  });

  // The page sizes the send form places fields by (requestFields.js), once a document is chosen.
  router.get('/documents/:id/pages', requireLogin, async (ctx) => {
    const { id } = parsePathParams(DocumentIdParams, ctx.params, 'Document');
    const { document, pageSizes } = await documentPageSizes(db, account(ctx).id, id);
    ctx.body = { fileName: document.fileName, pageSizes };
  });

  router.get('/documents/:id/pages/:n.png', requireLogin, async (ctx) => {
    const { id } = parsePathParams(DocumentIdParams, ctx.params, 'Document');
    const { n } = parsePathParams(PageParams, ctx.params, 'Page');
    const { document, content } = await getDocumentFile(db, account(ctx).id, id);
    const pageCount = document.pageCount ?? 0;
    if (n > pageCount) throw validationError([`page must be at most ${pageCount}: the document has ${pageCount} page(s)`]);
    ctx.type = 'image/png';
    ctx.body = await pages.renderPng(content, n);
  });

  router.get('/documents/:id/file', requireLogin, async (ctx) => {
    const { id } = parsePathParams(DocumentIdParams, ctx.params, 'Document');
    const { document, content } = await getDocumentFile(db, account(ctx).id, id);
    ctx.type = 'application/pdf';
    ctx.set('Content-Disposition', attachment(document.fileName));
    ctx.body = content;
  });
}

function documentPage(frame: Frame, document: ReturnType<typeof presentDocument>, pageSizes: [number, number][]) {
  const facts: [string, Html | string | number][] = [
    ['Pages', document.pageCount ?? '—'],
    ['Size', `${Math.ceil(document.fileSize / 1024)} KB (${document.fileSize} bytes)`],
    ['SHA-256', document.sha256 ?? '—'],
    ['Created', dateTime(document.createdAt)],
  ];
  const ready = document.status === 'ready';
  return layout(
    frame,
    document.fileName,
    html`<p class="hint"><a href="/app/documents">Documents</a></p>
    <h1 class="document-name">${document.fileName}</h1>
    <dl class="card facts">${facts.map(([term, value]) => html`<dt>${term}</dt><dd${term === 'SHA-256' ? html` class="mono"` : ''}>${value}</dd>`)}</dl>
    <div class="actions">
      ${
        ready
          ? html`<a class="button primary" href="/app/requests/new?documentId=${document.id}">Send for signature</a>
      <a class="button" href="/app/templates/new?documentId=${document.id}">Create template</a>
      <a class="button" href="/app/documents/${document.id}/file" download>Download original</a>`
          : ''
      }
      ${
        can(frame, 'POST', '/app/documents')
          ? html`<form method="post" action="/app/documents/${document.id}/delete" data-confirm="Delete “${document.fileName}”?">
        ${csrfField(frame.csrf)}<button type="submit" class="danger">Delete</button></form>`
          : ''
      }
    </div>
    ${
      ready
        ? html`<h2>Pages</h2>
    <ol class="doc-pages">${pageSizes.map((size, index) => html`<li>${pageImage(`/app/documents/${document.id}/pages/${index + 1}.png`, size, `Page ${index + 1} of ${document.fileName}`)}</li>`)}</ol>`
        : html`<p>The PDF has not been uploaded yet (<code>PUT /api/v1/documents/${document.id}/file</code>).</p>`
    }`,
    ['console.js'],
  );
}
