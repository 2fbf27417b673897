import type { Account } from '../accounts/service';
import type { ApiKey } from '../apiKeys/service';
import { scopes } from '../domain/scopes';
import type { Role } from '../domain/roles';
import { roleAllows } from './access';
import type { SigningBreakdown } from '../dashboard/backend';
import type { presentDocument } from '../documents/presenter';
import { html, jsonData, type Html } from './html';
import { MIN_PASSWORD_LENGTH } from '../members/passwords';

// The console's pages: server-rendered HTML; /app/assets/console.js adds copy buttons, confirmations,
// drag-and-drop upload and the chart. No inline script or style anywhere (see the CSP in routes.ts).

export interface Frame {
  csrf: string;
  account?: Account;
  /** The logged-in member's role: the nav shows what it may open. */
  role?: Role;
  /** The path of the nav entry to mark as current. */
  current?: string;
}

const nav = [
  ['/app', 'Dashboard'],
  ['/app/documents', 'Documents'],
  ['/app/requests', 'Requests'],
  ['/app/templates', 'Templates'],
  ['/app/bulk-sends', 'Bulk sends'],
  ['/app/webhooks', 'Webhooks'],
  ['/app/settings/api-keys', 'API keys'],
  ['/app/settings/plan', 'Plan'],
  ['/app/settings/branding', 'Branding'],
  ['/app/settings/members', 'Members'],
] as const;

/** Whether the logged-in member's role lets them make this request: pages offer only what it does. */
export const can = (frame: Frame, method: 'GET' | 'POST', path: string) => !frame.role || roleAllows(frame.role, method, path);

/** A list of records: a table with a caption for screen readers, one header per column. */
export const listTable = (caption: string, columns: string[], rows: Html[] | Html, id?: string) =>
  html`<table class="list"${id ? html` id="${id}"` : ''}><caption class="visually-hidden">${caption}</caption>
      <thead><tr>${columns.map((column) => html`<th scope="col">${column}</th>`)}</tr></thead>
      <tbody>${rows}</tbody></table>`;

export const csrfField = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;

