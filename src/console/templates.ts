import type { Middleware } from 'koa';
import { parsePathParams } from '../api/route';
import { jsonBody } from '../api/middleware/body';
import { parseInput, parseInputWithRules } from '../api/validation';
import { DocumentIdParams } from '../documents/schema';
import { getDocuments, listDocuments } from '../documents/service';
import { requestLimitsFrom } from '../documents/fields';
import { presentDetectedFields, presentTemplate } from '../templates/presenter';
import { TemplateCreateSchema, TemplateIdParams, TemplateListQuerySchema } from '../templates/schema';
import {
  assertTemplateQuota,
  createTemplate,
  deleteTemplate,
  detectDocumentFields,
  getTemplate,
  listTemplates,
  previewTemplatePage,
  templateCreateRules,
} from '../templates/service';
import { documentPageSizes, pageImage, PageParams } from './documentView';
import { fieldTypeOptions, positionInputs } from './fieldPlacement';
import { html, jsonData } from './html';
import { can, csrfField, dateTime, layout, listTable, option, type Frame } from './pages';
import type { ConsoleKit } from './kit';

type TemplateView = ReturnType<typeof presentTemplate>;
type DocumentChoice = { id: string; fileName: string };

/** Templates in the console: the list, the editor that makes one from a document, the preview; the REST API's services and schemas. */
export function templatePages({ router, deps, rateLimit, requireLogin, frame, page, account, seeOther }: ConsoleKit) {
  const { db, events, textTags, pages } = deps;
  const templateDeps = { db, events, textTags, pages, requestLimits: requestLimitsFrom(deps.config) };
  // As on the REST API: an account at its quota costs no body read.
  const quota: Middleware = async (ctx, next) => {
    await assertTemplateQuota(db, account(ctx));
    await next();
  };

  router.get('/templates', requireLogin, rateLimit('GET /templates'), async (ctx) => {
    const templates = (await listTemplates(db, account(ctx).id, parseInput(TemplateListQuerySchema, { limit: '100' }))).data.map(presentTemplate);
    const sourceIds = templates.flatMap((template) => (template.sourceDocumentId ? [template.sourceDocumentId] : []));
    const documents = new Map((await getDocuments(db, account(ctx).id, sourceIds)).map((document) => [document.id, document.fileName]));
    page(ctx, templateListPage(frame(ctx, '/app/templates'), templates, documents));
  });

  router.get('/templates/new', requireLogin, async (ctx) => {
    const chosen =
      typeof ctx.query.documentId === 'string' && ctx.query.documentId
        ? parsePathParams(DocumentIdParams, { id: ctx.query.documentId }, 'Document').id
        : undefined;
    const source = chosen ? await documentPageSizes(db, account(ctx).id, chosen) : undefined;
    const documents = (await listDocuments(db, account(ctx).id, { limit: 100, status: 'ready' })).data;
    page(ctx, templateEditorPage(frame(ctx, '/app/templates'), documents, source));
  });

  // The editor's save (templateEditor.js, JSON with X-CSRF-Token): the REST API's quota, schema and service.
  router.post('/templates', requireLogin, quota, jsonBody(), async (ctx) => {
    const input = await parseInputWithRules(TemplateCreateSchema, ctx.request.body ?? {}, (body) => templateCreateRules(templateDeps, account(ctx), body));
    const template = await createTemplate(templateDeps, account(ctx), input);
    ctx.status = 201;
    ctx.body = { id: template.id };
  });

  router.post('/documents/:id/detect-fields', requireLogin, async (ctx) => {
    const { id } = parsePathParams(DocumentIdParams, ctx.params, 'Document');
    ctx.body = presentDetectedFields(await detectDocumentFields(templateDeps, account(ctx).id, id));
  });

  router.get('/templates/:id', requireLogin, async (ctx) => {
    const { id } = parsePathParams(TemplateIdParams, ctx.params, 'Template');
    page(ctx, templatePreviewPage(frame(ctx, '/app/templates'), presentTemplate(await getTemplate(db, account(ctx).id, id))));
  });

  router.get('/templates/:id/pages/:n.png', requireLogin, async (ctx) => {
    const { id } = parsePathParams(TemplateIdParams, ctx.params, 'Template');
    const { n } = parsePathParams(PageParams, ctx.params, 'Page');
    const documentId = typeof ctx.query.documentId === 'string' ? ctx.query.documentId : undefined;
    const png = await previewTemplatePage(templateDeps, account(ctx).id, id, n, documentId);
    ctx.type = 'image/png';
    ctx.body = png;
  });

  router.post('/templates/:id/delete', requireLogin, async (ctx) => {
    const { id } = parsePathParams(TemplateIdParams, ctx.params, 'Template');
    await deleteTemplate(templateDeps, account(ctx).id, id);
    seeOther(ctx, '/app/templates');
  });
}

