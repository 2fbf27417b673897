import type { Document } from '../documents/service';
import type { presentSigningRequest } from '../signingRequests/presenter';
import type { findAuditTrail } from '../signingRequests/store';
import type { Template } from '../templates/store';
import { auditActionLabel } from '../domain/auditActions';
import { requestStatuses } from '../domain/signingRequests';
import { fieldTypeOptions, positionInputs } from './fieldPlacement';
import { html, type Html } from './html';
import { can, csrfField, dateTime, layout, listTable, option, problemList, statusBadge, type Frame } from './pages';

// The signing-request pages of the console: the list, the send form and one request's detail.
// /app/assets/requests.js makes the list's search live and lets the send form add and remove signers;
// requestFields.js lets it place their fields on the document's pages.

export type RequestView = ReturnType<typeof presentSigningRequest>;
export type AuditStep = Awaited<ReturnType<typeof findAuditTrail>>[number];

/** The form fields a template can have prefilled, one per label: text, a date, or a checkbox. */
export const prefillableFields = (template: Template) =>
  template.fields.filter(
    (field, index, all) =>
      field.label !== null && ['text', 'date', 'checkbox'].includes(field.type) && all.findIndex((other) => other.label === field.label) === index,
  );

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

export interface ListView {
  requests: RequestView[];
  q: string;
  status: string;
  hasMore: boolean;
  problems: string[];
}

export function requestsPage(frame: Frame, { requests, q, status, hasMore, problems }: ListView) {
  const summary = `${plural(requests.length, 'request')}${hasMore ? ' (the newest shown)' : ''}`;
  const rows = requests.map(
    (request) => html`<tr>
      <td data-label="Title"><a href="/app/requests/${request.id}">${request.title}</a></td>
      <td data-label="Status">${statusBadge(request.status)}</td>
      <td data-label="Signers">${request.signers.map((signer) => signer.name).join(', ')}</td>
      <td data-label="Created">${dateTime(request.createdAt)}</td>
    </tr>`,
  );
  return layout(
    frame,
    'Signing requests',
    html`<h1>Signing requests</h1>
    ${can(frame, 'GET', '/app/requests/new') ? html`<p><a class="button primary" href="/app/requests/new">Send a document</a></p>` : ''}
    <form method="get" action="/app/requests" class="card inline-form" role="search" id="request-filters">
      <label for="q">Search</label>
      <input id="q" name="q" type="search" maxlength="500" value="${q}" aria-describedby="request-count" autocomplete="off">
      <label for="status">Status</label>
      <select id="status" name="status">
        <option value="">all</option>
        ${requestStatuses.map((value) => option(value, value, value === status))}
      </select>
      <button type="submit">Filter</button>
    </form>
    <p class="hint" id="request-count" aria-live="polite">${summary}</p>
    <div id="request-results" data-summary="${summary}">
      ${problemList(problems)}
      ${
        requests.length
          ? listTable('Signing requests, newest first', ['Title', 'Status', 'Signers', 'Created'], rows)
          : html`<p>${q || status ? 'No signing request matches.' : 'No signing requests yet.'}</p>`
      }
    </div>`,
    ['requests.js'],
  );
}

export interface SendView {
  documents: Document[];
  templates: Template[];
  /** The template the form sends, if any: then one signer per role and its prefill fields. */
  template?: Template;
  /** The form's values by field name, as posted (signers-0-name, prefill-0, …): hyphens, because the form parser reads dots and brackets as nesting. */
  values: Record<string, string>;
  problems: string[];
}

const DEFAULT_SIGNER_ROWS = 3;
/** Documents the send form offers beside the first; the API takes up to REQUEST_MAX_DOCUMENTS. */
const EXTRA_DOCUMENT_ROWS = 4;

/** What each recipient does, as the send form offers it. */
const recipientParts = [
  ['signer', 'signs'],
  ['approver', 'approves'],
  ['viewer', 'reads'],
  ['cc', 'gets a copy (cc)'],
] as const;

