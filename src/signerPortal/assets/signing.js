// The signing page: reads the signer's view from /sign/:token/request, draws the PDF with pdf.js and marks
// the signer's fields at their places on it, asks for each of them (signature and initials drawn with
// signature_pad or typed, text, numbers, choices, checkboxes, images and attachments uploaded as soon as they are
// chosen; dates, the sender's prefilled values and what the server writes — calculations, the signer's name and e-mail, the sender's text — are fixed), and sends
// Sign or Decline. The form's conditions, calculations and rules run here as the server runs them (form.mjs is its
// code), so that fields show and hide, totals update and a broken rule is named as the signer types. Everything
// shown comes from the API answers; nothing is inserted as HTML.
import SignaturePad from '/sign-assets/signature-pad.min.mjs';
import { embedded, goToReturnUrl, tellParent } from '/sign-assets/embed.js';
import { fillForm, formOf, selectionFieldTypes } from '/sign-assets/form.mjs';

// An embedded page holds its session's token in memory (embed.js); a page from an e-mail link has it in its address.
const token = embedded ? embedded.session : location.pathname.split('/').filter(Boolean).pop();
const api = `/sign/${encodeURIComponent(token)}`;
const $ = (id) => document.getElementById(id);

const endStates = {
  signed: ['You have signed', 'Your signature is recorded. Once everyone has signed, your copy of the sealed PDF arrives by e-mail.'],
  completed: ['Everyone has signed', 'The request is complete: your copy of the sealed PDF arrives by e-mail.'],
  declined: ['You declined to sign', 'You declined to sign this document. The sender has been told.'],
  declinedByOther: ['This request was declined', 'Another signer declined this document, so it will not be completed. There is nothing more for you to do.'],
  cancelled: ['This request was cancelled', 'The sender cancelled this signing request. There is nothing to sign.'],
  expired: ['This signing link has expired', 'This signing link has expired. Ask the sender for a new one.'],
  waiting: ['It is not your turn yet', 'Other people must sign before you. You will receive an e-mail when it is your turn.'],
  approved: ['You have approved', 'You approved the documents. Everyone will receive the sealed documents by e-mail once the request is complete.'],
  viewed: ['You have read the documents', 'Your reading is recorded. Everyone will receive the sealed documents by e-mail once the request is complete.'],
  invalid: ['This signing link is not valid', 'Check that you opened the whole link from your e-mail, or ask the sender for a new one.'],
};

// Where the signer goes once they have acted: the embedded URL's returnUrl, or the request's redirectUrl.
let returnUrl = embedded ? embedded.returnUrl : null;
let requestId = embedded ? embedded.signingRequestId : null;

/** The parent page hears what happened, and the signer goes on to the return URL, if any. */
function finish(type, event) {
  tellParent(type);
  if (event) goToReturnUrl(returnUrl, event, requestId);
}

const typeNames = {
  signature: 'Signature',
  initials: 'Initials',
  date: 'Date',
  text: 'Text',
  checkbox: 'Checkbox',
  number: 'Number',
  email: 'E-mail',
  phone: 'Phone',
  radio: 'Choice',
  dropdown: 'Choice',
  multiSelect: 'Choices',
  checkboxGroup: 'Choices',
  calculated: 'Calculated',
  signerName: 'Your name',
  signerEmail: 'Your e-mail',
  staticText: 'Text',
  image: 'Image',
  attachment: 'Attachment',
};
// Fields the signer does not fill: the server writes them on signing (the calculation, the signer's name and e-mail) or the sender did.
const WRITTEN = ['calculated', 'signerName', 'signerEmail', 'staticText'];
const CHOICES = ['radio', 'multiSelect', 'checkboxGroup'];
// A typed field's input: its type and the keyboard a phone shows for it.
const INPUTS = { text: ['text', 'text'], number: ['text', 'decimal'], email: ['email', 'email'], phone: ['tel', 'tel'] };
// The date a date field is sealed with: the day of signing, as the sealed PDF prints it (UTC).
const today = new Date().toISOString().slice(0, 10);

async function call(method, path, body) {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
    cache: 'no-store',
    credentials: 'same-origin',
  });
  return answerOf(response);
}

async function answerOf(response) {
  const type = response.headers.get('Content-Type') || '';
  const data = type.includes('application/json') ? await response.json().catch(() => ({})) : {};
  return { status: response.status, ok: response.ok, data };
}

function element(tag, properties = {}, children = []) {
  const node = Object.assign(document.createElement(tag), properties);
  node.append(...children);
  return node;
}

function showAlert(message, details = []) {
  const alert = $('alert');
  alert.replaceChildren(document.createTextNode(message));
  if (details.length)
    alert.append(
      element(
        'ul',
        {},
        details.map((detail) => element('li', { textContent: detail })),
      ),
    );
  alert.hidden = false;
}

function clearAlert() {
  $('alert').hidden = true;
  $('alert').replaceChildren();
}

/** Shows an end state (or "not your turn") and hides the controls that no longer apply. */
function showOutcome(state) {
  const [title, text] = endStates[state];
  const outcome = $('outcome');
  outcome.className = `outcome ${state}`;
  outcome.dataset.state = state;
  $('outcome-title').textContent = title;
  $('outcome-text').textContent = text;
  outcome.hidden = false;
  $('sign').hidden = true;
  if (state !== 'waiting') $('document').hidden = true;
  $('outcome-title').focus();
}

/** Which end state the signer's view stands for, or null when they can act now. */
function stateOf(view) {
  const request = view.request.status;
  const signer = view.signer.status;
  if (request === 'expired') return 'expired';
  if (request === 'cancelled') return 'cancelled';
  if (request === 'completed') return 'completed';
  if (request === 'declined') return signer === 'declined' ? 'declined' : 'declinedByOther';
  if (signer === 'signed') return 'signed';
  if (signer === 'approved') return 'approved';
  if (signer === 'declined') return 'declined';
  if (signer === 'viewed' && view.signer.recipientType === 'viewer') return 'viewed';
  if (!view.yourTurn) return 'waiting';
  return null;
}

