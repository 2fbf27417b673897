// Fields on a document's rendered pages, shared by the template editor (templateEditor.js) and the send
// form (requestFields.js): the boxes over the page images, each labelled in a tab outside it; drawing a
// box with the mouse; the row of controls of one field. Positions are PDF points from the page's
// bottom-left corner; the images are drawn top-down, so y flips.

const MIN_POINTS = 4; // a smaller drag is a click, not a field

const round = (points) => Math.round(points * 100) / 100;
const roundDown = (points) => Math.floor(points * 100) / 100;
const clamp = (fraction) => Math.min(1, Math.max(0, fraction));

export function element(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'text') node.textContent = value;
    else if (value !== false && value !== undefined) node.setAttribute(name, value === true ? '' : value);
  }
  node.append(...children);
  return node;
}

const OPTION_TYPES = ['radio', 'dropdown', 'multiSelect', 'checkboxGroup'];
const CONDITION_TESTS = ['filled', 'empty', 'equals', 'notEquals'];
/** The lines of a textarea or the parts of a comma list, trimmed, without the blank ones. */
const linesOf = (text) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
const partsOf = (text) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);

/**
 * A field as the API takes it, less whose it is (a signer or a template's role): a blank label is none. Its logic
 * goes with it when its type takes it: options, a formula, a static text, and the one test that shows it. The
 * server checks them all and names what is wrong.
 */
export function fieldToSend({ type, label, required, page, x, y, width, height, options, formula, text, showWhen }) {
  const sent = { type, label: label.trim() || null, required, page, x, y, width, height };
  if (OPTION_TYPES.includes(type)) sent.options = linesOf(options ?? '');
  if (type === 'calculated') sent.formula = (formula ?? '').trim();
  if (type === 'staticText') sent.text = (text ?? '').trim();
  const shownBy = showWhen?.field?.trim();
  if (shownBy) {
    const values = partsOf(showWhen.values ?? '');
    sent.showWhen = { field: shownBy, is: showWhen.is, ...(['equals', 'notEquals'].includes(showWhen.is) ? { values } : {}) };
  }
  return sent;
}

/** The labels fields may name in a condition or formula, offered as the condition's field is typed. */
export function listLabels(fields) {
  let list = document.getElementById('placed-field-labels');
  if (!list) {
    list = element('datalist', { id: 'placed-field-labels' });
    document.body.append(list);
  }
  const labels = [...new Set(fields.map((field) => field.label.trim()).filter(Boolean))];
  list.replaceChildren(...labels.map((label) => element('option', { value: label })));
}

export const describePosition = (field) => `page ${field.page} · x ${field.x}, y ${field.y} · ${field.width} × ${field.height} pt`;

/** Places a box over a page image by fractions of its size (0 at the top-left corner). */
function placeBox(box, left, top, width, height) {
  box.style.left = `${left * 100}%`;
  box.style.top = `${top * 100}%`;
  box.style.width = `${width * 100}%`;
  box.style.height = `${height * 100}%`;
}

/**
 * Puts a box's tab where the page has room for it: above the box, else below it, else inside its top;
 * from the box's left edge, moved left as far as the page's right edge needs. A tab wider than the page wraps.
 */
function placeTab(frame, box, tab) {
  const page = frame.getBoundingClientRect();
  const edges = box.getBoundingClientRect();
  tab.style.maxWidth = `${page.width}px`;
  const { width, height } = tab.getBoundingClientRect();
  const side = edges.top - page.top >= height ? 'above' : page.bottom - edges.bottom >= height ? 'below' : 'inside';
  tab.className = `field-tab ${side}`;
  const left = Math.max(0, Math.min(edges.left - page.left, page.width - width));
  // Left is measured from inside the box's border.
  tab.style.left = `${left - (edges.left - page.left) - box.clientLeft}px`;
}

/** Draws the boxes of `boxes` ({ field, text, className }) over the page frames in `container`, replacing those drawn before. */
export function drawBoxes(container, pageSizes, boxes) {
  for (const box of container.querySelectorAll('.field-box')) box.remove();
  for (const { field, text, className } of boxes) {
    const frame = container.querySelector(`.page-frame[data-page="${field.page}"]`);
    const size = pageSizes[field.page - 1];
    if (!frame || !size) continue;
    const [width, height] = size;
    const tab = element('span', { class: 'field-tab', text });
    const box = element('div', { class: `field-box ${className}`, 'aria-hidden': 'true' }, [tab]);
    placeBox(box, field.x / width, 1 - (field.y + field.height) / height, field.width / width, field.height / height);
    frame.append(box);
    placeTab(frame, box, tab);
  }
}

/**
 * Lets the mouse or a pen draw a field on a page frame (a finger scrolls: on a phone, fields are added by
 * their position); `drawn` gets its { page, x, y, width, height }. The tabs are placed again when the page's size changes.
 */
