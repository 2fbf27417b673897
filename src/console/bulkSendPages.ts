import type { BulkSendSummary } from '../bulkSends/store';
import { csvColumnsOf, prefillableFieldsOf } from '../bulkSends/csv';
import { bulkRowStatuses, MAX_BULK_ROWS } from '../bulkSends/schema';
import type { presentBulkSend } from '../bulkSends/service';
import type { listBulkRows } from '../bulkSends/store';
import type { Template } from '../templates/store';
import { html } from './html';
import { can, csrfField, dateTime, layout, listTable, option, statusBadge, type Frame } from './pages';

// The bulk send pages of the console: the list, the CSV upload against a template, one job's progress and rows.
// /app/assets/bulkSends.js sends the upload (Check or Send) and, while a job runs, polls its progress.

type JobProgress = Awaited<ReturnType<typeof presentBulkSend>>;
type RowPage = Awaited<ReturnType<typeof listBulkRows>>;

const templateLink = (id: string, name: string | null) =>
  name ? html`<a href="/app/templates/${id}">${name}</a>` : html`<span class="hint">deleted template</span>`;

function templatePicker(templates: Template[], chosen?: Template) {
  if (!templates.length) return html`<p>There is no template to send yet. <a href="/app/templates/new">Make one</a> first.</p>`;
  return html`<form method="get" action="/app/bulk-sends/new" class="card inline-form">
    <label for="templateId">Template</label>
    <select id="templateId" name="templateId" required>
      ${chosen ? '' : html`<option value="">Choose a template…</option>`}
      ${templates.map((template) => option(template.id, template.name, template.id === chosen?.id))}
    </select>
    <button type="submit"${chosen ? '' : html` class="primary"`}>${chosen ? 'Choose another' : 'Choose'}</button>
  </form>`;
}

export function bulkSendsPage(frame: Frame, { jobs, templates }: { jobs: BulkSendSummary[]; templates: Template[] }) {
  const rows = jobs.map(
    (job) => html`<tr>
      <td data-label="Created"><a href="/app/bulk-sends/${job.id}">${dateTime(job.createdAt)}</a></td>
      <td data-label="Template">${job.templateName ?? html`<span class="hint">deleted</span>`}</td>
      <td data-label="Status">${statusBadge(job.status)}</td>
      <td data-label="Rows">${job.rowCount}</td>
      <td data-label="Sent">${job.rows.sent}</td>
      <td data-label="Failed">${job.rows.failed}</td>
      <td data-label="Queued">${job.rows.queued}</td>
    </tr>`,
  );
  return layout(
    frame,
    'Bulk sends',
    html`<h1>Bulk sends</h1>
    <p>One template to many people: each row of a CSV becomes one signing request.</p>
    <section aria-labelledby="new-heading">
      <h2 id="new-heading">New bulk send</h2>
      ${templatePicker(templates)}
    </section>
    ${
      jobs.length
        ? listTable('Bulk sends, newest first', ['Created', 'Template', 'Status', 'Rows', 'Sent', 'Failed', 'Queued'], rows, 'bulk-sends')
        : html`<p>No bulk sends yet.</p>`
    }`,
    ['console.js'],
  );
}

/** What each column of the template's CSV holds. */
function columnRows(template: Template) {
  const prefills = new Map(prefillableFieldsOf(template).map((field) => [`prefill.${field.label}`, field]));
  const describe = (column: string) => {
    const field = prefills.get(column);
    if (field) {
      const written =
        field.type === 'checkbox' ? ': true or false' : field.type === 'multiSelect' || field.type === 'checkboxGroup' ? ': options separated by |' : '';
      return `Optional: the ${field.type} field for ${field.role}, prefilled${written}; empty lets the signer fill it.`;
    }
    const role = template.roles.find((candidate) => column === `${candidate.name}.name` || column === `${candidate.name}.email`);
    if (role) return `Required: the ${column.endsWith('.email') ? 'e-mail address' : 'name'} of the ${role.recipientType} for the role ${role.name}.`;
    return {
      title: 'Optional: the request’s title, the template’s name when empty.',
      message: 'Optional: the message of the invitation.',
      expiresInDays: 'Optional: days until the request expires.',
      externalId: 'Optional: your own id for the row, shown with its outcome.',
    }[column];
  };
  return csvColumnsOf(template).map(
    (column) => html`<tr><td data-label="Column" class="mono wrap">${column}</td><td data-label="What it holds" class="wrap">${describe(column)}</td></tr>`,
  );
}