/** The answer to Sign / Decline / the PDF: an end state, or the API's message in the alert region. */
async function handleFailure(result) {
  if (result.status === 410) {
    showOutcome('expired');
    return finish('expired', 'expired');
  }
  if (result.status === 404) {
    showOutcome('invalid');
    return tellParent('error');
  }
  if (result.status >= 500) tellParent('error');
  showAlert(result.data.message || 'Something went wrong. Please try again.', result.data.details || []);
  if (result.status === 409) await showEndedState();
}

/** After a conflict: the end state the request has reached, if it has. */
async function showEndedState() {
  const view = await call('GET', '/request');
  const state = view.ok && stateOf(view.data);
  if (state) showOutcome(state);
}

// --- The signer's fields ---

const isPrefilled = (field) => field.value !== undefined && field.value !== null;
/** A prefilled value as it reads: a selection (stored as its JSON list) as its options, joined. */
function prefillText(field) {
  if (!selectionFieldTypes.includes(field.type)) return field.value;
  try {
    return JSON.parse(field.value).join(', ');
  } catch {
    return field.value;
  }
}
// With several documents, a field's page is named with its document ("page 2 of annex.pdf").
let documentNames = null;
const whereOf = (field) => (documentNames ? `page ${field.page} of ${documentNames.get(field.documentId) ?? documentNames.first}` : `page ${field.page}`);
const nameOf = (field) => `${field.label ? field.label.charAt(0).toUpperCase() + field.label.slice(1) : typeNames[field.type]} (${whereOf(field)})`;
const initialsOf = (name) =>
  name
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => Array.from(word)[0].toUpperCase())
    .join('');
// Two spellings of a name are the same name when they differ only in letter case or spacing (as the certificate compares them).
const sameName = (one, other) => {
  const plain = (name) => name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLocaleLowerCase();
  return plain(one) === plain(other);
};

/**
 * A signature_pad on a canvas that follows its box: resized to its CSS size × the device pixel ratio, with
 * the strokes drawn so far kept. `onChange` runs after each stroke and after clearing.
 */
function createPad(canvas, onChange) {
  const pad = new SignaturePad(canvas, { penColor: '#0b1f66', minWidth: 0.8, maxWidth: 2.8 });
  const resize = () => {
    const ratio = window.devicePixelRatio || 1;
    const width = Math.round(canvas.clientWidth * ratio);
    const height = Math.round(canvas.clientHeight * ratio);
    if (!width || !height || (canvas.width === width && canvas.height === height)) return;
    const strokes = pad.toData();
    canvas.width = width;
    canvas.height = height;
    canvas.getContext('2d').scale(ratio, ratio);
    pad.clear();
    pad.fromData(strokes);
  };
  new ResizeObserver(resize).observe(canvas);
  resize();
  pad.addEventListener('endStroke', onChange);
  return {
    isEmpty: () => pad.isEmpty(),
    clear() {
      pad.clear();
      onChange();
    },
    toDataURL: () => pad.toDataURL('image/png'),
  };
}

// Radio buttons and option lists: a fieldset whose value is the options ticked.
function choices(field, labelText, { controls, onChange }) {
  const many = field.type !== 'radio';
  const inputs = field.options.map((option, n) => {
    const input = element('input', { type: many ? 'checkbox' : 'radio', name: `field-${field.index}`, id: `field-${field.index}-${n}`, value: option });
    input.addEventListener('change', onChange);
    return input;
  });
  controls.set(field.index, { focus: () => inputs[0].focus(), scrollIntoView: (options) => inputs[0].scrollIntoView(options), inputs, many });
  return element('fieldset', { className: 'field-row choices' }, [
    element('legend', { textContent: labelText }),
    ...inputs.map((input, n) => element('label', { htmlFor: input.id, className: 'check' }, [input, ` ${field.options[n]}`])),
  ]);
}

/** The row of a field ticked or chosen, or of one the signer does not fill (shown fixed); null for the typed kinds. */
function choiceOrFixedRow(field, labelText, context) {
  const { controls, onChange, view } = context;
  const id = `field-${field.index}`;
  if (field.type === 'staticText') return element('p', { className: 'field-row static', textContent: field.text });
  // The sender's choice is shown as text, fixed, as any other prefill.
  if (isPrefilled(field) && field.type !== 'checkbox') return null;
  if (CHOICES.includes(field.type)) return choices(field, labelText, context);
  if (field.type === 'dropdown') {
    const select = element('select', { id }, [
      element('option', { value: '', textContent: 'Choose…' }),
      ...field.options.map((option) => element('option', { value: option, textContent: option })),
    ]);
    select.addEventListener('change', onChange);
    controls.set(field.index, select);
    return element('div', { className: 'field-row' }, [element('label', { htmlFor: id, textContent: labelText }), select]);
  }
  if (WRITTEN.includes(field.type)) {
    const value = { signerName: view.signer.name, signerEmail: view.signer.email }[field.type] ?? '';
    const input = element('input', { type: 'text', id, value, readOnly: true, placeholder: 'worked out from your answers' });
    if (field.type === 'calculated') context.computed.set(field.index, input);
    const note = field.type === 'calculated' ? ` · worked out from your answers: ${field.formula}` : ' · filled in for you';
    return element('div', { className: 'field-row' }, [element('label', { htmlFor: id, textContent: `${labelText}${note}` }), input]);
  }
  if (field.type === 'checkbox') {
    const box = element('input', { type: 'checkbox', id, checked: field.value === 'true', disabled: isPrefilled(field) });
    box.addEventListener('change', onChange);
    controls.set(field.index, box);
    const note = isPrefilled(field) ? [element('span', { className: 'fixed-note', textContent: ' · set by the sender' })] : [];
    return element('div', { className: 'field-row check' }, [element('label', { htmlFor: id }, [box, ` ${labelText}`, ...note])]);
  }
  return null;
}

// --- Image and attachment fields: a file goes up as soon as it is chosen, and Sign sends its upload's id ---

// The server takes any of the three for any upload and reads the type from the bytes; a field takes only its own.
const UPLOADS = {
  image: {
    accept: 'image/png,image/jpeg',
    takes: 'a PNG or JPEG image',
    hint: 'A PNG or JPEG image, at most 10 MB. It is drawn in its box on the document.',
  },
  attachment: {
    accept: 'application/pdf,image/png,image/jpeg',
    takes: 'a PDF, PNG or JPEG file',
    hint: 'A PDF, PNG or JPEG file, at most 10 MB. It is kept with the signed document.',
  },
};
const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
const isUpload = (field) => Object.hasOwn(UPLOADS, field.type);
const isRequiredUpload = (field) => field.required !== false;

