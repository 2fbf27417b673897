// The verification page: sends the PDF chosen or dropped to POST /api/v1/verify as it is (application/pdf)
// and shows the answer. Everything shown comes from the answer; nothing is inserted as HTML.
const form = document.getElementById('verify-form');
const input = document.getElementById('file');
const answer = document.getElementById('answer');
const button = document.getElementById('verify-button');

const verdicts = {
  sealed_unmodified: ['Sealed by Signet, unchanged', 'This PDF is, byte for byte, one Signet sealed when its signing request completed.'],
  modified_after_seal: [
    'Changed after Signet sealed it',
    'This PDF carries a Signet seal, but it is not the file Signet sealed: it was changed or added to since.',
  ],
  sealed_by_other: ['Signed, but not by Signet', 'This PDF is signed with a certificate that is not this Signet’s seal.'],
  unsigned: ['Not signed', 'This PDF carries no signature.'],
};

// What each PAdES baseline level means to someone holding the file, in words.
const levels = {
  'B-B': 'Signed by Signet (PAdES B-B). The time of the seal is the Signet server’s own clock: no timestamp authority vouches for it.',
  'B-T': 'Signed by Signet and timestamped (PAdES B-T): a timestamp authority vouches that the seal existed at the time shown.',
  'B-LT': 'Signed by Signet and timestamped, with the certificates and revocation answers needed to check it embedded in the file (PAdES B-LT).',
  'B-LTA':
    'Signed by Signet, timestamped, with the validation data embedded and an archive timestamp over all of it, so that it can still be checked once its certificates have expired (PAdES B-LTA).',
};

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function details(pairs) {
  const list = element('dl');
  for (const [term, value] of pairs) {
    if (value === undefined || value === null) continue;
    list.append(element('dt', term), element('dd', String(value)));
  }
  return list;
}

const yesNo = (value) => (value ? 'yes' : 'no');
// In UTC, as the console and the certificate of completion show times: the same instant reads the same everywhere.
const utcTime = (value) => (value ? `${new Date(value).toISOString().slice(0, 16).replace('T', ' ')} UTC` : undefined);

/** A timestamp in words: when, by whom, and a plain warning when it does not check out. */
function timestampText(timestamp) {
  if (!timestamp) return 'none';
  const text = `${utcTime(timestamp.time)} by ${timestamp.authority ?? 'an unnamed authority'}`;
  return timestamp.intact ? text : `${text} (does not check out)`;
}

function sealPart(seal) {
  const part = element('div', undefined, 'seal');
  part.append(element('h3', `Seal level: ${seal.level}`), element('p', levels[seal.level] ?? ''));
  part.append(
    details([
      ['Level', `PAdES baseline ${seal.level}`],
      ['Timestamped at', seal.timestampedAt ? utcTime(seal.timestampedAt) : 'not timestamped'],
      ['Timestamp authority', seal.timestampAuthority ?? 'none'],
      ['Validation data embedded', yesNo(seal.validationDataEmbedded)],
      ['Archive timestamp', utcTime(seal.archiveTimestampedAt)],
    ]),
  );
  return part;
}

function signaturePart(signature, index) {
  const part = element('div', undefined, 'signature');
  if (signature.kind === 'document_timestamp') {
    part.append(element('h3', `Document timestamp ${index + 1}`));
    part.append(
      details([
        ['Timestamp authority', signature.signer ?? 'unreadable'],
        ['Timestamped at', utcTime(signature.signedAt)],
        ['Certificate SHA-256', signature.certificateFingerprint],
        ['Timestamp checks out', yesNo(signature.intact)],
        ['Covers the whole file', yesNo(signature.coversWholeFile)],
      ]),
    );
    return part;
  }
  part.append(element('h3', `Signature ${index + 1}`));
  part.append(
    details([
      ['Signed by', signature.signer ?? 'unreadable'],
      ['Signed at', utcTime(signature.signedAt)],
      ['Timestamp', timestampText(signature.timestamp)],
      ['Certificate SHA-256', signature.certificateFingerprint],
      ['Signature checks out', yesNo(signature.intact)],
      ['Covers the whole file', yesNo(signature.coversWholeFile)],
      ['Signet’s seal', yesNo(signature.trusted)],
    ]),
  );
  return part;
}

function show(result) {
  const [title, text] = verdicts[result.result] ?? ['Unknown answer', ''];
  const box = element('section', undefined, `verdict ${result.result}`);
  box.append(element('h2', title), element('p', text));
  if (result.signingRequestId) {
    box.append(
      details([
        ['Signing request', result.signingRequestId],
        ['Completed', utcTime(result.completedAt)],
        ['Document', (result.documents ?? []).map((document) => document.fileName).join(', ') || undefined],
      ]),
    );
  }
  if (result.seal) box.append(sealPart(result.seal));
  result.signatures.forEach((signature, index) => box.append(signaturePart(signature, index)));
  answer.replaceChildren(box);
}

function fail(message) {
  const box = element('section', undefined, 'verdict failed');
  box.append(element('h2', 'Could not verify this file'), element('p', message));
  answer.replaceChildren(box);
}

async function verify(file) {
  if (!file) return fail('Choose a PDF first.');
  button.disabled = true;
  answer.replaceChildren(element('p', `Checking ${file.name}…`));
  try {
    const response = await fetch('/api/v1/verify', { method: 'POST', headers: { 'Content-Type': 'application/pdf' }, body: file });
    const body = await response.json().catch(() => ({}));
    if (response.ok) show(body);
    else fail([body.message, ...(body.details ?? [])].filter(Boolean).join(' ') || `The server answered ${response.status}.`);
  } catch {
    fail('The server could not be reached. Try again.');
  } finally {
    button.disabled = false;
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  verify(input.files[0]);
});
form.addEventListener('dragover', (event) => {
  event.preventDefault();
  form.classList.add('over');
});
form.addEventListener('dragleave', () => form.classList.remove('over'));
form.addEventListener('drop', (event) => {
  event.preventDefault();
  form.classList.remove('over');
  const file = event.dataTransfer.files[0];
  if (file) verify(file);
});
