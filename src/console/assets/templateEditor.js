// The template editor (/app/templates/new?documentId=…): fields drawn on the page images with the mouse,
// or added by their position; text tags detected by the server; the template saved as the REST API takes it.
// Positions are PDF points from the page's bottom-left corner; the images are drawn top-down, so y flips.

const editor = document.getElementById('template-editor');
const pageSizes = JSON.parse(document.getElementById('editor-pages').textContent);
const { csrf, documentId } = editor.dataset;
const problemsBox = document.getElementById('editor-problems');
const status = document.getElementById('editor-status');
const list = document.getElementById('field-list');
const typeOptions = document.getElementById('field-types');
const MIN_POINTS = 4; // a smaller drag is a click, not a field

/** Fields placed here: { key, role, type, label, required, page, x, y, width, height }. */
const fields = [];
/** Fields of the text tags the server found; saved with detectFields, which also takes the tags off the template's copy. */
let detected = [];
let nextKey = 1;

const round = (points) => Math.round(points * 100) / 100;
const roundDown = (points) => Math.floor(points * 100) / 100;
const clamp = (fraction) => Math.min(1, Math.max(0, fraction));
const input = (id) => document.getElementById(id);

/** Roles in order of first appearance: the signing order the template gets. */
const rolesOf = (placed) => [...new Set(placed.map((field) => field.role.trim()).filter(Boolean))];
const roleClass = (role) => `role-${Math.max(0, rolesOf([...fields, ...detected]).indexOf(role.trim())) % 6}`;

function element(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'text') node.textContent = value;
    else if (value !== false && value !== undefined) node.setAttribute(name, value === true ? '' : value);
  }
  node.append(...children);
  return node;
}

// --- Boxes on the pages -----------------------------------------------------------------------------

/** Places a box over a page image by fractions of its size (0 at the top-left corner). */
function placeBox(box, left, top, width, height) {
  box.style.left = `${left * 100}%`;
  box.style.top = `${top * 100}%`;
  box.style.width = `${width * 100}%`;
  box.style.height = `${height * 100}%`;
}

function drawBoxes() {
  for (const box of editor.querySelectorAll('.field-box')) box.remove();
  const all = [...fields.map((field, index) => ({ field, name: `${index + 1}` })), ...detected.map((field) => ({ field, name: 'tag' }))];
  for (const { field, name } of all) {
    const frame = editor.querySelector(`.page-frame[data-page="${field.page}"]`);
    if (!frame) continue;
    const [width, height] = pageSizes[field.page - 1];
    const box = element('div', { class: `field-box ${roleClass(field.role)}${field.tag ? ' detected' : ''}`, 'aria-hidden': 'true' }, [
      `${name} · ${field.role || '?'} · ${field.label || field.type}`,
    ]);
    placeBox(box, field.x / width, 1 - (field.y + field.height) / height, field.width / width, field.height / height);
    frame.append(box);
  }
}

for (const frame of editor.querySelectorAll('.page-frame')) {
  const page = Number(frame.dataset.page);
  const image = frame.querySelector('img');
  image.draggable = false;
  let start;
  let box;
  const at = (event) => {
    const rect = image.getBoundingClientRect();
    return { x: clamp((event.clientX - rect.left) / rect.width), y: clamp((event.clientY - rect.top) / rect.height) };
  };
  const follow = (end) => placeBox(box, Math.min(start.x, end.x), Math.min(start.y, end.y), Math.abs(end.x - start.x), Math.abs(end.y - start.y));
  const stop = () => {
    box?.remove();
    start = box = undefined;
  };
  frame.addEventListener('dragstart', (event) => event.preventDefault());
  // Mouse and pen draw; a finger scrolls (on a phone, add fields by their position).
  frame.addEventListener('pointerdown', (event) => {
    if (event.button !== 0 || event.pointerType === 'touch') return;
    event.preventDefault();
    start = at(event);
    box = element('div', { class: 'field-box drawing', 'aria-hidden': 'true' });
    frame.append(box);
    frame.setPointerCapture(event.pointerId);
    follow(start);
  });
  frame.addEventListener('pointermove', (event) => {
    if (start) follow(at(event));
  });
  frame.addEventListener('pointerup', (event) => {
    if (!start) return;
    const end = at(event);
    const [width, height] = pageSizes[page - 1];
    const x = round(Math.min(start.x, end.x) * width);
    const y = round((1 - Math.max(start.y, end.y)) * height);
    const right = Math.max(start.x, end.x) * width;
    const top = (1 - Math.min(start.y, end.y)) * height;
    stop();
    if (right - x < MIN_POINTS || top - y < MIN_POINTS) return;
    const field = addField({ page, x, y, width: roundDown(right - x), height: roundDown(top - y) });
    input(`field-${field.key}-role`).focus(); // next: its role and type
  });
  frame.addEventListener('pointercancel', stop);
}