/** A size as people read it: 820 bytes, 14 KB, 2.4 MB. */
function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Sends one file to /uploads, as the part named `file`; the answer as call() gives it. */
async function uploadFile(file, signal) {
  const body = new FormData();
  body.append('file', file, file.name);
  return answerOf(await fetch(`${api}/uploads`, { method: 'POST', body, signal, cache: 'no-store', credentials: 'same-origin' }));
}

/** Why the server refused a file, in its words: its details ("file must be …"), else its message. */
function refusalOf(file, result) {
  if (result.status === 413 && !result.data.message) return `${file.name} was not uploaded: a file may be at most 10 MB.`;
  const said = result.data.details?.length ? result.data.details.join('; ') : result.data.message || 'something went wrong. Please try again';
  return `${file.name} was not uploaded: ${said}${/[.!?]$/.test(said) ? '' : '.'}`;
}

const typeNamesOfFiles = { 'application/pdf': 'a PDF', 'image/png': 'a PNG image', 'image/jpeg': 'a JPEG image' };

/**
 * The row of an image or attachment field: a file input whose file is uploaded at once, what became of it (uploading,
 * uploaded with its size, or why it was refused), an image's preview, and Remove. Choosing another file replaces it.
 */
function uploadRow(field, labelText, { controls, onChange, required }) {
  const id = `field-${field.index}`;
  const input = element('input', { type: 'file', id, accept: UPLOADS[field.type].accept, required });
  const hint = element('p', { className: 'hint', id: `${id}-hint`, textContent: UPLOADS[field.type].hint });
  const status = element('p', { className: 'upload-status', id: `${id}-status` });
  status.setAttribute('role', 'status');
  input.setAttribute('aria-describedby', `${hint.id} ${status.id}`);
  const preview = element('img', { className: 'upload-preview', alt: '', hidden: true });
  const remove = element('button', { type: 'button', className: 'secondary', textContent: 'Remove', hidden: true });
  let attempt = null; // the upload on its way: its AbortController
  // upload: the server's answer ({ id, fileName, size, … }) once uploaded; previewUrl: an image's object URL.
  const control = { inputs: [input], upload: null, uploading: false, refusal: null, previewUrl: null };
  control.focus = (options) => input.focus(options);
  control.scrollIntoView = (options) => input.scrollIntoView(options);
  controls.set(field.index, control);

  function show({ upload = null, file = null, refusal = null }) {
    if (control.previewUrl) URL.revokeObjectURL(control.previewUrl);
    const uploading = Boolean(file && !upload);
    Object.assign(control, { upload, uploading, refusal, previewUrl: upload && field.type === 'image' ? URL.createObjectURL(file) : null });
    status.textContent = uploading ? `Uploading ${file.name}…` : upload ? `${upload.fileName} · ${sizeText(upload.size)} · uploaded` : '';
    status.classList.toggle('uploading', uploading);
    if (control.previewUrl) Object.assign(preview, { src: control.previewUrl, alt: `Preview of ${upload.fileName}` });
    else preview.removeAttribute('src');
    preview.hidden = !control.previewUrl;
    remove.hidden = !upload && !uploading;
    remove.textContent = uploading ? 'Cancel' : 'Remove';
    if (upload || uploading) remove.setAttribute('aria-label', uploading ? `Cancel the upload of ${file.name}` : `Remove ${upload.fileName}`);
    // A refused file is cleared from the input, so that choosing it again (once fixed, or on a better network) is a change.
    if (refusal) input.value = '';
    onChange();
  }

  async function send(file) {
    const controller = new AbortController();
    attempt = controller;
    show({ file });
    try {
      const result = await uploadFile(file, controller.signal);
      if (attempt !== controller) return;
      const { accept, takes } = UPLOADS[field.type];
      if (result.ok && !accept.split(',').includes(result.data.contentType)) {
        show({ refusal: `${file.name} is ${typeNamesOfFiles[result.data.contentType] ?? 'another kind of file'}: this field takes ${takes}.` });
      } else if (result.ok) show({ upload: result.data, file });
      else if (result.status === 404 || result.status === 410) {
        show({});
        await handleFailure(result);
      } else {
        show({ refusal: refusalOf(file, result) });
        // The request may have ended meanwhile.
        if (result.status === 409) await showEndedState();
      }
    } catch {
      if (attempt === controller) show({ refusal: `${file.name}: the upload failed. Check your network and choose the file again.` });
    } finally {
      if (attempt === controller) attempt = null;
    }
  }

  input.addEventListener('change', () => {
    const file = input.files?.[0];
    // The file chooser closed without a choice: what was uploaded stays.
    if (!file) return;
    attempt?.abort();
    attempt = null;
    if (file.size > MAX_UPLOAD_BYTES) return show({ refusal: `${file.name} is ${sizeText(file.size)}: a file may be at most 10 MB.` });
    send(file);
  });
  remove.addEventListener('click', () => {
    attempt?.abort();
    attempt = null;
    input.value = '';
    show({});
    input.focus();
  });

  return element('div', { className: 'field-row upload' }, [
    element('label', { htmlFor: id, textContent: labelText }),
    hint,
    input,
    element('div', { className: 'upload-result' }, [preview, status, remove]),
  ]);
}

/** A form field's value as the Sign call takes it, or undefined while it is empty. */
function valueOf(field, controls) {
  const control = controls.get(field.index);
  if (!control) return undefined;
  if (isUpload(field)) return control.upload?.id;
  if (field.type === 'checkbox') return control.checked;
  if (control.inputs) {
    const ticked = control.inputs.filter((input) => input.checked).map((input) => input.value);
    return control.many ? (ticked.length ? ticked : undefined) : ticked[0];
  }
  return control.value.trim() ? control.value : undefined;
}

/**
 * The form's logic, run on the signer's answers by the server's own code: which fields their conditions hide, what
 * the calculated fields come to, and each shown field's problem. The server decides again on signing; should this
 * code fail, nothing is hidden and nothing is named, and the server's answer says what is wrong.
 */
