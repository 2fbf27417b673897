// Bulk sends: the upload form sends the CSV (Check or Send) with the CSRF token and shows the check or its problems
// beside the form; a job's page polls its progress every 2 seconds while it runs, and once it has finished shows its
// rows as they ended. Without this script the job's page shows the state it was loaded in.

const POLL_MS = 2000;
const plural = (count, word) => `${count} ${word}${count === 1 ? '' : 's'}`;

const form = document.getElementById('bulk-form');
if (form) {
  const problems = document.getElementById('bulk-problems');
  const checked = document.getElementById('bulk-checked');
  const busy = document.getElementById('bulk-busy');
  const buttons = [...form.querySelectorAll('button')];

  const showProblems = (status, answer) => {
    const listed = answer.details?.length ? answer.details : [answer.message];
    const intro = document.createElement('p');
    intro.textContent = status === 400 ? 'Nothing was sent. Fix these problems in the CSV, then check it again:' : 'Nothing was sent:';
    const list = document.createElement('ul');
    for (const problem of listed) list.append(Object.assign(document.createElement('li'), { textContent: problem }));
    problems.replaceChildren(intro, list);
    problems.hidden = false;
    problems.focus();
  };

  // Another file: the last answer was about the one before.
  form.addEventListener('change', () => {
    problems.hidden = true;
    checked.hidden = true;
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const dryRun = event.submitter?.value === 'true';
    const body = new FormData(form);
    body.set('dryRun', String(dryRun));
    problems.hidden = true;
    checked.hidden = true;
    for (const button of buttons) button.disabled = true;
    busy.textContent = dryRun ? 'Checking…' : 'Sending…';
    try {
      const response = await fetch(form.action, { method: 'POST', body, headers: { Accept: 'application/json', 'X-CSRF-Token': form.dataset.csrf } });
      const answer = await response.json().catch(() => ({ message: `The server answered ${response.status}.` }));
      // The job is made: its page shows the progress (the buttons stay disabled until it opens).
      if (response.status === 201) return window.location.assign(`/app/bulk-sends/${answer.id}`);
      if (response.ok) {
        checked.textContent = `The check passed: ${plural(answer.rowCount, 'row')} → ${plural(answer.requests, 'request')}, ${plural(answer.invitations, 'invitation')}. Nothing is sent until you press Send.`;
        checked.hidden = false;
      } else {
        showProblems(response.status, answer);
      }
    } catch {
      showProblems(0, { message: 'The upload was interrupted. Try again.' });
    }
    for (const button of buttons) button.disabled = false;
    busy.textContent = '';
  });
}

const progress = document.getElementById('bulk-progress-section');
if (progress && progress.dataset.finished !== 'true') {
  const bar = document.getElementById('bulk-progress');
  const text = document.getElementById('bulk-progress-text');
  const live = document.getElementById('bulk-live');

  const show = (job) => {
    const done = job.rowCount - job.rows.queued;
    bar.max = job.rowCount;
    bar.value = done;
    bar.textContent = `${done} of ${job.rowCount}`;
    text.textContent = `${done} of ${job.rowCount} rows done`;
    for (const cell of progress.querySelectorAll('[data-count]')) {
      const [group, status] = cell.dataset.count.split('.');
      cell.textContent = job[group][status];
    }
  };

  // The parts of the page that only change at the end (status, cancel form, rows), from the page loaded again.
  const refreshPage = async () => {
    const response = await fetch(window.location.href, { headers: { Accept: 'text/html' } });
    const fetched = new DOMParser().parseFromString(await response.text(), 'text/html');
    for (const part of document.querySelectorAll('[data-refresh]')) {
      const fresh = fetched.getElementById(part.id);
      if (fresh) part.replaceWith(document.importNode(fresh, true));
    }
  };

  const poll = async () => {
    try {
      const response = await fetch(progress.dataset.url, { headers: { Accept: 'application/json' } });
      if (!response.ok) throw new Error(`status ${response.status}`);
      const job = await response.json();
      show(job);
      live.textContent = '';
      if (job.finishedAt === null) return void setTimeout(poll, POLL_MS);
      await refreshPage();
      progress.dataset.finished = 'true';
      live.textContent = `Finished: ${job.rows.sent} sent, ${job.rows.failed} failed, ${job.rows.cancelled} cancelled.`;
    } catch {
      live.textContent = 'The progress could not be loaded; trying again.';
      setTimeout(poll, POLL_MS);
    }
  };
  setTimeout(poll, POLL_MS);
}