/** A template role's part, step and verification, when it is not a signer's of the request's order: "approver, step 2, access code". */
const roleKind = ({ recipientType, routingOrder, verification }: Template['roles'][number]) =>
  [
    recipientType === 'signer' ? [] : [recipientType],
    routingOrder === null ? [] : [`step ${routingOrder}`],
    verification === null ? [] : [verification.method === 'access_code' ? 'access code: give it below' : 'e-mailed code'],
  ]
    .flat()
    .join(', ');

/** How a recipient proves who they are before their page opens, as the send form offers it (none by default). */
const verificationMethods = [
  ['', 'no code'],
  ['access_code', 'Access code'],
  ['email_code', 'E-mail code'],
] as const;

/** A recipient's verification method and state as the detail page shows it; never the code. */
function verificationOf(verification: RequestView['signers'][number]['verification']) {
  if (!verification) return '—';
  const method = verification.method === 'access_code' ? 'Access code' : 'E-mail code';
  if (verification.lockedUntil) return html`${method}, locked until ${dateTime(verification.lockedUntil)}`;
  if (verification.verifiedAt) return html`${method}, verified ${dateTime(verification.verifiedAt)}`;
  return method;
}

function verificationInputs(index: number, value: (field: string) => string) {
  // Labelled by id, not by wrapping: a wrapping label's text would take in the options' ("E-mail code").
  return html`<label for="signers-${index}-verification">Verification</label>
    <select id="signers-${index}-verification" name="signers-${index}-verification">${verificationMethods.map(([method, text]) =>
      option(method, text, value('verification') === method),
    )}</select>
    <label>Access code <input name="signers-${index}-accessCode" maxlength="12" autocomplete="off" spellcheck="false" value="${value('accessCode')}" placeholder="when asked for" aria-describedby="verification-hint"></label>`;
}

function signerRow(values: Record<string, string>, index: number, role?: string, kind = '', verifiable = true) {
  const value = (field: string) => values[`signers-${index}-${field}`] ?? '';
  return html`<fieldset class="signer-row">
    <legend>${role ? html`Role: ${role}${kind ? html` <span class="hint">(${kind})</span>` : ''}` : html`Signer ${index + 1}`}</legend>
    ${role ? html`<input type="hidden" name="signers-${index}-role" value="${role}">` : ''}
    <label>Name <input name="signers-${index}-name" maxlength="200" autocomplete="off" value="${value('name')}"${role ? html` required` : ''}></label>
    <label>E-mail <input name="signers-${index}-email" type="email" maxlength="320" autocomplete="off" value="${value('email')}"${role ? html` required` : ''}></label>
    ${
      role
        ? ''
        : html`<label>Part <select name="signers-${index}-recipientType">${recipientParts.map(([type, text]) =>
            option(type, text, value('recipientType') === type),
          )}</select></label>
    <label>Step <input name="signers-${index}-routingOrder" type="number" min="1" max="50" inputmode="numeric" value="${value('routingOrder')}" placeholder="from the order" aria-describedby="step-hint"></label>
    <label>Tag role <input name="signers-${index}-role" maxlength="100" autocomplete="off" value="${value('role')}" placeholder="optional" aria-describedby="tags-hint"></label>
    <button type="button" class="remove-signer danger" hidden>Remove</button>`
    }
    ${verifiable ? verificationInputs(index, value) : ''}
  </fieldset>`;
}

/** What to do with the text tags of the documents sent: signers never see them. */
function textTagChoice(chosen: string) {
  const choice = (value: string, text: string) =>
    html`<label class="choice"><input type="radio" name="textTags" value="${value}"${chosen === value ? html` checked` : ''}> ${text}</label>`;
  return html`<fieldset>
    <legend>Text tags in the documents</legend>
    <p class="hint" id="tags-hint">Text printed in a PDF such as {{signature:1}} or {{text:client:company}} marks a field: {{signature:1}} is the first recipient’s, {{signature:client}} the one whose tag role is client. Signers never see the tags.</p>
    ${choice('fields', 'Make them the signers’ fields')}
    ${choice('remove', 'Take them out and place no field from them')}
  </fieldset>`;
}