function createFormLogic(fields, controls, signer) {
  const { definitions, positionOf } = formOf(fields);
  const keyAt = new Map([...positionOf].map(([key, position]) => [position, key]));
  let filled = { values: {}, hidden: [], problems: [] };
  let hidden = new Set();
  let problems = new Map(); // field index → its problem
  return {
    refill() {
      const given = {};
      for (const [position, key] of keyAt) {
        const field = fields[position];
        const value = isPrefilled(field) ? field.value : valueOf(field, controls);
        if (value !== undefined) given[key] = value;
      }
      try {
        filled = fillForm(definitions, given, { name: signer.name, email: signer.email });
      } catch {
        filled = { values: {}, hidden: [], problems: [] };
      }
      hidden = new Set(filled.hidden.map((key) => positionOf.get(key)));
      problems = new Map(filled.problems.filter(({ field }) => positionOf.has(field)).map(({ field, problem }) => [positionOf.get(field), problem]));
    },
    isHidden: (field) => hidden.has(field.index),
    problemOf: (field) => problems.get(field.index),
    /** A calculated field's value now, '' while it cannot be worked out. */
    computed: (field) => (keyAt.has(field.index) ? (filled.values[keyAt.get(field.index)] ?? '') : ''),
  };
}

/** Shows the form's state: hidden fields' rows hidden, calculated values, and a problem under each field the signer has left. */
function showFormState(fields, logic, { rows, computed, notes, touched, controls }) {
  for (const field of fields) {
    if (rows.has(field.index)) rows.get(field.index).hidden = logic.isHidden(field);
    if (computed.has(field.index)) computed.get(field.index).value = logic.computed(field);
    const note = notes.get(field.index);
    if (!note) continue;
    const control = controls.get(field.index);
    const found = touched.has(field.index) && valueOf(field, controls) !== undefined ? logic.problemOf(field) : undefined;
    // A file the server refused says why in its own words.
    const problem = control.refusal ?? (found ? `${nameOf(field)} ${found}.` : '');
    note.textContent = problem;
    note.hidden = !problem;
    for (const input of control.inputs ?? [control]) input.setAttribute('aria-invalid', problem ? 'true' : 'false');
  }
}

/** A row kept to hide it; a field the signer fills gets a place for its problem, which its control names. */
function placedRow(field, rowElement, { rows, notes, controls }) {
  rows.set(field.index, rowElement);
  const control = controls.get(field.index);
  if (!control || isPrefilled(field)) return rowElement;
  const note = element('p', { className: 'field-problem', id: `field-${field.index}-problem`, hidden: true });
  note.setAttribute('role', 'status');
  for (const input of control.inputs ?? [control])
    input.setAttribute('aria-describedby', [input.getAttribute('aria-describedby'), note.id].filter(Boolean).join(' '));
  notes.set(field.index, note);
  rowElement.append(note);
  return rowElement;
}

/** The row of one listed field: its control, or what it shows when the signer does not fill it. */
function formRow(field, { view, controls, computed, changed }) {
  const id = `field-${field.index}`;
  // A field with a condition may be hidden by the signer's answers, and then not required: the server decides on signing.
  const asked = isUpload(field) ? isRequiredUpload(field) : field.required;
  const required = asked && !isPrefilled(field) && field.type !== 'date' && !WRITTEN.includes(field.type) && !field.showWhen;
  const labelText = `${nameOf(field)}${required ? ' (required)' : field.showWhen && asked ? ' (required when it applies)' : ''}`;
  if (isUpload(field) && !isPrefilled(field)) return uploadRow(field, labelText, { controls, onChange: changed(field), required });
  const control = choiceOrFixedRow(field, labelText, { controls, onChange: changed(field), view, computed });
  if (control) return control;
  const [type, inputMode] = INPUTS[field.type] ?? INPUTS.text;
  const input = element('input', { type, inputMode, id, maxLength: field.maxLength ?? 500, autocomplete: 'off' });
  if (field.type === 'date' && !isPrefilled(field)) {
    Object.assign(input, { value: today, readOnly: true });
    return element('div', { className: 'field-row' }, [
      element('label', { htmlFor: id, textContent: `${labelText} · today’s date, filled in for you` }),
      input,
    ]);
  }
  if (isPrefilled(field)) {
    Object.assign(input, { value: prefillText(field), readOnly: true });
    return element('div', { className: 'field-row' }, [element('label', { htmlFor: id, textContent: `${labelText} · set by the sender` }), input]);
  }
  input.required = required;
  input.addEventListener('input', changed());
  // A problem shows once the signer leaves the field, not at their first keystroke.
  input.addEventListener('change', changed(field));
  controls.set(field.index, input);
  return element('div', { className: 'field-row' }, [element('label', { htmlFor: id, textContent: labelText }), input]);
}

/** An upload field's entry in what is missing: while its file is on its way, or while a required one has none. */
function uploadWanted(field, controls, logic) {
  const control = controls.get(field.index);
  if (!control || logic.isHidden(field)) return undefined;
  if (control.uploading) return `${nameOf(field)}: still uploading`;
  if (!control.upload) return isRequiredUpload(field) ? nameOf(field) : undefined;
  const problem = logic.problemOf(field);
  return problem ? `${nameOf(field)}: ${problem}` : undefined;
}

