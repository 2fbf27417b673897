// The signing page: reads the signer's view from /sign/:token/request, draws the PDF with pdf.js,
// and sends Sign or Decline. Everything shown comes from the API answers; nothing is inserted as HTML.

const token = location.pathname.split('/').filter(Boolean).pop();
const api = `/sign/${encodeURIComponent(token)}`;
const $ = (id) => document.getElementById(id);

const endStates = {
  signed: ['You have signed', 'You have signed. Everyone will receive the sealed PDF by e-mail.'],
  completed: ['Everyone has signed', 'This document has been signed by everyone. Everyone will receive the sealed PDF by e-mail.'],
  declined: ['You declined to sign', 'You declined to sign this document. The sender has been told.'],
  declinedByOther: ['This request was declined', 'Another signer declined this document, so it will not be completed. There is nothing more for you to do.'],
  cancelled: ['This request was cancelled', 'The sender cancelled this signing request. There is nothing to sign.'],
  expired: ['This signing link has expired', 'This signing link has expired. Ask the sender for a new one.'],
  waiting: ['It is not your turn yet', 'Other people must sign before you. You will receive an e-mail when it is your turn.'],
  invalid: ['This signing link is not valid', 'Check that you opened the whole link from your e-mail, or ask the sender for a new one.'],
};

async function call(method, path, body) {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: body ? { 'Content-Type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
    cache: 'no-store',
    credentials: 'same-origin',
  });
  const type = response.headers.get('Content-Type') || '';
  const data = type.includes('application/json') ? await response.json().catch(() => ({})) : {};
  return { status: response.status, ok: response.ok, data };
}

function showAlert(message, details = []) {
  const alert = $('alert');
  alert.replaceChildren(document.createTextNode(message));
  if (details.length) {
    const list = document.createElement('ul');
    for (const detail of details) {
      const item = document.createElement('li');
      item.textContent = detail;
      list.append(item);
    }
    alert.append(list);
  }
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
  if (signer === 'declined') return 'declined';
  if (!view.yourTurn) return 'waiting';
  return null;
}

/** The answer to Sign / Decline / the PDF: an end state, or the API's message in the alert region. */
async function handleFailure(result) {
  if (result.status === 410) return showOutcome('expired');
  if (result.status === 404) return showOutcome('invalid');
  showAlert(result.data.message || 'Something went wrong. Please try again.', result.data.details || []);
  if (result.status === 409) {
    const view = await call('GET', '/request');
    const state = view.ok && stateOf(view.data);
    if (state) showOutcome(state);
  }
}

async function renderDocument(view) {
  $('file-name').textContent = view.document.fileName;
  $('download').href = `${api}/document`;
  $('document').hidden = false;
  const response = await fetch(`${api}/document`, { cache: 'no-store' });
  if (!response.ok) {
    const data = await response.json().catch(() => ({}));
    return handleFailure({ status: response.status, data });
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  try {
    const pdfjs = await import('/sign-assets/pdf.min.mjs');
    pdfjs.GlobalWorkerOptions.workerSrc = '/sign-assets/pdf.worker.min.mjs';
    const pdf = await pdfjs.getDocument({ data: bytes, isEvalSupported: false, enableXfa: false }).promise;
    for (let number = 1; number <= pdf.numPages; number++) await renderPage(pdf, number);
    $('pages').dataset.rendered = String(pdf.numPages);
  } catch (error) {
    console.error(error);
    const note = document.createElement('p');
    note.textContent = 'The document cannot be shown here. Use "Download the PDF" to read it before you sign.';
    $('pages').replaceChildren(note);
  }
}

async function renderPage(pdf, number) {
  const page = await pdf.getPage(number);
  const width = $('pages').clientWidth || 320;
  const ratio = window.devicePixelRatio || 1;
  const viewport = page.getViewport({ scale: (width / page.getViewport({ scale: 1 }).width) * ratio });
  const canvas = document.createElement('canvas');
  canvas.width = Math.floor(viewport.width);
  canvas.height = Math.floor(viewport.height);
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `Page ${number} of ${pdf.numPages}`);
  $('pages').append(canvas);
  await page.render({ canvasContext: canvas.getContext('2d'), viewport }).promise;
}