function uploadForm(frame: Frame, template: Template, sendKey: string, maxBytes: number) {
  const header = csvColumnsOf(template).join(',');
  return html`<section class="card" aria-labelledby="csv-heading">
      <h2 id="csv-heading">The CSV for “${template.name}”</h2>
      <p>Its first line names the columns; each line after it is one request. Every row is checked before anything is sent.</p>
      <p><code class="wrap" id="csv-header">${header}</code></p>
      <p><a class="button" href="/app/bulk-sends/sample.csv?templateId=${template.id}" download>Download a sample CSV</a></p>
      <details><summary>What each column holds</summary>
        ${listTable('The columns of the CSV', ['Column', 'What it holds'], columnRows(template))}
        <p class="hint">UTF-8, with , or ; between fields; quote a field that holds either. The columns may come in any order.</p>
      </details>
    </section>
    <form id="bulk-form" method="post" action="/app/bulk-sends" enctype="multipart/form-data" class="card stack" data-csrf="${frame.csrf}">
      <input type="hidden" name="templateId" value="${template.id}">
      <input type="hidden" name="sendKey" value="${sendKey}">
      <label for="bulk-file">CSV file</label>
      <input id="bulk-file" name="file" type="file" accept=".csv,text/csv" required aria-describedby="bulk-file-hint">
      <p id="bulk-file-hint" class="hint">Up to ${MAX_BULK_ROWS.toLocaleString('en')} rows and ${Math.floor(maxBytes / 1048576)} MB. A problem names its row (row 1 is the line after the header) and column.</p>
      <noscript><p class="alert">Checking and sending a CSV needs JavaScript; or send it with <code>POST /api/v1/bulk-sends</code>.</p></noscript>
      <div class="actions">
        <button type="submit" name="dryRun" value="true">Check</button>
        <button type="submit" name="dryRun" value="false" class="primary">Send</button>
      </div>
      <p id="bulk-busy" class="hint" aria-live="polite"></p>
      <div id="bulk-problems" class="alert" role="alert" tabindex="-1" hidden></div>
      <p id="bulk-checked" class="notice" role="status" hidden></p>
    </form>`;
}

export function newBulkSendPage(frame: Frame, view: { templates: Template[]; template?: Template; sendKey: string; maxBytes: number }) {
  return layout(
    frame,
    'New bulk send',
    html`<p class="hint"><a href="/app/bulk-sends">Bulk sends</a></p>
    <h1>New bulk send</h1>
    ${templatePicker(view.templates, view.template)}
    ${view.template ? uploadForm(frame, view.template, view.sendKey, view.maxBytes) : ''}`,
    ['console.js', 'bulkSends.js'],
  );
}

/** A count table whose cells bulkSends.js updates: data-count names the answer's group and status (rows.sent). */
const countTable = (caption: string, group: 'rows' | 'requests', counts: Record<string, number>) =>
  html`<table class="counts"><caption>${caption}</caption>
    <thead><tr><th scope="col">Status</th><th scope="col">Count</th></tr></thead>
    <tbody>${Object.entries(counts).map(([status, count]) => html`<tr><td>${status}</td><td data-count="${group}.${status}">${count}</td></tr>`)}</tbody>
  </table>`;

function progressSection(job: JobProgress) {
  const done = job.rowCount - job.rows.queued;
  return html`<section class="card" aria-labelledby="progress-heading" id="bulk-progress-section" data-url="/app/bulk-sends/${job.id}/progress" data-finished="${job.finishedAt !== null}">
    <h2 id="progress-heading">Progress</h2>
    <label for="bulk-progress">Rows done</label>
    <progress id="bulk-progress" max="${job.rowCount}" value="${done}">${done} of ${job.rowCount}</progress>
    <p id="bulk-progress-text">${done} of ${job.rowCount} rows done</p>
    <p id="bulk-live" role="status"></p>
    <div class="breakdown-tables">
      ${countTable('Rows by outcome', 'rows', job.rows)}
      ${countTable('Their requests by status', 'requests', job.requests)}
    </div>
  </section>`;
}