/** The form of one signer: its controls, what is still missing, and the body of the Sign call. */
function createSigningForm(view, onChange) {
  const fields = (view.signer.fields || []).map((field, index) => ({ ...field, index }));
  const fillable = fields.filter((field) => !isPrefilled(field));
  const needsInitials = fillable.some((field) => field.type === 'initials');
  const controls = new Map(); // field index → the control that fills it
  const state = { rows: new Map(), computed: new Map(), notes: new Map(), touched: new Set(), controls };
  const logic = createFormLogic(fields, controls, view.signer);
  const changed = (field) => () => {
    if (field) state.touched.add(field.index);
    logic.refill();
    showFormState(fields, logic, state);
    onChange();
  };
  const mode = () => document.querySelector('input[name="mode"]:checked').value;
  let initialsTyped = false; // the signer changed the initials made from their typed name

  const signaturePad = createPad($('pad'), onChange);
  const initialsPad = needsInitials ? createPad($('initials-pad'), onChange) : null;

  const listed = fields.filter((field) => field.type !== 'signature' && field.type !== 'initials');
  const context = { view, controls, computed: state.computed, changed };
  $('field-list').replaceChildren(...listed.map((field) => placedRow(field, formRow(field, context), state)));
  logic.refill();
  showFormState(fields, logic, state);
  $('fields').hidden = listed.length === 0;
  $('initials').hidden = !needsInitials;
  const signatureFields = fields.filter((field) => field.type === 'signature').length;
  $('signature-places').textContent = signatureFields > 1 ? `It goes into the ${signatureFields} signature fields marked on the document.` : '';

  const typedName = () => $('typed-name').value.trim();
  const initials = () => {
    if (mode() === 'drawn') return initialsPad && !initialsPad.isEmpty() ? initialsPad.toDataURL() : '';
    return $('typed-initials').value.trim();
  };
  const signatureGiven = () => (mode() === 'drawn' ? !signaturePad.isEmpty() : typedName().length > 0);

  // The typed signature starts as the name the request gives; another name may be signed with, and the certificate says so.
  function showTypedName() {
    $('typed-preview').textContent = $('typed-name').value;
    if (!initialsTyped) $('typed-initials').value = initialsOf(typedName());
    const other = typedName().length > 0 && !sameName(typedName(), view.signer.name);
    $('typed-other-name').textContent = other
      ? `This request is addressed to ${view.signer.name}. If you sign as “${typedName()}”, the certificate of completion shows both names.`
      : '';
    $('typed-other-name').hidden = !other;
  }
  $('typed-name').value = view.signer.name;
  showTypedName();
  $('typed-name').addEventListener('input', () => {
    showTypedName();
    onChange();
  });
  $('typed-initials').addEventListener('input', () => {
    initialsTyped = true;
    onChange();
  });
  $('clear').addEventListener('click', () => signaturePad.clear());
  $('clear-initials').addEventListener('click', () => initialsPad?.clear());
  for (const radio of document.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener('change', () => {
      for (const [drawn, typed] of [
        ['drawn', 'typed'],
        ['initials-drawn', 'initials-typed'],
      ]) {
        $(drawn).hidden = mode() !== 'drawn';
        $(typed).hidden = mode() !== 'typed';
      }
      onChange();
    });
  }

  return {
    fields,
    /** What the signer still has to give, in words; empty when Sign may be pressed. */
    missing() {
      const missing = [];
      if (!signatureGiven()) missing.push('your signature');
      if (needsInitials && !initials()) missing.push('your initials');
      // What the form's own check finds: an empty field by its name, another problem in its words.
      for (const field of fillable) {
        if (isUpload(field)) {
          const wanted = uploadWanted(field, controls, logic);
          if (wanted) missing.push(wanted);
          continue;
        }
        const problem = logic.problemOf(field);
        if (!problem || !controls.has(field.index)) continue;
        if (field.type === 'checkbox') missing.push(`${nameOf(field)}: tick it`);
        else missing.push(valueOf(field, controls) === undefined ? nameOf(field) : `${nameOf(field)}: ${problem}`);
      }
      return missing;
    },
    /** What a field shows on the document now: text, a drawing (data URL), or '' while it is empty. */
    display(field) {
      if (isPrefilled(field)) return field.type === 'checkbox' ? (field.value === 'true' ? '✓' : '') : prefillText(field);
      if (field.type === 'date') return today;
      if (field.type === 'signature') return mode() === 'drawn' ? (signaturePad.isEmpty() ? '' : { image: signaturePad.toDataURL() }) : typedName();
      if (field.type === 'initials') return mode() === 'drawn' ? (initials() ? { image: initials() } : '') : initials();
      if (field.type === 'staticText') return field.text;
      if (field.type === 'signerName') return view.signer.name;
      if (field.type === 'signerEmail') return view.signer.email;
      if (field.type === 'calculated') return logic.computed(field);
      if (isUpload(field)) {
        const control = controls.get(field.index);
        if (!control?.upload) return '';
        return control.previewUrl ? { image: control.previewUrl } : control.upload.fileName;
      }
      const value = valueOf(field, controls);
      if (field.type === 'checkbox') return value ? '✓' : '';
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    },
    /** The control that fills a field, to focus when its mark on the document is pressed. */
    controlOf(field) {
      if (field.type === 'signature') return mode() === 'drawn' ? $('pad') : $('typed-name');
      if (field.type === 'initials') return mode() === 'drawn' ? $('initials-pad') : $('typed-initials');
      return controls.get(field.index) ?? $(`field-${field.index}`);
    },
    isHidden: (field) => logic.isHidden(field),
    body() {
      const signature = mode() === 'drawn' ? { type: 'drawn', value: signaturePad.toDataURL() } : { type: 'typed', value: typedName() };
      const fieldValues = {};
      for (const field of fillable) {
        if (logic.isHidden(field)) continue;
        if (field.type === 'initials') fieldValues[field.index] = initials();
        else if (valueOf(field, controls) !== undefined) fieldValues[field.index] = valueOf(field, controls);
      }
      return { consent: $('consent').checked, signature, fieldValues };
    },
  };
}

// --- The document, with the signer's fields marked on its pages ---

/**
 * Each page as a canvas in a sheet that also holds the marks of the fields on it (positioned in % of the
 * page). A request of several documents shows them one after another, each with its heading and link.
 */
async function renderDocument(view, marks) {
  $('document').hidden = false;
  fittedWidth = fitWidth();
  markBusy(1);
  try {
    return await renderDocuments(view, marks);
  } finally {
    markBusy(-1);
  }
}

