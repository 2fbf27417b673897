// The send form's fields (/app/requests/new): once a document is chosen its pages are shown, and the
// sender places fields on them for the signers, each by its row's number: drawn with the mouse, or added
// by their position. They are posted in the form's hidden `fields` as JSON ({ signer, type, page, x, y,
// width, height, label, required }); without this script the section stays hidden and the form sends none.

import { describePosition, drawBoxes, element, fieldRow, fieldToSend, listLabels, makeDrawable } from './fieldPlacement.js';

const placer = document.getElementById('field-placer');
const documentChoice = document.getElementById('document_id');
const posted = document.getElementById('placed-fields');
const signerRows = document.getElementById('signers');
const pages = document.getElementById('field-pages');
const list = document.getElementById('field-list');
const status = document.getElementById('field-status');
const typeOptions = document.getElementById('field-types');
const input = (id) => document.getElementById(id);
const newSigner = input('new-signer');

let nextKey = 1;
/** Fields placed: { key, signer, type, label, required, page, x, y, width, height }; those posted when the form comes back with a problem. */
let fields = restored(posted.value);
/** [width, height] in points of each page of the document shown. */
let pageSizes = [];
/** The id of the document whose pages are shown (or being fetched). */
let shown;

function restored(json) {
  try {
    const parsed = JSON.parse(json || '[]');
    return Array.isArray(parsed) ? parsed.map((field) => ({ ...field, label: field.label ?? '', key: nextKey++ })) : [];
  } catch {
    return [];
  }
}

// --- Signers, by their row's number -------------------------------------------------------------------

const signerCount = () => signerRows.querySelectorAll('.signer-row').length;
const colour = (field) => `role-${(field.signer - 1) % 6}`;

function signerName(number) {
  const name = signerRows.querySelectorAll('.signer-row')[number - 1]?.querySelector('input[name$="-name"]')?.value.trim();
  return name ? `Signer ${number}: ${name}` : `Signer ${number}`;
}

/** Fills a signer <select> with one option per row (and the one chosen, were it past them). */
function offerSigners(select, chosen = Number(select.value) || 1) {
  const count = Math.max(signerCount(), chosen);
  select.replaceChildren(...Array.from({ length: count }, (_, index) => element('option', { value: String(index + 1), text: signerName(index + 1) })));
  select.value = String(chosen);
}

const offerAllSigners = () => [newSigner, ...list.querySelectorAll('.signer-choice')].forEach((select) => offerSigners(select));

signerRows.addEventListener('input', (event) => {
  if (event.target.name?.endsWith('-name')) offerAllSigners();
});
signerRows.addEventListener('signer-added', offerAllSigners);
// A row removed takes its fields with it; the rows after it move up one number, and their fields with them.
signerRows.addEventListener('signer-removed', ({ detail: { number } }) => {
  const before = fields.length;
  fields = fields.filter((field) => field.signer !== number);
  for (const field of fields) if (field.signer > number) field.signer -= 1;
  const chosen = Number(newSigner.value);
  offerSigners(newSigner, chosen > number ? chosen - 1 : chosen === number ? 1 : chosen);
  showFields();
  if (fields.length < before) status.textContent = `Signer ${number}’s fields were taken off with their row.`;
});

// --- The fields ----------------------------------------------------------------------------------------

/** The hidden input the form posts, and the boxes on the pages. */
function save() {
  const sent = fields.map((field) => ({ signer: field.signer, ...fieldToSend(field) }));
  posted.value = sent.length ? JSON.stringify(sent) : '';
  listLabels(fields);
  drawBoxes(
    pages,
    pageSizes,
    fields.map((field, index) => ({ field, text: `${index + 1} · signer ${field.signer} · ${field.label.trim() || field.type}`, className: colour(field) })),
  );
}

function placedRow(field, number) {
  const signer = element('select', { id: `field-${field.key}-signer`, class: 'signer-choice' });
  offerSigners(signer, field.signer);
  return fieldRow({
    field,
    number,
    id: `field-${field.key}`,
    who: { label: 'Signer', control: signer, read: () => ({ signer: Number(signer.value) }) },
    typeOptions,
    colour,
    changed: save,
    removed: () => {
      fields.splice(fields.indexOf(field), 1);
      showFields();
      status.textContent = `Field ${number} removed.`;
      newSigner.focus();
    },
  });
}

function showFields() {
  list.replaceChildren(...fields.map((field, index) => placedRow(field, index + 1)));
  input('no-fields').hidden = fields.length > 0;
  save();
}

function addField(position) {
  const field = {
    key: nextKey++,
    signer: Number(newSigner.value),
    type: input('new-type').value,
    label: input('new-label').value.trim(),
    required: input('new-required').checked,
    ...position,
  };
  fields.push(field);
  showFields();
  status.textContent = `Field ${fields.length} added: ${field.type} for signer ${field.signer}, ${describePosition(field)}.`;
}

// Keyboard users (and phones): a field by its numbers; the browser checks each against its min and max.
input('new-field').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = (name) => Number(input(`new-${name}`).value);
  addField({ page: value('page'), x: value('x'), y: value('y'), width: value('width'), height: value('height') });
});

// Enter in a field's label edits the field; it does not send the request.
list.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && event.target.matches('input')) event.preventDefault();
});

// --- The pages of the document chosen ------------------------------------------------------------------

function pageItem(documentId, fileName, size, page) {
  const [width, height] = size;
  const image = element('img', {
    loading: 'lazy', // before src, which starts the load
    width: String(Math.round(width)),
    height: String(Math.round(height)),
    alt: `Page ${page} of ${fileName}`,
    src: `/app/documents/${documentId}/pages/${page}.png`,
  });
  const frame = element('div', { class: 'page-frame', 'data-page': String(page) }, [image]);
  makeDrawable(frame, size, addField);
  return element('li', {}, [element('p', { class: 'page-number', 'aria-hidden': 'true', text: `Page ${page}` }), frame]);
}

async function showDocument(id) {
  shown = id;
  pageSizes = [];
  pages.replaceChildren();
  placer.hidden = !id;
  if (!id) return;
  try {
    const response = await fetch(`/app/documents/${encodeURIComponent(id)}/pages`, { headers: { Accept: 'application/json' } });
    if (!response.ok) throw new Error(`status ${response.status}`);
    const found = await response.json();
    if (shown !== id) return; // another document was chosen meanwhile
    pageSizes = found.pageSizes;
    pages.replaceChildren(...pageSizes.map((size, index) => pageItem(id, found.fileName, size, index + 1)));
    input('new-page').max = String(pageSizes.length);
    save();
  } catch {
    if (shown === id) status.textContent = 'The pages could not be loaded: choose the document again to try again.';
  }
}

// Fields are placed on one document's pages: another document's are not the same.
documentChoice.addEventListener('change', () => {
  const dropped = fields.length;
  fields = [];
  showFields();
  status.textContent = dropped ? `The fields placed (${dropped}) were taken off: they were on the other document’s pages.` : '';
  showDocument(documentChoice.value);
});

offerSigners(newSigner);
showFields();
showDocument(documentChoice.value);
