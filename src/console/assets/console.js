// The console's behaviour: copy buttons, confirmations before destructive posts, and the PDF upload
// (drag and drop or file picker, with a progress bar). Loaded as a module; no inline script anywhere.

for (const button of document.querySelectorAll('[data-copy]')) {
  button.addEventListener('click', async () => {
    const id = button.getAttribute('data-copy');
    const source = document.getElementById(id);
    const status = document.querySelector(`[data-copy-status="${id}"]`);
    try {
      await navigator.clipboard.writeText(source.value);
      if (status) status.textContent = 'Copied to the clipboard.';
    } catch {
      source.select();
      if (status) status.textContent = 'Select the key and copy it (Ctrl+C).';
    }
  });
}

for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
  });
}

const dropzone = document.getElementById('dropzone');
if (dropzone) {
  const input = document.getElementById('file');
  const progress = document.getElementById('upload-progress');
  const status = document.getElementById('upload-status');
  const maxBytes = Number(dropzone.dataset.maxBytes);

  const upload = (file) => {
    if (!file) return;
    if (file.type && file.type !== 'application/pdf') return (status.textContent = `${file.name} is not a PDF.`);
    if (file.size > maxBytes) return (status.textContent = `${file.name} is larger than ${Math.floor(maxBytes / 1048576)} MB.`);
    const body = new FormData();
    body.append('file', file, file.name);
    const request = new XMLHttpRequest();
    request.open('POST', '/app/documents');
    request.setRequestHeader('X-CSRF-Token', dropzone.dataset.csrf);
    request.setRequestHeader('Accept', 'application/json');
    request.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) progress.value = Math.round((event.loaded / event.total) * 100);
    });
    request.addEventListener('load', () => {
      if (request.status === 201) {
        progress.value = 100;
        status.textContent = `Uploaded ${file.name}.`;
        window.location.reload();
        return;
      }
      let message = `Upload failed (${request.status}).`;
      try {
        const problem = JSON.parse(request.responseText);
        message = (problem.details?.length ? problem.details : [problem.message]).join(' ');
      } catch {
        // Not JSON: keep the status line.
      }
      progress.hidden = true;
      status.textContent = message;
    });
    request.addEventListener('error', () => {
      progress.hidden = true;
      status.textContent = 'The upload was interrupted. Try again.';
    });
    progress.hidden = false;
    progress.value = 0;
    status.textContent = `Uploading ${file.name}…`;
    request.send(body);
  };

  input.addEventListener('change', () => upload(input.files[0]));
  for (const type of ['dragenter', 'dragover']) {
    dropzone.addEventListener(type, (event) => {
      event.preventDefault();
      dropzone.classList.add('dragging');
    });
  }
  for (const type of ['dragleave', 'drop']) dropzone.addEventListener(type, () => dropzone.classList.remove('dragging'));
  dropzone.addEventListener('drop', (event) => {
    event.preventDefault();
    upload(event.dataTransfer.files[0]);
  });
}