function templateListPage(frame: Frame, templates: TemplateView[], documents: Map<string, string>) {
  const documentCell = (id: string | null) => {
    const name = id && documents.get(id);
    return name ? html`<a href="/app/documents/${id}">${name}</a>` : html`<span class="hint">deleted</span>`;
  };
  const rows = templates.map(
    (template) => html`<tr>
      <td data-label="Name"><a href="/app/templates/${template.id}">${template.name}</a></td>
      <td data-label="Document">${documentCell(template.sourceDocumentId)}${
        template.documents.length > 1 ? html` <span class="hint">and ${template.documents.length - 1} more</span>` : ''
      }</td>
      <td data-label="Roles">${template.roles.map((role) => role.name).join(', ')}</td>
      <td data-label="Fields">${template.fields.length}</td>
      <td data-label="Created">${dateTime(template.createdAt)}</td>
      <td data-label="Actions"><div class="row-actions"><a href="/app/templates/${template.id}" aria-label="Preview ${template.name}">Preview</a>
        ${
          can(frame, 'POST', '/app/templates')
            ? html`<form method="post" action="/app/templates/${template.id}/delete" data-confirm="Delete the template “${template.name}”? Requests already sent from it are kept.">
        ${csrfField(frame.csrf)}<button type="submit" class="danger" aria-label="Delete ${template.name}">Delete</button></form>`
            : ''
        }</div></td>
    </tr>`,
  );
  return layout(
    frame,
    'Templates',
    html`<h1>Templates</h1>
    ${can(frame, 'GET', '/app/templates/new') ? html`<p><a class="button primary" href="/app/templates/new">New template</a></p>` : ''}
    ${
      templates.length
        ? listTable('Templates', ['Name', 'Document', 'Roles', 'Fields', 'Created', 'Actions'], rows, 'templates')
        : html`<p>No templates yet. A template keeps a PDF with its signers’ fields placed, ready to send again and again.</p>`
    }`,
    ['console.js'],
  );
}

const withoutPdfExtension = (fileName: string) => fileName.replace(/\.pdf$/i, '');

function templateEditorPage(frame: Frame, documents: DocumentChoice[], source?: Awaited<ReturnType<typeof documentPageSizes>>) {
  const choices = source && !documents.some((document) => document.id === source.document.id) ? [source.document, ...documents] : documents;
  const picker = choices.length
    ? html`<form method="get" action="/app/templates/new" class="card inline-form">
      <label for="documentId">Document</label>
      <select id="documentId" name="documentId" required>
        ${source ? '' : html`<option value="">Choose a document…</option>`}
        ${choices.map((document) => option(document.id, document.fileName, document.id === source?.document.id))}
      </select>
      <button type="submit"${source ? '' : html` class="primary"`}>${source ? 'Open another' : 'Open'}</button>
    </form>`
    : html`<p>There is no document to make a template from yet. <a href="/app/documents">Upload a PDF</a> first.</p>`;
  return layout(
    frame,
    'New template',
    html`<p class="hint"><a href="/app/templates">Templates</a></p>
    <h1>New template</h1>
    ${picker}
    ${source ? templateEditor(frame, source) : ''}`,
    source ? ['console.js', 'templateEditor.js'] : ['console.js'],
  );
}

function templateEditor(frame: Frame, { document, pageSizes }: Awaited<ReturnType<typeof documentPageSizes>>) {
  const typeOptions = fieldTypeOptions();
  return html`<div class="editor" id="template-editor" data-csrf="${frame.csrf}" data-document-id="${document.id}">
    <script type="application/json" id="editor-pages">${jsonData(pageSizes)}</script>
    <datalist id="role-names"></datalist>
    <section class="editor-pages" aria-labelledby="pages-heading">
      <h2 id="pages-heading">${document.fileName}</h2>
      <p class="hint">Drag on a page with the mouse to draw a field, or add one by its position. Positions are in PDF points (1/72 inch) from the page’s bottom-left corner.</p>
      <ol class="doc-pages">${pageSizes.map(
        (size, index) =>
          html`<li><p class="page-number" aria-hidden="true">Page ${index + 1}</p><div class="page-frame" data-page="${index + 1}">${pageImage(`/app/documents/${document.id}/pages/${index + 1}.png`, size, `Page ${index + 1} of ${document.fileName}`)}</div></li>`,
      )}</ol>
    </section>
    <div class="editor-panel">
      <section class="card stack" aria-labelledby="save-heading">
        <h2 id="save-heading">Template</h2>
        <label for="template-name">Template name</label>
        <input id="template-name" required maxlength="200" value="${withoutPdfExtension(document.fileName)}">
        <div id="editor-problems" class="alert" role="alert" tabindex="-1" hidden></div>
        <div class="editor-buttons">
          <button type="button" id="save-template" class="primary">Save template</button>
          <button type="button" id="detect-tags">Detect text tags</button>
        </div>
        <p id="editor-status" class="hint" aria-live="polite"></p>
      </section>
      <section class="card" aria-labelledby="fields-heading">
        <h2 id="fields-heading">Fields</h2>
        <p id="no-fields" class="hint">No fields yet. Each role needs at least one signature field.</p>
        <ol id="field-list" class="field-list"></ol>
        <template id="field-types">${typeOptions}</template>
      </section>
      <form id="new-field" class="card new-field" aria-labelledby="new-field-heading">
        <h2 id="new-field-heading">New field</h2>
        <p class="hint">A field drawn on a page takes this role and type; change them in the list after.</p>
        <div class="field-grid">
          <div><label for="new-role">Role</label><input id="new-role" list="role-names" required maxlength="100" value="signer"></div>
          <div><label for="new-type">Type</label><select id="new-type">${typeOptions}</select></div>
          <div class="wide"><label for="new-label">Label (optional)</label><input id="new-label" maxlength="100"></div>
        </div>
        ${positionInputs({ pageCount: pageSizes.length })}
        <button type="submit">Add field</button>
      </form>
    </div>
  </div>`;
}