export function layout(frame: Frame, title: string, main: Html, scripts: string[] = []) {
  const header = frame.account
    ? html`<header class="top">
    <a class="brand" href="/app">Signet</a>
    <nav aria-label="Console">
      <ul>${nav.filter(([href]) => can(frame, 'GET', href)).map(([href, label]) => html`<li><a href="${href}"${frame.current === href ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul>
    </nav>
    <form method="post" action="/app/logout" class="logout">${csrfField(frame.csrf)}<button type="submit">Log out</button></form>
  </header>`
    : html`<header class="top"><a class="brand" href="/app">Signet</a></header>`;
  return html`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>${title} · Signet</title>
  <link rel="icon" href="/app/assets/favicon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/app/assets/console.css">
  ${scripts.map((src) => html`<script type="module" src="/app/assets/${src}"></script>`)}
</head>
<body>
  <a class="skip" href="#main">Skip to content</a>
  ${header}
  <main id="main" tabindex="-1">
${frame.account && !frame.account.emailVerified ? unverifiedBanner(frame, frame.account.email) : ''}
${main}
  </main>
</body>
</html>`.text;
}

/** Until the account's address is proven: what that means, and the link once more. */
const unverifiedBanner = (frame: Frame, email: string) =>
  html`<section class="banner" aria-label="Confirm your e-mail address">
    <p><strong>Confirm your e-mail address.</strong> We sent a link to <strong>${email}</strong>. Until you follow it, you can look around and make API keys, but not upload, send or change anything.</p>
    <form method="post" action="/app/email/verification">${csrfField(frame.csrf)}<button type="submit">Send the link again</button></form>
  </section>`;

export const problemList = (problems: string[]) =>
  problems.length ? html`<div class="alert" role="alert"><ul>${problems.map((problem) => html`<li>${problem}</li>`)}</ul></div>` : '';

/** A status as a coloured badge (console.css styles each status's badge). */
export const statusBadge = (status: string) => html`<span class="badge badge-${status}">${status}</span>`;

/** One <option> of a <select>, selected when it is the value chosen. */
export const option = (value: string, text: string, chosen: boolean) => html`<option value="${value}"${chosen ? html` selected` : ''}>${text}</option>`;

export const dateTime = (value: Date | string | null) => {
  if (!value) return html`never`;
  const iso = typeof value === 'string' ? value : value.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
};

export function signupPage(frame: Frame, values: { email?: string; accountName?: string } = {}, problems: string[] = []) {
  return layout(
    frame,
    'Sign up',
    html`<h1>Create your account</h1>
    ${problemList(problems)}
    <form method="post" action="/app/signup" class="card stack">
      ${csrfField(frame.csrf)}
      <label for="accountName">Account name</label>
      <input id="accountName" name="accountName" required maxlength="100" autocomplete="organization" value="${values.accountName ?? ''}">
      <label for="email">E-mail</label>
      <input id="email" name="email" type="email" required maxlength="320" autocomplete="email" value="${values.email ?? ''}">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="200" autocomplete="new-password" aria-describedby="password-hint">
      <p id="password-hint" class="hint">At least ${MIN_PASSWORD_LENGTH} characters.</p>
      <button type="submit" class="primary">Sign up</button>
    </form>
    <p>Already have an account? <a href="/app/login">Log in</a>.</p>`,
  );
}

export function loginPage(frame: Frame, values: { email?: string } = {}, problems: string[] = []) {
  return layout(
    frame,
    'Log in',
    html`<h1>Log in</h1>
    ${problemList(problems)}
    <form method="post" action="/app/login" class="card stack">
      ${csrfField(frame.csrf)}
      <label for="email">E-mail</label>
      <input id="email" name="email" type="email" required maxlength="320" autocomplete="username" value="${values.email ?? ''}">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" required maxlength="200" autocomplete="current-password">
      <button type="submit" class="primary">Log in</button>
    </form>
    <p><a href="/app/password/forgot">Forgot your password?</a></p>
    <p>New to Signet? <a href="/app/signup">Create an account</a>.</p>`,
  );
}

export function errorPage(frame: Frame, status: number, message: string) {
  return layout(
    frame,
    `Error ${status}`,
    html`<h1>${status === 404 ? 'Not found' : 'Something is wrong'}</h1><p class="alert" role="alert">${message}</p><p><a href="/app">Back to the console</a></p>`,
  );
}

/** The expiries the console offers a new key: [days ('' = never), label]. */
export const keyExpiries = [
  ['', 'Never'],
  ['7', 'In 7 days'],
  ['30', 'In 30 days'],
  ['90', 'In 90 days'],
  ['365', 'In a year'],
] as const;

export function apiKeysPage(frame: Frame, keys: ApiKey[], created?: { name: string; secret: string }, problems: string[] = []) {
  const shown = created
    ? html`<section class="card created" aria-labelledby="created-heading">
      <h2 id="created-heading">Your new key “${created.name}”</h2>
      <p>Copy it now: it is shown only once.</p>
      <div class="copy-row">
        <input id="new-key" class="mono" readonly value="${created.secret}" aria-label="New API key">
        <button type="button" data-copy="new-key">Copy</button>
      </div>
      <p class="hint" data-copy-status="new-key" aria-live="polite"></p>
    </section>`
    : '';
  const rows = keys.map(
    (key) => html`<tr>
      <td data-label="Name">${key.name}</td>
      <td data-label="Prefix" class="mono">${key.prefix}…</td>
      <td data-label="Scopes">${key.scopes === null ? 'all' : key.scopes.join(', ')}</td>
      <td data-label="Created">${dateTime(key.createdAt)}</td>
      <td data-label="Expires">${key.expiresAt ? dateTime(key.expiresAt) : 'never'}</td>
      <td data-label="Last used">${dateTime(key.lastUsedAt)}</td>
      <td data-label="Status">${
        key.revokedAt
          ? html`revoked ${dateTime(key.revokedAt)}`
          : html`<form method="post" action="/app/settings/api-keys/${key.id}/revoke" data-confirm="Revoke the key “${key.name}”? Programs using it stop working at once.">
          ${csrfField(frame.csrf)}<button type="submit" class="danger" aria-label="Revoke ${key.name}">Revoke</button></form>`
      }</td>
    </tr>`,
  );
  return layout(
    frame,
    'API keys',
    html`<h1>API keys</h1>
    <p>Use a key as <code>Authorization: Bearer &lt;API_KEY&gt;</code> on <code>/api/v1</code>.</p>
    ${shown}
    ${problemList(problems)}
    <form method="post" action="/app/settings/api-keys" class="card">
      ${csrfField(frame.csrf)}
      <label for="key-name">Name</label>
      <input id="key-name" name="name" required maxlength="100" placeholder="e.g. production">
      <fieldset>
        <legend>Scopes: what the key may do</legend>
        <input type="hidden" name="scopesChosen" value="1">
        ${scopes.map((scope) => html`<label class="choice"><input type="checkbox" name="scopes" value="${scope}" checked> ${scope}</label>`)}
      </fieldset>
      <label for="key-expiry">Expires</label>
      <select id="key-expiry" name="expiresInDays">
        ${keyExpiries.map(([days, text]) => html`<option value="${days}">${text}</option>`)}
      </select>
      <button type="submit" class="primary">Create key</button>
    </form>
    ${keys.length ? listTable('Your API keys', ['Name', 'Prefix', 'Scopes', 'Created', 'Expires', 'Last used', 'Status'], rows) : html`<p>No keys yet.</p>`}`,
    ['console.js'],
  );
}

const limitText = (limit: number | null) => (limit === null ? 'unlimited' : String(limit));

export interface DashboardView {
  stats: {
    documents: { total: number; thisMonth: number };
    signingRequests: { total: number; byStatus: Record<string, number> };
    completionRate: number | null;
    timeToComplete: { medianSeconds: number | null };
    signers: { total: number };
    usage: { documents: { used: number; limit: number | null } };
  };
  activity: { id: string; timestamp: string; summary: string }[];
  trends: { month: string; documentsCreated: number; requestsSent: number; completed: number; declined: number; expired: number }[];
  breakdown: SigningBreakdown;
}

const duration = (seconds: number | null) => {
  if (seconds === null) return '—';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 360) / 10} h`;
  return `${Math.round(seconds / 8640) / 10} days`;
};

const capitalized = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** A two-column table of counts: narrow enough to stay a table at 375 px (table.list turns rows into cards). */
const countTable = (caption: string, heading: string, unit: string, rows: [label: string, count: number][]) =>
  html`<table class="counts"><caption>${caption}</caption>
    <thead><tr><th scope="col">${heading}</th><th scope="col">${unit}</th></tr></thead>
    <tbody>${rows.map(([label, count]) => html`<tr><td class="wrap">${label}</td><td>${count}</td></tr>`)}</tbody>
  </table>`;

/** GET /dashboard/signing-breakdown over all time: a chart of requests by status, and every number as a table. */
function breakdownSection(breakdown: SigningBreakdown) {
  const requests = Object.entries(breakdown.requestsByStatus).map(([status, count]): [string, number] => [capitalized(status), count]);
  const signers = Object.entries(breakdown.signersByStatus).map(([status, count]): [string, number] => [capitalized(status), count]);
  const total = requests.reduce((sum, [, count]) => sum + count, 0);
  const body = total
    ? html`<div class="chart-box short"><canvas id="breakdown-chart" role="img" aria-label="Signing requests by status: ${requests.map(([status, count]) => `${status} ${count}`).join(', ')}"></canvas></div>
      <script type="application/json" id="breakdown-data">${jsonData(breakdown.requestsByStatus)}</script>
      <div class="breakdown-tables">
        ${countTable('Signing requests by status', 'Status', 'Requests', requests)}
        ${countTable('Signers by status', 'Status', 'Signers', signers)}
        ${
          breakdown.topPendingSigners.length
            ? countTable(
                'Waiting on',
                'Signer',
                'Requests',
                breakdown.topPendingSigners.map((signer) => [signer.email, signer.pendingRequests]),
              )
            : html`<p>Nobody has a pending request waiting on them.</p>`
        }
        ${
          breakdown.declineReasons.length
            ? countTable(
                'Why people decline',
                'Reason',
                'Declines',
                breakdown.declineReasons.map((decline) => [decline.reason ?? 'No reason given', decline.count]),
              )
            : html`<p>Nobody has declined.</p>`
        }
      </div>`
    : html`<p>No signing requests yet. <a href="/app/requests/new">Send a document for signing</a>.</p>`;
  return html`<section class="card" aria-labelledby="breakdown-heading">
      <h2 id="breakdown-heading">Signing breakdown</h2>
      ${body}
    </section>`;
}

export function dashboardPage(frame: Frame, { stats, activity, trends, breakdown }: DashboardView) {
  const cards: [string, string | number][] = [
    ['Documents', stats.documents.total],
    ['Documents this month', `${stats.usage.documents.used} of ${limitText(stats.usage.documents.limit)}`],
    ['Signing requests', stats.signingRequests.total],
    ['Pending', stats.signingRequests.byStatus.pending ?? 0],
    ['Completed', stats.signingRequests.byStatus.completed ?? 0],
    ['Completion rate', stats.completionRate === null ? '—' : `${Math.round(stats.completionRate * 100)} %`],
    ['Median time to complete', duration(stats.timeToComplete.medianSeconds)],
    ['Signers', stats.signers.total],
  ];
  return layout(
    frame,
    'Dashboard',
    html`<h1>${frame.account?.name ?? 'Dashboard'}</h1>
    <ul class="cards" aria-label="Statistics">${cards.map(([label, value]) => html`<li class="card stat"><span class="stat-label">${label}</span> <strong class="stat-value">${value}</strong></li>`)}</ul>
    <section class="card" aria-labelledby="trends-heading">
      <h2 id="trends-heading">Monthly trends</h2>
      <div class="chart-box"><canvas id="trends-chart" role="img" aria-label="Documents created, requests sent and completed per month"></canvas></div>
      <script type="application/json" id="trends-data">${jsonData(trends)}</script>
      <details><summary>The last six months as a table</summary>
      <table class="list compact"><caption class="visually-hidden">Monthly trends</caption>
        <thead><tr><th scope="col">Month</th><th scope="col">Documents</th><th scope="col">Sent</th><th scope="col">Completed</th><th scope="col">Declined</th><th scope="col">Expired</th></tr></thead>
        <tbody>${trends.slice(-6).map((month) => html`<tr><td data-label="Month">${month.month}</td><td data-label="Documents">${month.documentsCreated}</td><td data-label="Sent">${month.requestsSent}</td><td data-label="Completed">${month.completed}</td><td data-label="Declined">${month.declined}</td><td data-label="Expired">${month.expired}</td></tr>`)}</tbody>
      </table></details>
    </section>
    ${breakdownSection(breakdown)}
    <section class="card" aria-labelledby="activity-heading">
      <h2 id="activity-heading">Activity</h2>
      ${
        activity.length
          ? html`<ol class="feed">${activity.map((event) => html`<li><time datetime="${event.timestamp}">${event.timestamp.slice(0, 16).replace('T', ' ')}</time> ${event.summary}</li>`)}</ol>`
          : html`<p>Nothing yet. <a href="/app/documents">Upload a document</a> to begin.</p>`
      }
    </section>`,
    ['chart.umd.js', 'dashboard.js'],
  );
}

export interface PlanView {
  account: Account;
  usage: { periodResetsAt: string; documents: { used: number; limit: number | null }; templates: { used: number; limit: number | null } };
  webhooks: boolean;
  rateLimits: { operation: string; limit: number }[];
}

const meter = (label: string, used: number, limit: number | null) =>
  html`<div class="usage"><span>${label}: <strong>${used}</strong> of ${limitText(limit)}</span>${limit === null ? '' : html`<meter min="0" max="${limit}" value="${Math.min(used, limit)}" aria-label="${label}">${used} of ${limit}</meter>`}</div>`;

export function planPage(frame: Frame, { account, usage, webhooks, rateLimits }: PlanView) {
  return layout(
    frame,
    'Plan',
    html`<h1>Plan: <span class="plan">${account.plan}</span></h1>
    <section class="card" aria-labelledby="usage-heading">
      <h2 id="usage-heading">Usage this month</h2>
      ${meter('Documents', usage.documents.used, usage.documents.limit)}
      ${meter('Templates', usage.templates.used, usage.templates.limit)}
      <p class="hint">The monthly quota resets at ${usage.periodResetsAt.slice(0, 16).replace('T', ' ')} UTC.</p>
      <p>Webhooks: ${webhooks ? 'included' : 'Business plan only'}.</p>
    </section>
    <section class="card" aria-labelledby="limits-heading">
      <h2 id="limits-heading">Rate limits</h2>
      <table class="list compact"><thead><tr><th scope="col">Operation</th><th scope="col">Requests per hour</th></tr></thead>
      <tbody>${rateLimits.map((limit) => html`<tr><td data-label="Operation" class="mono">${limit.operation}</td><td data-label="Per hour">${limit.limit}</td></tr>`)}</tbody></table>
    </section>
    <p class="hint">Changing plan is an operator command: <code>npx signet account plan</code>.</p>`,
  );
}

export function documentsPage(
  frame: Frame,
  documents: ReturnType<typeof presentDocument>[],
  { q, maxBytes, problems = [] }: { q?: string; maxBytes: number; problems?: string[] },
) {
  const rows = documents.map(
    (document) => html`<tr>
      <td data-label="Name"><a href="/app/documents/${document.id}">${document.fileName}</a></td>
      <td data-label="Pages">${document.pageCount ?? '—'}</td>
      <td data-label="Size">${Math.ceil(document.fileSize / 1024)} KB</td>
      <td data-label="Created">${dateTime(document.createdAt)}</td>
      <td data-label="Actions">${
        can(frame, 'POST', '/app/documents')
          ? html`<form method="post" action="/app/documents/${document.id}/delete" data-confirm="Delete “${document.fileName}”?">
        ${csrfField(frame.csrf)}<button type="submit" class="danger" aria-label="Delete ${document.fileName}">Delete</button></form>`
          : ''
      }</td>
    </tr>`,
  );
  return layout(
    frame,
    'Documents',
    html`<h1>Documents</h1>
    ${problemList(problems)}
    ${
      can(frame, 'POST', '/app/documents')
        ? html`<section class="card" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Upload a PDF</h2>
      <div class="dropzone" id="dropzone" data-csrf="${frame.csrf}" data-max-bytes="${maxBytes}">
        <p>Drop a PDF here, or</p>
        <label class="button" for="file">Choose a file</label>
        <input id="file" type="file" accept="application/pdf,.pdf" class="visually-hidden">
        <progress id="upload-progress" max="100" value="0" hidden aria-label="Upload progress"></progress>
        <p id="upload-status" aria-live="polite"></p>
      </div>
    </section>`
        : ''
    }
    <form method="get" action="/app/documents" class="inline-form" role="search">
      <label for="q">Search</label>
      <input id="q" name="q" type="search" maxlength="200" value="${q ?? ''}">
      <button type="submit">Search</button>
    </form>
    ${
      documents.length
        ? listTable('Documents', ['Name', 'Pages', 'Size', 'Created', 'Actions'], rows, 'documents')
        : html`<p>${q ? 'No document matches.' : 'No documents yet.'}</p>`
    }`,
    ['console.js'],
  );
}