// --- The list of fields -----------------------------------------------------------------------------

const describe = (field) => `page ${field.page} · x ${field.x}, y ${field.y} · ${field.width} × ${field.height} pt`;

function fieldRow(field, number) {
  const id = `field-${field.key}`;
  const title = element('p', { class: 'field-title' }, [element('strong', { text: `Field ${number}` }), ` · ${describe(field)}`]);
  const role = element('input', { id: `${id}-role`, list: 'role-names', required: true, maxlength: '100', value: field.role });
  const type = element('select', { id: `${id}-type` });
  type.append(typeOptions.content.cloneNode(true));
  type.value = field.type;
  const label = element('input', { id: `${id}-label`, maxlength: '100', value: field.label });
  const required = element('input', { id: `${id}-required`, type: 'checkbox', checked: field.required });
  const remove = element('button', { type: 'button', class: 'danger', text: 'Remove', 'aria-label': `Remove field ${number}` });
  const update = () => {
    Object.assign(field, { role: role.value, type: type.value, label: label.value, required: required.checked });
    row.className = `field-row ${roleClass(field.role)}`;
    drawBoxes();
    listRoles();
  };
  for (const control of [role, type, label, required]) control.addEventListener(control === role || control === label ? 'input' : 'change', update);
  remove.addEventListener('click', () => {
    fields.splice(fields.indexOf(field), 1);
    showFields();
    status.textContent = `Field ${number} removed.`;
    input('new-role').focus();
  });
  const row = element('li', { class: `field-row ${roleClass(field.role)}` }, [
    title,
    element('div', { class: 'field-grid' }, [
      element('div', {}, [element('label', { for: role.id, text: 'Role' }), role]),
      element('div', {}, [element('label', { for: type.id, text: 'Type' }), type]),
      element('div', { class: 'wide' }, [element('label', { for: label.id, text: 'Label (optional)' }), label]),
      element('div', { class: 'check' }, [required, element('label', { for: required.id, text: 'Required' })]),
      element('div', {}, [remove]),
    ]),
  ]);
  return row;
}

function detectedRow(field) {
  return element('li', { class: `field-row detected ${roleClass(field.role)}` }, [
    element('p', { class: 'field-title' }, [element('strong', { text: field.tag }), ` · ${field.role} · ${field.type} · ${describe(field)}`]),
  ]);
}

function listRoles() {
  input('role-names').replaceChildren(...rolesOf([...fields, ...detected]).map((role) => element('option', { value: role })));
}

function showFields() {
  const rows = fields.map((field, index) => fieldRow(field, index + 1));
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
  drawBoxes();
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
  status.textContent = `Field ${fields.length} added: ${field.type} for ${field.role || 'no role yet'}, ${describe(field)}.`;
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
      fields: fields.map(({ role, type, label, required, page, x, y, width, height }) => ({
        role,
        type,
        label: label.trim() || null,
        required,
        page,
        x,
        y,
        width,
        height,
      })),
      detectFields: detected.length > 0,
    }).finally(() => (status.textContent = ''));
    status.textContent = 'Saved. Opening the preview…';
    window.location.assign(`/app/templates/${created.id}`);
  }),
);

showFields();
