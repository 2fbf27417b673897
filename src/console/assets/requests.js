// Signing requests: the list filters as you type (the page is fetched again and its results swapped in),
// and the send form adds and removes signer rows (requestFields.js places their fields). Without this
// script both forms still work by submitting.

const filters = document.getElementById('request-filters');
if (filters) {
  const count = document.getElementById('request-count');
  let timer;
  let controller;

  const refresh = async () => {
    const url = `${filters.action}?${new URLSearchParams(new FormData(filters))}`;
    controller?.abort();
    controller = new AbortController();
    try {
      const response = await fetch(url, { headers: { Accept: 'text/html' }, signal: controller.signal });
      const fetched = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('request-results');
      if (!fetched) throw new Error(`status ${response.status}`);
      document.getElementById('request-results').replaceWith(document.importNode(fetched, true));
      count.textContent = fetched.dataset.summary;
      history.replaceState(null, '', url);
    } catch (error) {
      if (error.name !== 'AbortError') count.textContent = 'The list could not be loaded. Press Filter to try again.';
    }
  };

  filters.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, 250);
  });
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(timer);
    refresh();
  });
}

const signers = document.getElementById('signers');
if (signers?.dataset.editable) {
  const MAX_SIGNERS = 50;
  const add = document.getElementById('add-signer');
  const rows = () => [...signers.querySelectorAll('.signer-row')];

  // Names stay signers.0…, signers.1… in page order, so the server's problems name the rows shown.
  const renumber = () => {
    rows().forEach((row, index) => {
      row.querySelector('legend').textContent = `Signer ${index + 1}`;
      for (const input of row.querySelectorAll('input, select')) input.name = input.name.replace(/^signers-\d+-/, `signers-${index}-`);
      for (const field of row.querySelectorAll('[id^="signers-"]')) field.id = field.id.replace(/^signers-\d+-/, `signers-${index}-`);
      for (const label of row.querySelectorAll('label[for^="signers-"]')) label.htmlFor = label.htmlFor.replace(/^signers-\d+-/, `signers-${index}-`);
      const remove = row.querySelector('.remove-signer');
      remove.hidden = rows().length === 1;
      remove.setAttribute('aria-label', `Remove signer ${index + 1}`);
    });
    add.hidden = rows().length >= MAX_SIGNERS;
  };

  signers.addEventListener('click', (event) => {
    const remove = event.target.closest('.remove-signer');
    if (!remove) return;
    const row = remove.closest('.signer-row');
    const number = rows().indexOf(row) + 1;
    row.remove();
    renumber();
    add.focus();
    // The fields placed for the rows (requestFields.js) follow their signers.
    signers.dispatchEvent(new CustomEvent('signer-removed', { detail: { number } }));
  });
  add.addEventListener('click', () => {
    const row = rows()[0].cloneNode(true);
    for (const input of row.querySelectorAll('input')) input.value = '';
    for (const select of row.querySelectorAll('select')) select.selectedIndex = 0;
    signers.append(row);
    renumber();
    row.querySelector('input').focus();
    signers.dispatchEvent(new CustomEvent('signer-added'));
  });
  renumber();
}