/**
 * Fields placed by hand on the first document's pages, which requestFields.js draws and posts as JSON in
 * `fields`. Hidden until that script shows it, so that the form without it sends no fields. The new
 * field's controls belong to the empty form #new-field after the send form: their Enter adds a field, and
 * their bounds never hold up sending.
 */
function fieldPlacer(placed: string) {
  const newField = 'new-field';
  return html`<section id="field-placer" class="field-placer" aria-labelledby="placer-heading" hidden>
    <h2 id="placer-heading">Fields on the pages</h2>
    <p class="hint">Optional: where each signer signs, initials, dates, ticks or writes. Drag on a page with the mouse to draw a field for the signer and of the type chosen here, or add one by its position, in PDF points (1/72 inch) from the page’s bottom-left corner. A signer without fields signs on the signatures page.</p>
    <input type="hidden" name="fields" id="placed-fields" value="${placed}">
    <fieldset class="new-field">
      <legend>New field</legend>
      <div class="field-grid">
        <div><label for="new-signer">Signer</label><select id="new-signer" form="${newField}"></select></div>
        <div><label for="new-type">Type</label><select id="new-type" form="${newField}">${fieldTypeOptions()}</select></div>
        <div class="wide"><label for="new-label">Label (optional)</label><input id="new-label" form="${newField}" maxlength="100"></div>
        <div class="check"><input id="new-required" type="checkbox" form="${newField}" checked><label for="new-required">Required</label></div>
      </div>
      ${positionInputs({ form: newField })}
      <button type="submit" form="${newField}">Add field</button>
    </fieldset>
    <p id="field-status" class="hint" aria-live="polite"></p>
    <p id="no-fields" class="hint">No fields placed.</p>
    <ol id="field-list" class="field-list"></ol>
    <template id="field-types">${fieldTypeOptions()}</template>
    <ol id="field-pages" class="doc-pages"></ol>
  </section>`;
}

function prefillInput(field: Template['fields'][number], index: number, values: Record<string, string>) {
  const name = `prefill-${index}`;
  const value = values[name] ?? '';
  const label = html`<label for="${name}">${field.label} <span class="hint">(${field.type}, for ${field.role})</span></label>`;
  if (field.type === 'checkbox') {
    const choice = (optionValue: string, text: string) => option(optionValue, text, optionValue === value);
    return html`${label}<select id="${name}" name="${name}">${choice('', 'let the signer choose')}${choice('true', 'ticked')}${choice('false', 'not ticked')}</select>`;
  }
  return html`${label}<input id="${name}" name="${name}" type="${field.type === 'date' ? 'date' : 'text'}" maxlength="500" value="${value}">`;
}