export function makeDrawable(frame, [pageWidth, pageHeight], drawn) {
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
    const x = round(Math.min(start.x, end.x) * pageWidth);
    const y = round((1 - Math.max(start.y, end.y)) * pageHeight);
    const right = Math.max(start.x, end.x) * pageWidth;
    const top = (1 - Math.min(start.y, end.y)) * pageHeight;
    stop();
    if (right - x < MIN_POINTS || top - y < MIN_POINTS) return;
    drawn({ page, x, y, width: roundDown(right - x), height: roundDown(top - y) });
  });
  frame.addEventListener('pointercancel', stop);
  new ResizeObserver(() => {
    for (const placed of frame.querySelectorAll('.field-box')) {
      const tab = placed.querySelector('.field-tab');
      if (tab) placeTab(frame, placed, tab);
    }
  }).observe(frame);
}

/**
 * The controls of a field's logic, each shown only for the types it applies to: the options of a choice (one a
 * line), a calculated field's formula, a static text's words, and the one test on another field that shows it.
 */
function logicControls(field, id) {
  field.showWhen ??= { field: '', is: 'filled', values: '' };
  const options = element('textarea', { id: `${id}-options`, rows: '3', maxlength: '20000', text: field.options ?? '' });
  const formula = element('input', { id: `${id}-formula`, maxlength: '1000', value: field.formula ?? '', placeholder: '{Rent} * {Months}' });
  const text = element('input', { id: `${id}-text`, maxlength: '2000', value: field.text ?? '' });
  const shownBy = element('input', { id: `${id}-shown-by`, maxlength: '100', list: 'placed-field-labels', value: field.showWhen.field });
  const test = element(
    'select',
    { id: `${id}-shown-test` },
    CONDITION_TESTS.map((is) => element('option', { value: is, text: is })),
  );
  test.value = field.showWhen.is;
  const values = element('input', { id: `${id}-shown-values`, maxlength: '2000', value: field.showWhen.values });
  const hint = (forId, words) => element('p', { class: 'hint', id: `${forId}-hint`, text: words });
  const labelled = (control, words, wide, help) => {
    if (help) control.setAttribute('aria-describedby', `${control.id}-hint`);
    return element('div', { class: wide ? 'wide' : '' }, [
      element('label', { for: control.id, text: words }),
      control,
      ...(help ? [hint(control.id, help)] : []),
    ]);
  };
  const parts = {
    options: labelled(options, 'Options, one a line', true),
    formula: labelled(formula, 'Formula', true, 'Number fields by label in braces: + - * / ( ), round(x, 2), min, max, sum, abs.'),
    text: labelled(text, 'Text shown', true),
    shownBy: labelled(shownBy, 'Show only when field (optional)', false),
    test: labelled(test, 'is', false),
    values: labelled(values, 'Values, comma-separated', false),
  };
  const read = () => ({
    options: options.value,
    formula: formula.value,
    text: text.value,
    showWhen: { field: shownBy.value, is: test.value, values: values.value },
  });
  const show = (type) => {
    parts.options.hidden = !OPTION_TYPES.includes(type);
    parts.formula.hidden = type !== 'calculated';
    parts.text.hidden = type !== 'staticText';
    parts.values.hidden = !['equals', 'notEquals'].includes(test.value);
  };
  return { controls: [options, formula, text, shownBy, test, values], elements: Object.values(parts), read, show };
}

/**
 * One field's row in a list: its number and position, then who fills it (`who`: the label, the control
 * and how to read it into the field), its type, label and required, its logic (logicControls), and Remove.
 * `changed` runs after each edit, `removed` on Remove; `colour` names the field's class (role-0…role-5).
 */
export function fieldRow({ field, number, id, who, typeOptions, colour, changed, removed }) {
  const type = element('select', { id: `${id}-type` });
  type.append(typeOptions.content.cloneNode(true));
  type.value = field.type;
  const label = element('input', { id: `${id}-label`, maxlength: '100', value: field.label ?? '' });
  const required = element('input', { id: `${id}-required`, type: 'checkbox', checked: field.required });
  const remove = element('button', { type: 'button', class: 'danger', text: 'Remove', 'aria-label': `Remove field ${number}` });
  const logic = logicControls(field, id);
  const update = () => {
    Object.assign(field, who.read(), { type: type.value, label: label.value, required: required.checked }, logic.read());
    row.className = `field-row ${colour(field)}`;
    logic.show(field.type);
    changed();
  };
  for (const control of [who.control, type, label, required, ...logic.controls])
    control.addEventListener(['INPUT', 'TEXTAREA'].includes(control.tagName) && control.type !== 'checkbox' ? 'input' : 'change', update);
  remove.addEventListener('click', removed);
  logic.show(field.type);
  const row = element('li', { class: `field-row ${colour(field)}` }, [
    element('p', { class: 'field-title' }, [element('strong', { text: `Field ${number}` }), ` · ${describePosition(field)}`]),
    element('div', { class: 'field-grid' }, [
      element('div', {}, [element('label', { for: who.control.id, text: who.label }), who.control]),
      element('div', {}, [element('label', { for: type.id, text: 'Type' }), type]),
      element('div', { class: 'wide' }, [element('label', { for: label.id, text: 'Label (optional)' }), label]),
      element('div', { class: 'check' }, [required, element('label', { for: required.id, text: 'Required' })]),
      ...logic.elements,
      element('div', {}, [remove]),
    ]),
  ]);
  return row;
}