async function renderDocuments(view, marks) {
  const documents = view.documents?.length ? view.documents : [{ id: null, ...view.document }];
  if (documents.length === 1) {
    $('file-name').textContent = documents[0].fileName;
    $('download').href = `${api}/document`;
    const rendered = await renderPdf(`${api}/document`, documents[0].id, $('pages'), marks);
    if (rendered !== undefined) $('pages').dataset.rendered = String(rendered);
    return rendered !== undefined;
  }
  $('document-heading').textContent = `Documents (${documents.length})`;
  $('download').parentElement.hidden = true;
  let total = 0;
  for (const [index, document] of documents.entries()) {
    const url = `${api}/documents/${encodeURIComponent(document.id)}`;
    const pages = element('div', { className: 'pages' });
    const heading = element('h3', { textContent: `${index + 1} of ${documents.length}: ${document.fileName}` });
    const download = element('a', { className: 'download', href: url, download: document.fileName, textContent: `Download ${document.fileName}` });
    const part = element('section', { className: 'packet-document' }, [heading, pages, element('p', {}, [download])]);
    part.dataset.document = document.id;
    $('pages').append(part);
    const rendered = await renderPdf(url, document.id, pages, marks);
    if (rendered === undefined) return false;
    total += rendered;
  }
  $('pages').dataset.rendered = String(total);
  return true;
}

/** A viewer's outcome, shown above the documents, which stay for reading. */
function showViewed() {
  const [title, text] = endStates.viewed;
  $('outcome').className = 'outcome viewed';
  $('outcome').dataset.state = 'viewed';
  $('outcome-title').textContent = title;
  $('outcome-text').textContent = text;
  $('outcome').hidden = false;
}

/** Fetches one PDF and draws its pages into `container`; the number of pages drawn, or undefined when it could not be fetched. */
async function renderPdf(url, documentId, container, marks) {
  const response = await fetch(url, { cache: 'no-store' });
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    handleFailure({ status: response.status, data });
    return undefined;
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  try {
    const pdfjs = await import('/sign-assets/pdf.min.mjs');
    pdfjs.GlobalWorkerOptions.workerSrc = '/sign-assets/pdf.worker.min.mjs';
    const pdf = await pdfjs.getDocument({ data: bytes, isEvalSupported: false, enableXfa: false }).promise;
    for (let number = 1; number <= pdf.numPages; number++) await renderPage(pdf, number, marks, container, documentId);
    return pdf.numPages;
  } catch (error) {
    console.error(error);
    const note = element('p', { textContent: 'The document cannot be shown here. Use its download link to read it before you sign.' });
    container.replaceChildren(note);
    return 0;
  }
}

async function renderPage(pdf, number, marks, container, documentId) {
  const page = await pdf.getPage(number);
  const natural = page.getViewport({ scale: 1 });
  // A blank canvas of the page's shape holds its place until it is drawn.
  const canvas = element('canvas', { width: Math.floor(natural.width), height: Math.floor(natural.height) });
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `Page ${number} of ${pdf.numPages}`);
  const sheet = element('div', { className: 'sheet' }, [canvas]);
  sheet.dataset.page = String(number);
  container.append(sheet);
  // Fields count in PDF points from the page's bottom-left corner, as the page's text tags were measured.
  const [left, bottom] = page.view;
  for (const field of marks.fieldsOn(documentId, number)) {
    const corners = natural.convertToViewportRectangle([left + field.x, bottom + field.y, left + field.x + field.width, bottom + field.y + field.height]);
    const box = {
      left: Math.min(corners[0], corners[2]) / natural.width,
      top: Math.min(corners[1], corners[3]) / natural.height,
      width: Math.abs(corners[2] - corners[0]) / natural.width,
      height: Math.abs(corners[3] - corners[1]) / natural.height,
    };
    sheet.append(marks.create(field, box));
  }
  sheet.style.setProperty('--points', String(natural.width));
  const drawn = { page, natural, sheet, canvas };
  sheets.push(drawn);
  sizeSheet(drawn);
  showZoom();
  await drawSheet(drawn, redraws);
}

// --- Zoom: the pages fit the column, or show at a chosen share of their printed size; always drawn at the screen's pixel density ---

// 1 is the printed size: an inch of paper is 96 CSS pixels, so 11 pt text is 14.7 px tall.
const zoomLevels = [0.5, 0.75, 1, 1.25, 1.5, 2, 3];
const PIXELS_PER_POINT = 96 / 72;
// About 16 MB a page: past it, a zoomed page is drawn at fewer device pixels rather than failing on a phone.
const MAX_CANVAS_PIXELS = 4_000_000;
const sheets = []; // every page shown: { page, natural, sheet, canvas }
let zoom = null; // null: fit to width
let redraws = 0; // a page drawn for an older redraw than the last is thrown away
let drawsRunning = 0;

const fitWidth = () => $('pages').clientWidth || 320;
/** CSS pixels per PDF point of a page at the current zoom. */
const scaleOf = (natural) => (zoom ? zoom * PIXELS_PER_POINT : fitWidth() / natural.width);
const shownShare = () => zoom ?? (sheets.length ? scaleOf(sheets[0].natural) / PIXELS_PER_POINT : 1);
const release = (canvas) => Object.assign(canvas, { width: 0, height: 0 });

/** aria-busy on the pages while any is being drawn (and what a test waits for). */
function markBusy(change) {
  drawsRunning += change;
  $('pages').setAttribute('aria-busy', String(drawsRunning > 0));
}

/** A zoomed page is as wide as its zoom says, and the pages scroll sideways; fitted, it is as wide as the column. */
function sizeSheet({ natural, sheet }) {
  sheet.style.width = zoom ? `${natural.width * scaleOf(natural)}px` : '';
}

/** Draws a page on a new canvas that replaces its old one once done, so the page never shows blank while redrawn. */
async function drawSheet(drawn, generation) {
  const scale = scaleOf(drawn.natural);
  const area = drawn.natural.width * drawn.natural.height * scale * scale;
  const ratio = Math.min(window.devicePixelRatio || 1, Math.sqrt(MAX_CANVAS_PIXELS / area));
  const viewport = drawn.page.getViewport({ scale: scale * ratio });
  const canvas = element('canvas', { width: Math.floor(viewport.width), height: Math.floor(viewport.height) });
  for (const name of ['role', 'aria-label']) canvas.setAttribute(name, drawn.canvas.getAttribute(name));
  await drawn.page.render({ canvasContext: canvas.getContext('2d'), viewport }).promise;
  if (generation !== redraws) return release(canvas);
  drawn.canvas.replaceWith(canvas);
  release(drawn.canvas);
  drawn.canvas = canvas;
}

