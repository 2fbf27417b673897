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

/** A field as the API takes it, less whose it is (a signer or a template's role): a blank label is none. */
export const fieldToSend = ({ type, label, required, page, x, y, width, height }) => ({
  type,
  label: label.trim() || null,
  required,
  page,
  x,
  y,
  width,
  height,
});

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
 * One field's row in a list: its number and position, then who fills it (`who`: the label, the control
 * and how to read it into the field), its type, label and required, and Remove. `changed` runs after
 * each edit, `removed` on Remove; `colour` names the field's class (role-0…role-5).
 */
export function fieldRow({ field, number, id, who, typeOptions, colour, changed, removed }) {
  const type = element('select', { id: `${id}-type` });
  type.append(typeOptions.content.cloneNode(true));
  type.value = field.type;
  const label = element('input', { id: `${id}-label`, maxlength: '100', value: field.label ?? '' });
  const required = element('input', { id: `${id}-required`, type: 'checkbox', checked: field.required });
  const remove = element('button', { type: 'button', class: 'danger', text: 'Remove', 'aria-label': `Remove field ${number}` });
  const update = () => {
    Object.assign(field, who.read(), { type: type.value, label: label.value, required: required.checked });
    row.className = `field-row ${colour(field)}`;
    changed();
  };
  for (const control of [who.control, type, label, required])
    control.addEventListener(control.tagName === 'INPUT' && control.type !== 'checkbox' ? 'input' : 'change', update);
  remove.addEventListener('click', removed);
  const row = element('li', { class: `field-row ${colour(field)}` }, [
    element('p', { class: 'field-title' }, [element('strong', { text: `Field ${number}` }), ` · ${describePosition(field)}`]),
    element('div', { class: 'field-grid' }, [
      element('div', {}, [element('label', { for: who.control.id, text: who.label }), who.control]),
      element('div', {}, [element('label', { for: type.id, text: 'Type' }), type]),
      element('div', { class: 'wide' }, [element('label', { for: label.id, text: 'Label (optional)' }), label]),
      element('div', { class: 'check' }, [required, element('label', { for: required.id, text: 'Required' })]),
      element('div', {}, [remove]),
    ]),
  ]);
  return row;
}