export function sendPage(frame: Frame, { documents, templates, template, values, problems }: SendView) {
  const chosen = (field: string, option: string) => (values[field] === option ? html` selected` : '');
  const rowCount = Math.max(DEFAULT_SIGNER_ROWS, ...Object.keys(values).map((key) => Number(/^signers-(\d+)-/.exec(key)?.[1] ?? -1) + 1));
  const signerRows: Html[] = template
    ? template.roles.map((role, index) => signerRow(values, index, role.name, roleKind(role), role.recipientType !== 'cc'))
    : Array.from({ length: rowCount }, (_, index) => signerRow(values, index));
  const fields = template ? prefillableFields(template) : [];
  const order = values.signingOrder ?? 'parallel';

  const source = template
    ? html`<input type="hidden" name="template_id" value="${template.id}">
      <p>From the template <strong>${template.name}</strong> (${
        template.documents.length > 1
          ? `${plural(template.documents.length, 'document')}, ${plural(
              template.documents.reduce((sum, document) => sum + document.pageSizes.length, 0),
              'page',
            )}`
          : plural(template.pageCount, 'page')
      }). <a href="/app/requests/new">Send a document instead</a></p>`
    : html`<label for="document_id">Document</label>
      <select id="document_id" name="document_id" required>
        <option value="">Choose a document</option>
        ${documents.map((document) => html`<option value="${document.id}"${chosen('document_id', document.id)}>${document.fileName}</option>`)}
      </select>
      ${documents.length ? '' : html`<p class="hint">No document with its PDF yet: <a href="/app/documents">upload one</a> first.</p>`}
      ${
        documents.length > 1
          ? html`<fieldset class="more-documents"><legend>More documents in the same request (optional), in the order signers read them</legend>
        ${Array.from({ length: EXTRA_DOCUMENT_ROWS }, (_, index) => {
          const name = `documents-${index + 1}`;
          return html`<label for="${name}">Document ${index + 2}</label>
          <select id="${name}" name="${name}">
            <option value="">None</option>
            ${documents.map((document) => html`<option value="${document.id}"${chosen(name, document.id)}>${document.fileName}</option>`)}
          </select>`;
        })}
      </fieldset>`
          : ''
      }`;

  const templatePicker =
    !template && templates.length
      ? html`<form method="get" action="/app/requests/new" class="card inline-form">
        <label for="template">Or start from a template</label>
        <select id="template" name="template">${templates.map((candidate) => html`<option value="${candidate.id}">${candidate.name}</option>`)}</select>
        <button type="submit">Use template</button>
      </form>`
      : '';

  return layout(
    frame,
    'Send a document',
    html`<h1>Send a document for signing</h1>
    ${problemList(problems)}
    ${templatePicker}
    <form method="post" action="/app/requests" class="card stack send-form">
      ${csrfField(frame.csrf)}
      ${source}
      <label for="title">Title</label>
      <input id="title" name="title" required maxlength="200" value="${values.title ?? ''}" aria-describedby="title-hint">
      <p id="title-hint" class="hint">The subject of the e-mail the signers receive.</p>
      <label for="message">Message</label>
      <textarea id="message" name="message" rows="3" maxlength="5000">${values.message ?? ''}</textarea>
      <h2>Recipients</h2>
      ${
        template
          ? ''
          : html`<p class="hint">Leave a row empty to skip it.</p>
      <p class="hint" id="step-hint">Each recipient signs, approves, reads, or gets a copy when all is done (cc). Recipients with the same step act at once, and the next step starts when they all have; leave the steps empty to follow the signing order below.</p>`
      }
      <p class="hint" id="verification-hint">A recipient with a verification must prove who they are before their page shows anything: by an access code (4 to 12 characters, no spaces) that you tell them yourself, by phone say, never by e-mail; or by a code e-mailed to them when their page opens. Not for a cc.</p>
      <div id="signers"${template ? '' : html` data-editable="true"`}>${signerRows}</div>
      ${template ? '' : html`<button type="button" id="add-signer" hidden>Add a signer</button>`}
      ${
        fields.length
          ? html`<h2>Prefilled values</h2><p class="hint">Fixed for the signers; leave empty to let them fill it.</p>
        ${fields.map((field, index) => prefillInput(field, index, values))}`
          : ''
      }
      ${template ? '' : textTagChoice(values.textTags ?? 'fields')}
      ${template ? '' : fieldPlacer(values.fields ?? '')}
      <fieldset>
        <legend>Signing order</legend>
        <label class="choice"><input type="radio" name="signingOrder" value="parallel"${order === 'parallel' ? html` checked` : ''}> Everyone at once</label>
        <label class="choice"><input type="radio" name="signingOrder" value="sequential"${order === 'sequential' ? html` checked` : ''}> One after another, in this order</label>
      </fieldset>
      <label for="expiresInDays">Expires after (days)</label>
      <input id="expiresInDays" name="expiresInDays" type="number" min="1" max="365" value="${values.expiresInDays ?? '30'}">
      <label for="reminderEveryDays">Remind every (days, 0 = never)</label>
      <input id="reminderEveryDays" name="reminderEveryDays" type="number" min="0" max="30" value="${values.reminderEveryDays ?? '3'}">
      <button type="submit" class="primary">Send</button>
    </form>
    ${template ? '' : html`<form id="new-field"></form>`}`,
    template ? ['requests.js'] : ['requests.js', 'requestFields.js'],
  );
}