async function redrawAll() {
  const generation = ++redraws;
  markBusy(1);
  try {
    for (let index = 0; index < sheets.length && generation === redraws; index++) await drawSheet(sheets[index], generation);
  } catch (error) {
    console.error(error);
  } finally {
    markBusy(-1);
  }
}

/** The next zoom level up (1) or down (-1) from the size shown, if there is one. */
function nextZoom(direction) {
  const share = shownShare();
  return direction > 0 ? zoomLevels.find((level) => level > share * 1.01) : zoomLevels.findLast((level) => level < share * 0.99);
}

function showZoom() {
  $('zoom').hidden = false;
  $('zoom-level').textContent = `${Math.round(shownShare() * 100)}%`;
  $('zoom-in').setAttribute('aria-disabled', String(nextZoom(1) === undefined));
  $('zoom-out').setAttribute('aria-disabled', String(nextZoom(-1) === undefined));
  $('zoom-fit').setAttribute('aria-pressed', String(zoom === null));
}

/** Changes the zoom, keeping the place read in the middle of the screen where it was. */
function setZoom(level) {
  const pages = $('pages');
  const middle = window.innerHeight / 2;
  const anchor = sheets.find(({ sheet }) => {
    const box = sheet.getBoundingClientRect();
    return box.top <= middle && box.bottom >= middle;
  });
  const box = anchor?.sheet.getBoundingClientRect();
  const down = box && (middle - box.top) / box.height;
  // Across, the middle stays too; from pages that fit, the lines' start shows.
  const across = pages.scrollWidth > pages.clientWidth ? (pages.scrollLeft + pages.clientWidth / 2) / pages.scrollWidth : 0;
  zoom = level;
  sheets.forEach(sizeSheet);
  if (anchor) {
    const moved = anchor.sheet.getBoundingClientRect();
    window.scrollBy(0, moved.top + down * moved.height - middle);
  }
  pages.scrollLeft = across ? across * pages.scrollWidth - pages.clientWidth / 2 : 0;
  showZoom();
  redrawAll();
}

for (const [id, direction] of [
  ['zoom-in', 1],
  ['zoom-out', -1],
]) {
  $(id).addEventListener('click', () => {
    const next = nextZoom(direction);
    if (next) setZoom(next);
  });
}
$('zoom-fit').addEventListener('click', () => {
  if (zoom !== null) setZoom(null);
});

// Fitted pages are drawn again, sharp, when the column changes width (a phone turned, a window resized).
let fittedWidth = 0;
let resizing;
new ResizeObserver(() => {
  if (zoom !== null || !sheets.length || Math.abs(fitWidth() - fittedWidth) < 2) return;
  fittedWidth = fitWidth();
  clearTimeout(resizing);
  resizing = setTimeout(() => {
    showZoom();
    redrawAll();
  }, 250);
}).observe($('pages'));

/** The marks of a signer's fields on the pages: placed once, their content kept up to date with the form. */
function createMarks(form, canAct, firstDocumentId) {
  const placed = [];
  const emptyText = (field) =>
    ({ signature: 'Sign here', initials: 'Initials', text: field.label || 'Text', image: field.label || 'Image', attachment: field.label || 'Attachment' })[
      field.type
    ] || '';
  function paint({ field, mark }) {
    mark.hidden = form.isHidden(field);
    const shown = form.display(field);
    mark.classList.toggle('empty', !shown);
    // A mark's name holds the text it shows, so that what is seen is what is read out.
    const empty = shown ? '' : emptyText(field);
    const state = !shown
      ? `empty${empty && !nameOf(field).includes(empty) ? `, marked ${empty}` : ''}`
      : `${isPrefilled(field) ? 'set by the sender' : 'filled'}${typeof shown === 'string' ? `: ${shown}` : ''}`;
    mark.setAttribute('aria-label', `${nameOf(field)}: ${typeNames[field.type].toLowerCase()} field, ${state}`);
    if (shown && typeof shown === 'object') mark.replaceChildren(element('img', { src: shown.image, alt: '' }));
    else mark.textContent = shown || emptyText(field);
  }
  return {
    // A field without a document is on the first (requests made before requests had several documents).
    fieldsOn: (documentId, page) =>
      form?.fields.filter((field) => field.page === page && (documentId === null || (field.documentId ?? firstDocumentId) === documentId)) ?? [],
    create(field, box) {
      const fixed = isPrefilled(field) || field.type === 'date' || WRITTEN.includes(field.type) || !canAct;
      // A fixed mark is a picture of the field (a span may not carry a name of its own).
      const mark = element(fixed ? 'span' : 'button', { className: `mark ${field.type}${fixed ? ' fixed' : ''}` });
      if (fixed) mark.setAttribute('role', 'img');
      if (!fixed) {
        mark.type = 'button';
        mark.addEventListener('click', () => {
          const control = form.controlOf(field);
          control.scrollIntoView({ block: 'center' });
          control.focus({ preventScroll: true });
        });
      }
      mark.dataset.field = String(field.index);
      mark.style.left = `${box.left * 100}%`;
      mark.style.top = `${box.top * 100}%`;
      mark.style.width = `${box.width * 100}%`;
      mark.style.height = `${box.height * 100}%`;
      mark.style.setProperty('--field-height', String(field.height));
      placed.push({ field, mark });
      paint({ field, mark });
      return mark;
    },
    refresh: () => placed.forEach(paint),
  };
}

// --- Putting it together ---

