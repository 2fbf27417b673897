// The logo of the brand settings: the chosen file is sent as a data: URL, as an API client sends it, and
// the page reloads to show it (or says why it was refused).

const input = document.getElementById('brand-logo');
const status = document.getElementById('logo-status');

input?.addEventListener('change', () => {
  const file = input.files?.[0];
  if (!file) return;
  const reader = new FileReader();
  reader.addEventListener('load', async () => {
    status.textContent = 'Uploading…';
    const response = await fetch('/app/settings/branding/logo', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': input.dataset.csrf },
      body: JSON.stringify({ logo: reader.result }),
    });
    if (response.ok) return window.location.assign('/app/settings/branding?saved=1');
    const problem = await response.json().catch(() => ({ message: `Upload failed (${response.status}).` }));
    status.textContent = [problem.message, ...(problem.details ?? [])].join(' ');
  });
  reader.readAsDataURL(file);
});