/** A signature pad drawn with pointer events (mouse, pen and touch alike); it scales to its width. */
function createSignaturePad(canvas, onChange) {
  const context = canvas.getContext('2d');
  let empty = true;
  let last = null;

  function resize() {
    const ratio = window.devicePixelRatio || 1;
    const width = Math.round(canvas.clientWidth * ratio);
    const height = Math.round(canvas.clientHeight * ratio);
    if (!width || !height || (canvas.width === width && canvas.height === height)) return;
    canvas.width = width;
    canvas.height = height;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.lineWidth = 2.5;
    context.lineCap = 'round';
    context.lineJoin = 'round';
    context.strokeStyle = '#0b1f66';
    clear();
  }

  function clear() {
    context.clearRect(0, 0, canvas.width, canvas.height);
    empty = true;
    onChange();
  }

  const pointAt = (event) => {
    const box = canvas.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  };

  canvas.addEventListener('pointerdown', (event) => {
    event.preventDefault();
    canvas.setPointerCapture(event.pointerId);
    last = pointAt(event);
    context.beginPath();
    context.arc(last.x, last.y, context.lineWidth / 2, 0, Math.PI * 2);
    context.fillStyle = context.strokeStyle;
    context.fill();
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!last) return;
    event.preventDefault();
    const point = pointAt(event);
    context.beginPath();
    context.moveTo(last.x, last.y);
    context.lineTo(point.x, point.y);
    context.stroke();
    last = point;
    if (empty) {
      empty = false;
      onChange();
    }
  });
  const end = () => {
    last = null;
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);

  new ResizeObserver(resize).observe(canvas);
  resize();
  return { clear, isEmpty: () => empty, toDataURL: () => canvas.toDataURL('image/png') };
}

function setUpSigning(view) {
  const mode = () => document.querySelector('input[name="mode"]:checked').value;
  const signButton = $('sign-button');
  let busy = false;
  let pad = null;
  const hasSignature = () => (mode() === 'drawn' ? Boolean(pad && !pad.isEmpty()) : $('typed-name').value.trim().length > 0);
  const update = () => {
    signButton.disabled = busy || !$('consent').checked || !hasSignature();
    $('decline-confirm').disabled = busy || $('reason').value.trim().length === 0;
  };
  pad = createSignaturePad($('pad'), () => update());

  $('typed-name').placeholder = view.signer.name;
  for (const radio of document.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener('change', () => {
      $('drawn').hidden = mode() !== 'drawn';
      $('typed').hidden = mode() !== 'typed';
      update();
    });
  }
  $('typed-name').addEventListener('input', () => {
    $('typed-preview').textContent = $('typed-name').value;
    update();
  });
  $('consent').addEventListener('change', update);
  $('clear').addEventListener('click', () => pad.clear());
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
      if (result.ok) showOutcome(state);
      else await handleFailure(result);
    } catch {
      showAlert('The connection failed. Check your network and try again.');
    } finally {
      busy = false;
      update();
    }
  }

  signButton.addEventListener('click', () => {
    const signature = mode() === 'drawn' ? { type: 'drawn', value: pad.toDataURL() } : { type: 'typed', value: $('typed-name').value.trim() };
    return send('/sign', { consent: $('consent').checked, signature }, 'signed');
  });
  $('decline-confirm').addEventListener('click', () => send('/decline', { reason: $('reason').value.trim() }, 'declined'));

  $('sign').hidden = false;
  update();
}

async function start() {
  let result;
  try {
    result = await call('GET', '/request');
  } catch {
    $('loading').hidden = true;
    return showAlert('The connection failed. Check your network and reload the page.');
  }
  $('loading').hidden = true;
  if (!result.ok) return handleFailure(result);
  const view = result.data;
  $('title').textContent = view.request.title;
  document.title = `${view.request.title} · Signet`;
  $('sender-name').textContent = view.request.sender.name || view.request.sender.email;
  $('sender-email').textContent = view.request.sender.name ? `<${view.request.sender.email}>` : '';
  if (view.request.message) {
    $('message').textContent = view.request.message;
    $('message').hidden = false;
  }
  $('summary').hidden = false;

  const state = stateOf(view);
  if (state) showOutcome(state);
  if (state && state !== 'waiting') return;
  if (!state) setUpSigning(view);
  await renderDocument(view);
}

start();