/** The Cancel form while rows are still to be sent; an empty box otherwise, which bulkSends.js swaps once the job ends. */
function cancelSection(frame: Frame, job: JobProgress) {
  const form =
    job.status === 'sending' && can(frame, 'POST', '/app/bulk-sends')
      ? html`<form method="post" action="/app/bulk-sends/${job.id}/cancel" class="card stack" data-confirm="Stop sending the rows not yet sent?">
      ${csrfField(frame.csrf)}
      <h2>Cancel</h2>
      <label class="choice"><input type="checkbox" name="cancelSent" value="true"> Also cancel the requests already sent that are still pending</label>
      <button type="submit" class="danger">Cancel the bulk send</button>
    </form>`
      : '';
  return html`<div id="bulk-cancel" data-refresh>${form}</div>`;
}

function rowsSection(job: JobProgress, rows: RowPage, query: { status?: string; cursor?: string }) {
  const status = query.status ?? '';
  const body = rows.data.map(
    (row) => html`<tr>
      <td data-label="Row">${row.row + 1}</td>
      <td data-label="External id" class="wrap">${row.external_id ?? '—'}</td>
      <td data-label="Status">${statusBadge(row.status)}</td>
      <td data-label="Request">${
        row.signing_request_id
          ? html`<span><a href="/app/requests/${row.signing_request_id}">Request<span class="visually-hidden"> of row ${row.row + 1}</span></a> ${statusBadge(row.request_status ?? '')}</span>`
          : '—'
      }</td>
      <td data-label="Error" class="wrap">${row.error ?? '—'}</td>
    </tr>`,
  );
  const filtered = status ? `&status=${encodeURIComponent(status)}` : '';
  return html`<section class="card" aria-labelledby="rows-heading" id="bulk-rows" data-refresh>
    <h2 id="rows-heading">Rows</h2>
    <form method="get" action="/app/bulk-sends/${job.id}" class="inline-form">
      <label for="row-status">Status</label>
      <select id="row-status" name="status">
        <option value="">all</option>
        ${bulkRowStatuses.map((value) => option(value, value, value === status))}
      </select>
      <button type="submit">Filter</button>
    </form>
    ${body.length ? listTable('Rows, in order', ['Row', 'External id', 'Status', 'Request', 'Error'], body, 'bulk-row-list') : html`<p>No row ${status ? `is ${status}` : 'yet'}.</p>`}
    <p class="actions">
      ${query.cursor ? html`<a href="/app/bulk-sends/${job.id}?${filtered.slice(1)}">First rows</a>` : ''}
      ${rows.hasMore ? html`<a href="/app/bulk-sends/${job.id}?cursor=${rows.nextCursor}${filtered}">Next rows</a>` : ''}
    </p>
  </section>`;
}

export interface JobView {
  job: JobProgress;
  templateName: string | null;
  rows: RowPage;
  query: { status?: string; cursor?: string };
}

export function bulkSendPage(frame: Frame, { job, templateName, rows, query }: JobView) {
  return layout(
    frame,
    `Bulk send of ${templateName ?? 'a deleted template'}`,
    html`<p><a href="/app/bulk-sends">← Bulk sends</a></p>
    <h1>Bulk send of “${templateName ?? 'a deleted template'}”</h1>
    <dl class="card facts" id="bulk-facts" data-refresh>
      <dt>Status</dt><dd id="bulk-status">${statusBadge(job.status)}${job.status === 'cancelled' && !job.finishedAt ? html` <span class="hint">finishing the rows already started</span>` : ''}</dd>
      <dt>Template</dt><dd>${templateLink(job.templateId, templateName)}</dd>
      <dt>Rows</dt><dd>${job.rowCount}</dd>
      <dt>Created</dt><dd>${dateTime(job.createdAt)}</dd>
      <dt>Finished</dt><dd>${job.finishedAt ? dateTime(job.finishedAt) : 'not yet'}</dd>
    </dl>
    ${progressSection(job)}
    ${cancelSection(frame, job)}
    ${rowsSection(job, rows, query)}`,
    ['console.js', 'bulkSends.js'],
  );
}