const stageText: Record<string, string> = {
  awaiting_signers: 'Waiting for signatures',
  sealing: 'Every signer has signed: the sealed PDF is being made',
  finished: 'Finished',
};

function progressSection(request: RequestView) {
  const { progress } = request;
  const names = progress.waitingFor.map((id) => request.signers.find((signer) => signer.id === id)?.name ?? id);
  return html`<section class="card" aria-labelledby="progress-heading">
    <h2 id="progress-heading">Progress</h2>
    <p><strong id="stage" data-stage="${progress.stage}">${stageText[progress.stage]}</strong>${progress.stage === 'finished' ? html`: ${request.status}` : ''}</p>
    ${names.length ? html`<p>Waiting for: ${names.join(', ')}</p>` : ''}
    ${
      progress.sealing
        ? html`<p>Sealing attempts failed so far: ${progress.sealing.attempts}${progress.sealing.lastError ? html` (last error: ${progress.sealing.lastError})` : ''}.
        ${progress.sealing.nextAttemptAt ? html`Next attempt: ${dateTime(progress.sealing.nextAttemptAt)}.` : ''}</p>`
        : ''
    }
  </section>`;
}

function actions(frame: Frame, request: RequestView) {
  const pending = request.status === 'pending';
  return html`<section class="card" aria-labelledby="actions-heading">
    <h2 id="actions-heading">Actions</h2>
    <div class="actions">
      ${
        request.sealedSha256
          ? html`<a class="button primary" href="/app/requests/${request.id}/document" download>${request.documents.length > 1 ? 'Download sealed PDFs (ZIP)' : 'Download sealed PDF'}</a>`
          : ''
      }
      <a class="button" href="/app/requests/${request.id}/audit-trail.json" download>Download audit trail (JSON)</a>
      ${
        pending && can(frame, 'POST', '/app/requests')
          ? html`<form method="post" action="/app/requests/${request.id}/remind">${csrfField(frame.csrf)}<button type="submit">Remind signers</button></form>`
          : ''
      }
    </div>
    ${
      pending && can(frame, 'POST', '/app/requests')
        ? html`<form method="post" action="/app/requests/${request.id}/cancel" class="stack cancel-form" data-confirm="Cancel “${request.title}”? The signers can no longer sign.">
        ${csrfField(frame.csrf)}
        <label for="reason">Reason for cancelling (optional)</label>
        <textarea id="reason" name="reason" rows="2" maxlength="1000"></textarea>
        <button type="submit" class="danger">Cancel request</button>
      </form>`
        : ''
    }
  </section>`;
}

const partOf = (type: string) => ({ signer: 'signs', approver: 'approves', viewer: 'reads', cc: 'cc' })[type] ?? type;
/** An address that may wrap before its @ and after its dots, so a narrow screen never splits a word of it. */
const wrappableEmail = (email: string) => {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1).split('.');
  return html`${email.slice(0, at)}<wbr>@${domain.map((part, index) => (index ? html`.<wbr>${part}` : part))}`;
};