const fieldCount = (count: number) => `${count} field${count === 1 ? '' : 's'}`;

/** The pages of each of the template's documents, with their fields drawn (one list, as before, when it has one document). */
function documentPages(template: TemplateView) {
  const pagesOf = (document: TemplateView['documents'][number], name: string) =>
    html`<ol class="doc-pages">${document.pages.map(({ width, height }, index) => {
      const query = template.documents.length > 1 && document.documentId ? `?documentId=${encodeURIComponent(document.documentId)}` : '';
      return html`<li>${pageImage(`/app/templates/${template.id}/pages/${index + 1}.png${query}`, [width, height], `Page ${index + 1} of ${name}, with its fields drawn`)}</li>`;
    })}</ol>`;
  if (template.documents.length === 1) return html`<h2>Pages</h2>${pagesOf(template.documents[0], template.name)}`;
  return template.documents.map(
    (document, index) => html`<h2>Document ${index + 1}: ${document.fileName}</h2>
      ${pagesOf(document, document.fileName)}`,
  );
}

function templatePreviewPage(frame: Frame, template: TemplateView) {
  const several = template.documents.length > 1;
  const documentOf = (documentId: string | null | undefined) => template.documents.find((document) => document.documentId === documentId)?.fileName ?? '—';
  const fieldRows = template.fields.map(
    (field, index) => html`<tr>
      <td data-label="#">${index + 1}</td>
      ${several ? html`<td data-label="Document">${documentOf(field.documentId)}</td>` : ''}
      <td data-label="Role">${field.role}</td>
      <td data-label="Type">${field.type}</td>
      <td data-label="Label">${field.label ?? '—'}</td>
      <td data-label="Required">${field.required ? 'yes' : 'no'}</td>
      <td data-label="Page">${field.page}</td>
      <td data-label="Position"><span class="mono">${field.x}, ${field.y}; ${field.width} × ${field.height}</span></td>
    </tr>`,
  );
  return layout(
    frame,
    template.name,
    html`<p class="hint"><a href="/app/templates">Templates</a></p>
    <h1>${template.name}</h1>
    ${template.description ? html`<p>${template.description}</p>` : ''}
    <div class="actions">
      ${
        can(frame, 'POST', '/app/templates')
          ? html`<a class="button primary" href="/app/requests/new?templateId=${template.id}">Send for signature</a>
      <form method="post" action="/app/templates/${template.id}/delete" data-confirm="Delete the template “${template.name}”? Requests already sent from it are kept.">
        ${csrfField(frame.csrf)}<button type="submit" class="danger">Delete</button></form>`
          : ''
      }
    </div>
    <section class="card" aria-labelledby="roles-heading">
      <h2 id="roles-heading">Roles, in signing order</h2>
      <ol>${template.roles.map(
        (role) =>
          html`<li>${role.name} <span class="hint">(${fieldCount(template.fields.filter((field) => field.role === role.name).length)}${
            role.verification ? (role.verification.method === 'access_code' ? '; an access code, given with each request' : '; an e-mailed code') : ''
          })</span></li>`,
      )}</ol>
    </section>
    <section class="card" aria-labelledby="fields-heading">
      <h2 id="fields-heading">Fields</h2>
      <p class="hint">Positions in PDF points from the bottom-left corner of the page: x, y; width × height.</p>
      <table class="list compact"><caption class="visually-hidden">Fields</caption>
        <thead><tr><th scope="col">#</th>${several ? html`<th scope="col">Document</th>` : ''}<th scope="col">Role</th><th scope="col">Type</th><th scope="col">Label</th><th scope="col">Required</th><th scope="col">Page</th><th scope="col">Position</th></tr></thead>
        <tbody>${fieldRows}</tbody></table>
    </section>
    ${documentPages(template)}`,
    ['console.js'],
  );
}