function setUpSigning(view) {
  const signButton = $('sign-button');
  let busy = false;
  let marks = null;
  // An approver places nothing: nothing is missing, and no consent to sign is asked.
  const approving = view.signer.recipientType === 'approver';
  const update = () => {
    const missing = approving ? [] : form.missing();
    if (!$('consent').checked) missing.push('“I agree to sign this document electronically”: tick it');
    signButton.disabled = busy || missing.length > 0;
    $('missing').textContent = missing.length ? `Still to fill in: ${missing.join(', ')}.` : '';
    $('missing').hidden = missing.length === 0;
    $('decline-confirm').disabled = busy || $('reason').value.trim().length === 0;
    marks?.refresh();
  };
  const form = createSigningForm(view, () => update());
  marks = createMarks(form, true, view.documents?.[0]?.id ?? null);

  $('consent').addEventListener('change', update);
  $('reason').addEventListener('input', update);
  $('decline-button').addEventListener('click', () => {
    $('decline').hidden = false;
    $('reason').focus();
  });
  $('decline-cancel').addEventListener('click', () => {
    $('decline').hidden = true;
  });

  async function send(path, body, state) {
    busy = true;
    update();
    clearAlert();
    try {
      const result = await call('POST', path, body);
      if (result.ok) {
        showOutcome(state);
        if (state === 'declined') finish('declined', 'declined');
        else finish('completed', 'signing_complete');
      } else await handleFailure(result);
    } catch {
      showAlert('The connection failed. Check your network and try again.');
      tellParent('error');
    } finally {
      busy = false;
      update();
    }
  }

  if (approving) {
    // Approve or Decline, nothing to draw or type.
    for (const part of document.querySelectorAll('#sign .signature-part')) part.hidden = true;
    $('sign-heading').textContent = 'Your approval';
    signButton.textContent = 'Approve';
    $('consent').checked = true;
    signButton.addEventListener('click', () => send('/approve', undefined, 'approved'));
  } else signButton.addEventListener('click', () => send('/sign', form.body(), 'signed'));
  $('decline-confirm').addEventListener('click', () => send('/decline', { reason: $('reason').value.trim() }, 'declined'));

  $('sign').hidden = false;
  update();
  return marks;
}

// --- Verification: a signer the sender asked to prove who they are gives a code before anything shows ---

const verifyTexts = {
  access_code: () => 'The sender asked you for an access code before you can see the documents. They gave it to you themselves, not in the e-mail.',
  email_code: (state) => `We e-mailed a 6-digit code to ${state.sentTo}. Enter it to see the documents. It works for 10 minutes.`,
};

/** A time as the signer reads it: in the embedded session's locale, else the browser's. */
function timeOf(iso) {
  try {
    return new Date(iso).toLocaleTimeString(embedded?.locale ?? undefined);
  } catch {
    return new Date(iso).toLocaleTimeString();
  }
}

/** Shows the code form until a right code; resolves once this browser may see the request. */
function verify(state) {
  return new Promise((resolve) => {
    $('verify-text').textContent = verifyTexts[state.method](state);
    $('resend-button').hidden = state.method !== 'email_code';
    $('verify').hidden = false;
    $('verify-code').focus();
    const locked = (data) =>
      showAlert(
        data.lockedUntilSenderActs
          ? 'Too many wrong codes: this page stays locked until the sender sends you the link again. Contact the person who sent you this request.'
          : `Too many wrong codes: this page is locked until ${timeOf(data.lockedUntil)}. The sender has been told.`,
      );
    if (state.lockedUntil) locked(state);
    $('resend-button').addEventListener('click', async () => {
      clearAlert();
      const sent = await call('POST', '/verification/code');
      if (sent.ok) {
        $('verify-status').textContent = `A new code is on its way to ${sent.data.sentTo}.`;
        $('verify-status').hidden = false;
        return;
      }
      if (sent.data.error === 'verification_locked') return locked(sent.data);
      showAlert(sent.data.message || 'The code could not be sent. Please try again.');
    });
    $('verify-form').addEventListener('submit', async (event) => {
      event.preventDefault();
      const code = $('verify-code').value.trim();
      if (!code) return showAlert('Enter the code.');
      $('verify-button').disabled = true;
      clearAlert();
      try {
        const result = await call('POST', '/verification', { code });
        if (result.ok) {
          $('verify').hidden = true;
          return resolve();
        }
        if (result.status === 404) return showOutcome('invalid');
        if (result.data.error === 'verification_locked') return locked(result.data);
        showAlert(result.data.message || 'Something went wrong. Please try again.');
        $('verify-code').select();
      } catch {
        showAlert('The connection failed. Check your network and try again.');
      } finally {
        $('verify-button').disabled = false;
      }
    });
  });
}

async function start() {
  let result;
  tellParent('ready');
  try {
    const state = await call('GET', '/verification');
    if (state.ok && !state.data.verified) {
      $('loading').hidden = true;
      tellParent('verification_required');
      // An e-mailed code is sent when the page opens, unless one sent earlier still works.
      if (state.data.method === 'email_code' && !state.data.codeExpiresAt && !state.data.lockedUntil) {
        const sent = await call('POST', '/verification/code');
        if (sent.ok) Object.assign(state.data, sent.data);
      }
      await verify(state.data);
      $('loading').hidden = false;
    }
    result = await call('GET', '/request');
  } catch {
    $('loading').hidden = true;
    tellParent('error');
    return showAlert('The connection failed. Check your network and reload the page.');
  }
  $('loading').hidden = true;
  if (!result.ok) return handleFailure(result);
  const view = result.data;
  requestId = view.request.id;
  if (!embedded) returnUrl = view.request.redirectUrl;
  $('title').textContent = view.request.title;
  document.title = `${view.request.title} · ${document.querySelector('meta[name="application-name"]').content}`;
  $('sender-name').textContent = view.request.sender.name || view.request.sender.email;
  $('sender-email').textContent = view.request.sender.name ? `<${view.request.sender.email}>` : '';
  if (view.request.message) {
    $('message').textContent = view.request.message;
    $('message').hidden = false;
  }
  $('summary').hidden = false;

  if (view.documents?.length > 1) {
    documentNames = new Map(view.documents.map((each) => [each.id, each.fileName]));
    documentNames.first = view.documents[0].fileName;
  }
  const state = stateOf(view);
  if (state) showOutcome(state);
  if (state === 'expired') return finish('expired', 'expired');
  if (state && state !== 'waiting') return;
  tellParent('viewed');
  if (view.signer.recipientType === 'viewer') {
    // A viewer's step is done once the documents have been shown: the page says so after drawing them.
    const shown = await renderDocument(view, createMarks(null, false, null));
    if (!shown || state) return;
    const result = await call('POST', '/viewed');
    if (!result.ok) return handleFailure(result);
    showViewed();
    return finish('completed', 'signing_complete');
  }
  const marks = state ? createMarks(null, false, null) : setUpSigning(view);
  await renderDocument(view, marks);
}

start();