function signerTimeline(request: RequestView) {
  const rows = request.signers.map(
    (signer) => html`<tr>
      <td data-label="Step">${signer.recipientType === 'cc' ? '—' : signer.routingOrder}</td>
      <td data-label="Recipient"><span class="who">${signer.name}<br><span class="hint">${wrappableEmail(signer.email)} · ${partOf(signer.recipientType)}</span></span></td>
      <td data-label="Status">${statusBadge(signer.status)}</td>
      <td data-label="Verification">${verificationOf(signer.verification)}</td>
      <td data-label="E-mailed">${signer.notifiedAt ? dateTime(signer.notifiedAt) : '—'}</td>
      <td data-label="Viewed">${signer.viewedAt ? dateTime(signer.viewedAt) : '—'}</td>
      <td data-label="Signed">${(signer.signedAt ?? signer.approvedAt) ? dateTime((signer.signedAt ?? signer.approvedAt)!) : '—'}</td>
      <td data-label="Declined">${signer.declinedAt ? html`${dateTime(signer.declinedAt)}${signer.declineReason ? html`: ${signer.declineReason}` : ''}` : '—'}</td>
    </tr>`,
  );
  return html`<section class="card" aria-labelledby="signers-heading">
    <h2 id="signers-heading">Recipients</h2>
    <table class="list compact" id="signer-timeline"><caption class="visually-hidden">Each recipient's step and what they did</caption>
      <thead><tr><th scope="col">Step</th><th scope="col">Recipient</th><th scope="col">Status</th><th scope="col">Verification</th><th scope="col">E-mailed</th><th scope="col">Viewed</th><th scope="col">Signed or approved</th><th scope="col">Declined</th></tr></thead>
      <tbody>${rows}</tbody>
    </table>
  </section>`;
}

function auditTrail(steps: AuditStep[]) {
  return html`<section class="card" aria-labelledby="audit-heading">
    <h2 id="audit-heading">Audit trail</h2>
    <ol class="feed" id="audit-trail">${steps.map(
      (step) =>
        html`<li>${dateTime(step.at)} <strong>${auditActionLabel(step.action)}</strong> ${step.signerEmail ?? step.actor ?? ''}${step.ipAddress ? html` <span class="hint">from ${step.ipAddress}</span>` : ''}</li>`,
    )}</ol>
  </section>`;
}

export interface DetailView {
  request: RequestView;
  steps: AuditStep[];
  notice?: string;
}

/** The request's documents: one by name; several as a list, each with its sealed PDF once there is one. */
function documentsFact(request: RequestView) {
  if (request.documents.length === 1) return html`<dt>Document</dt><dd>${request.documents[0].fileName}</dd>`;
  return html`<dt>Documents</dt><dd><ol class="documents">${request.documents.map(
    (document) =>
      html`<li>${document.fileName} <span class="hint">(${plural(document.pageCount ?? 0, 'page')})</span>${
        document.sealedSha256 ? html` <a href="/app/requests/${request.id}/documents/${document.documentId}" download>sealed PDF</a>` : ''
      }</li>`,
  )}</ol></dd>`;
}

export function requestPage(frame: Frame, { request, steps, notice }: DetailView) {
  return layout(
    frame,
    request.title,
    html`<p><a href="/app/requests">← Signing requests</a></p>
    <h1>${request.title}</h1>
    ${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
    <dl class="card facts">
      <dt>Status</dt><dd id="request-status">${statusBadge(request.status)}</dd>
      ${documentsFact(request)}
      <dt>Signing order</dt><dd>${request.signingOrder === 'sequential' ? 'one after another' : 'everyone at once'}</dd>
      <dt>Sent</dt><dd>${dateTime(request.createdAt)}</dd>
      <dt>${request.completedAt ? 'Completed' : 'Expires'}</dt><dd>${dateTime(request.completedAt ?? request.expiresAt)}</dd>
      ${request.message ? html`<dt>Message</dt><dd>${request.message}</dd>` : ''}
    </dl>
    ${progressSection(request)}
    ${actions(frame, request)}
    ${signerTimeline(request)}
    ${auditTrail(steps)}`,
    ['console.js'],
  );
}
