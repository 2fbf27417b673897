// The template editor (/app/templates/new?documentId=…): fields drawn on the page images with the mouse,
// or added by their position; text tags detected by the server; the template saved as the REST API takes it.
// The boxes, the drawing and each field's row are fieldPlacement.js's, shared with the send form.

import { describePosition, drawBoxes, element, fieldRow, fieldToSend, listLabels, makeDrawable } from './fieldPlacement.js';

const editor = document.getElementById('template-editor');
const pageSizes = JSON.parse(document.getElementById('editor-pages').textContent);
const { csrf, documentId } = editor.dataset;
const problemsBox = document.getElementById('editor-problems');
const status = document.getElementById('editor-status');
const list = document.getElementById('field-list');
const typeOptions = document.getElementById('field-types');

/** Fields placed here: { key, role, type, label, required, page, x, y, width, height }. */
const fields = [];
/** Fields of the text tags the server found; saved with detectFields, which also takes the tags off the template's copy. */
let detected = [];
let nextKey = 1;

const input = (id) => document.getElementById(id);

/** Roles in order of first appearance: the signing order the template gets. */
const rolesOf = (placed) => [...new Set(placed.map((field) => field.role.trim()).filter(Boolean))];
const roleClass = (role) => `role-${Math.max(0, rolesOf([...fields, ...detected]).indexOf(role.trim())) % 6}`;

// --- Boxes on the pages -----------------------------------------------------------------------------

function redraw() {
  listLabels([...fields, ...detected.map((field) => ({ ...field, label: field.label ?? '' }))]);
  const all = [...fields.map((field, index) => ({ field, name: `${index + 1}` })), ...detected.map((field) => ({ field, name: 'tag' }))];
  drawBoxes(
    editor,
    pageSizes,
    all.map(({ field, name }) => ({
      field,
      text: `${name} · ${field.role || '?'} · ${field.label || field.type}`,
      className: `${roleClass(field.role)}${field.tag ? ' detected' : ''}`,
    })),
  );
}

for (const frame of editor.querySelectorAll('.page-frame')) {
  makeDrawable(frame, pageSizes[Number(frame.dataset.page) - 1], (position) => {
    const field = addField(position);
    input(`field-${field.key}-role`).focus(); // next: its role and type
  });
}

// --- The list of fields -----------------------------------------------------------------------------

function placedRow(field, number) {
  const role = element('input', { id: `field-${field.key}-role`, list: 'role-names', required: true, maxlength: '100', value: field.role });
  return fieldRow({
    field,
    number,
    id: `field-${field.key}`,
    who: { label: 'Role', control: role, read: () => ({ role: role.value }) },
    typeOptions,
    colour: (placed) => roleClass(placed.role),
    changed: () => {
      redraw();
      listRoles();
    },
    removed: () => {
      fields.splice(fields.indexOf(field), 1);
      showFields();
      status.textContent = `Field ${number} removed.`;
      input('new-role').focus();
    },
  });
}

function detectedRow(field) {
  return element('li', { class: `field-row detected ${roleClass(field.role)}` }, [
    element('p', { class: 'field-title' }, [element('strong', { text: field.tag }), ` · ${field.role} · ${field.type} · ${describePosition(field)}`]),
  ]);
}

function listRoles() {
  input('role-names').replaceChildren(...rolesOf([...fields, ...detected]).map((role) => element('option', { value: role })));
}

function showFields() {
  const rows = fields.map((field, index) => placedRow(field, index + 1));
  if (detected.length) {
    const leaveOut = element('button', { type: 'button', text: 'Leave out the text tags’ fields' });
    leaveOut.addEventListener('click', () => {
      detected = [];
      showFields();
      status.textContent = 'The text tags’ fields are left out.';
    });
    rows.push(
      element('li', { class: 'detected-heading' }, [
        element('p', { class: 'hint', text: `From text tags (${detected.length}): placed where the tags are printed, which the template’s copy leaves out.` }),
        leaveOut,
      ]),
      ...detected.map(detectedRow),
    );
  }
  list.replaceChildren(...rows);
  input('no-fields').hidden = rows.length > 0;
  listRoles();
  redraw();
}

function addField(position) {
  const field = {
    key: nextKey++,
    role: input('new-role').value.trim(),
    type: input('new-type').value,
    label: input('new-label').value.trim(),
    required: true,
    ...position,
  };
  fields.push(field);
  showFields();
  status.textContent = `Field ${fields.length} added: ${field.type} for ${field.role || 'no role yet'}, ${describePosition(field)}.`;
  return field;
}

// Keyboard users (and phones): a field by its numbers; the browser checks each against its min and max.
input('new-field').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = (name) => Number(input(`new-${name}`).value);
  addField({ page: value('page'), x: value('x'), y: value('y'), width: value('width'), height: value('height') });
});

// --- Talking to the server --------------------------------------------------------------------------

function showProblems(problems) {
  problemsBox.replaceChildren(
    element(
      'ul',
      {},
      problems.map((problem) => element('li', { text: problem })),
    ),
  );
  problemsBox.hidden = problems.length === 0;
  if (problems.length) problemsBox.focus();
}

async function send(url, body) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify(body ?? {}),
  });
  const answer = await response.json().catch(() => ({}));
  if (response.ok) return answer;
  // The API names a field by its place in the list (fields.0); the list numbers them from 1.
  const details = (answer.details ?? []).map((detail) => detail.replace(/\bfields\.(\d+)/g, (_, index) => `Field ${Number(index) + 1}`));
  throw Object.assign(new Error(answer.message ?? `The server answered ${response.status}.`), {
    problems: [answer.message ?? `The server answered ${response.status}.`, ...details],
  });
}

async function busy(button, work) {
  button.disabled = true;
  showProblems([]);
  try {
    await work();
  } catch (error) {
    showProblems(error.problems ?? [`${error.message} Check the connection and try again.`]);
  } finally {
    button.disabled = false;
  }
}

const detectButton = input('detect-tags');
detectButton.addEventListener('click', () =>
  busy(detectButton, async () => {
    status.textContent = 'Looking for text tags…';
    const found = await send(`/app/documents/${documentId}/detect-fields`);
    detected = found.fields;
    showFields();
    const summary = found.fields.length ? `Found ${found.fields.length} fields in text tags for ${found.roles.join(', ')}.` : 'No text tags found in this PDF.';
    status.textContent = [summary, ...found.warnings].join(' ');
  }),
);

const saveButton = input('save-template');
saveButton.addEventListener('click', () =>
  busy(saveButton, async () => {
    status.textContent = 'Saving…';
    const created = await send('/app/templates', {
      name: input('template-name').value,
      documentId,
      roles: rolesOf(fields).map((name) => ({ name })),
      fields: fields.map((field) => ({ role: field.role, ...fieldToSend(field) })),
      detectFields: detected.length > 0,
    }).finally(() => (status.textContent = ''));
    status.textContent = 'Saved. Opening the preview…';
    window.location.assign(`/app/templates/${created.id}`);
  }),
);

showFields();
