import type { Context, Middleware } from 'koa';
import { parsePathParams } from '../api/route';
import { plans } from '../domain/plans';
import { parseInput } from '../api/validation';
import { eventTypes } from '../domain/events';
import { AppError } from '../errors';
import { attemptDelivery, sendTestPing } from '../webhooks/delivery';
import { presentDelivery, presentDeliveryDetail, presentWebhook } from '../webhooks/presenter';
import {
  DeliveryIdParams,
  DeliveryListQuerySchema,
  WebhookCreateSchema,
  WebhookIdParams,
  WebhookListQuerySchema,
  WebhookUpdateSchema,
} from '../webhooks/schema';
import {
  createWebhook,
  deleteWebhook,
  getBacklog,
  getBacklogs,
  getDelivery,
  getWebhook,
  listDeliveries,
  listWebhooks,
  planUpgradeRequired,
  rotateWebhookSecret,
  updateWebhook,
} from '../webhooks/service';
import { html, type Html } from './html';
import { can, csrfField, dateTime, layout, listTable, problemList, statusBadge, type Frame } from './pages';
import type { ConsoleKit } from './kit';

// The console's webhooks (/app/webhooks): the REST API's schemas, service and presenter, behind a session.

type Webhook = ReturnType<typeof presentWebhook>;
type Delivery = ReturnType<typeof presentDelivery>;
type DeliveryDetail = ReturnType<typeof presentDeliveryDetail>;
type WebhookDetail = Webhook & { backlog: number; oldestPendingAt: Date | null };
interface WebhookForm {
  url?: string;
  description?: string | null;
  events?: string[];
}

const PAGE_SIZE = 25;
/** Response bodies are stored up to 1 KB; the page shows at most this much of any stored text. */
const SHOWN_CHARACTERS = 1000;

/** A repeated form field (checkboxes) as a list of strings, however many were ticked. */
const formList = (value: unknown): string[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((item) => typeof item === 'string');

export function webhookPages({ router, deps, rateLimit, requireLogin, frame, page, account, form, seeOther }: ConsoleKit) {
  const { db, webhooks } = deps;
  const delivery = { db, secretKey: webhooks.secretKey, poster: webhooks.poster };
  const here = (ctx: Context) => frame(ctx, '/app/webhooks');

  // Business plan only: other plans see why, and every change is refused as the REST API refuses it.
  const businessOnly: Middleware = async (ctx, next) => {
    const { plan } = account(ctx);
    if (plans[plan].webhooks) return next();
    if (ctx.method !== 'GET') throw planUpgradeRequired(plan);
    page(ctx, planRequiredPage(here(ctx), planUpgradeRequired(plan).message), ctx.path === '/app/webhooks' ? 200 : 403);
  };
  const guard = [requireLogin, businessOnly];

  const webhookForm = (ctx: Context): WebhookForm => {
    const values = form(ctx);
    return { url: values.url?.trim(), description: values.description?.trim() || null, events: formList(values.events) };
  };
  const detail = async (ctx: Context, id: string): Promise<WebhookDetail> => {
    const webhook = await getWebhook(db, account(ctx).id, id);
    return { ...presentWebhook(webhook), ...(await getBacklog(db, webhook.id)) };
  };
  const detailPage = async (ctx: Context, id: string, extra: { secret?: string; values?: WebhookForm; problems?: string[] } = {}, status = 200) => {
    const webhook = await detail(ctx, id);
    const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined;
    const deliveries = await listDeliveries(db, account(ctx).id, id, parseInput(DeliveryListQuerySchema, { limit: PAGE_SIZE, cursor }));
    page(ctx, webhookPage(here(ctx), webhook, { ...deliveries, data: deliveries.data.map(presentDelivery) }, extra), status);
  };
  const sent = (ctx: Context, webhookId: string, deliveryId: string) => {
    seeOther(ctx, `/app/webhooks/${webhookId}/deliveries/${deliveryId}`);
  };

  router.get('/webhooks', ...guard, async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined;
    const list = await listWebhooks(db, account(ctx).id, parseInput(WebhookListQuerySchema, { limit: PAGE_SIZE, cursor }));
    const backlogs = await getBacklogs(
      db,
      list.data.map((row) => row.id),
    );
    const rows = list.data.map((row) => ({ ...presentWebhook(row), ...backlogs.get(row.id)! }));
    page(ctx, webhooksPage(here(ctx), rows, list.nextCursor));
  });

  router.get('/webhooks/new', ...guard, (ctx) => page(ctx, newWebhookPage(here(ctx))));
  router.post('/webhooks', ...guard, rateLimit('POST /webhooks'), async (ctx) => {
    const values = webhookForm(ctx);
    try {
      const input = parseInput(WebhookCreateSchema, { ...values, description: values.description ?? undefined });
      const { webhook, secret } = await createWebhook(db, webhooks, account(ctx), input);
      await detailPage(ctx, webhook.id, { secret }, 201);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400) throw error;
      page(ctx, newWebhookPage(here(ctx), values, error.details ?? [error.message]), 400);
    }
  });

  router.get('/webhooks/:id', ...guard, async (ctx) => {
    const { id } = parsePathParams(WebhookIdParams, ctx.params, 'Webhook');
    await detailPage(ctx, id);
  });

  router.post('/webhooks/:id', ...guard, async (ctx) => {
    const { id } = parsePathParams(WebhookIdParams, ctx.params, 'Webhook');
    const values = webhookForm(ctx);
    try {
      await updateWebhook(db, webhooks, account(ctx), id, parseInput(WebhookUpdateSchema, values));
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 400) throw error;
      return detailPage(ctx, id, { values, problems: error.details ?? [error.message] }, 400);
    }
    seeOther(ctx, `/app/webhooks/${id}`);
  });

  router.post('/webhooks/:id/enabled', ...guard, async (ctx) => {
    const { id } = parsePathParams(WebhookIdParams, ctx.params, 'Webhook');
    await updateWebhook(db, webhooks, account(ctx), id, { enabled: form(ctx).enabled === 'true' });
    seeOther(ctx, `/app/webhooks/${id}`);
  });

  router.post('/webhooks/:id/rotate-secret', ...guard, async (ctx) => {
    const { id } = parsePathParams(WebhookIdParams, ctx.params, 'Webhook');
    const { secret } = await rotateWebhookSecret(db, webhooks, account(ctx), id);
    await detailPage(ctx, id, { secret });
  });

  router.post('/webhooks/:id/test', ...guard, rateLimit('POST /webhooks'), async (ctx) => {
    const { id } = parsePathParams(WebhookIdParams, ctx.params, 'Webhook');
    const webhook = await getWebhook(db, account(ctx).id, id);
    sent(ctx, webhook.id, await sendTestPing(delivery, webhook.id));
  });

  router.post('/webhooks/:id/delete', ...guard, async (ctx) => {
    const { id } = parsePathParams(WebhookIdParams, ctx.params, 'Webhook');
    await deleteWebhook(db, account(ctx).id, id);
    seeOther(ctx, '/app/webhooks');
  });

  router.get('/webhooks/:id/deliveries/:deliveryId', ...guard, async (ctx) => {
    const { id, deliveryId } = parsePathParams(DeliveryIdParams, ctx.params, 'Delivery');
    const { delivery: found, attempts } = await getDelivery(db, account(ctx).id, id, deliveryId);
    page(ctx, deliveryPage(here(ctx), presentDeliveryDetail(found, attempts)));
  });

  router.post('/webhooks/:id/deliveries/:deliveryId/redeliver', ...guard, rateLimit('POST /webhooks'), async (ctx) => {
    const { id, deliveryId } = parsePathParams(DeliveryIdParams, ctx.params, 'Delivery');
    const { delivery: found } = await getDelivery(db, account(ctx).id, id, deliveryId);
    await attemptDelivery(delivery, found.id);
    sent(ctx, id, found.id);
  });
}

// --- Pages ---

const truncated = (text: string | null) => (text && text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS)}…` : text);

function health(webhook: Webhook) {
  if (!webhook.enabled) {
    if (webhook.disabledReason === 'gone') return 'Disabled by Signet: the receiver answered 410 Gone';
    if (webhook.disabledReason === 'failing') return 'Disabled by Signet: every delivery failed for 5 days';
    return 'Disabled';
  }
  return webhook.failingSince ? html`Enabled, failing since ${dateTime(webhook.failingSince)}` : 'Enabled';
}

function planRequiredPage(frame: Frame, message: string) {
  return layout(
    frame,
    'Webhooks',
    html`<h1>Webhooks</h1>
    <p class="card">${message}</p>
    <p>Webhooks send a signed POST to your server whenever something happens in your account: a document is signed, a request completes, a signer declines.</p>
    <p><a href="/app/settings/plan">See your plan</a>.</p>`,
  );
}

function webhooksPage(frame: Frame, webhooks: WebhookDetail[], nextCursor: string | null) {
  const rows = webhooks.map(
    (webhook) => html`<tr>
      <td data-label="URL" class="mono wrap"><a href="/app/webhooks/${webhook.id}">${webhook.url}</a></td>
      <td data-label="Events">${webhook.events.join(', ')}</td>
      <td data-label="Status">${health(webhook)}</td>
      <td data-label="Waiting">${webhook.backlog}</td>
    </tr>`,
  );
  return layout(
    frame,
    'Webhooks',
    html`<h1>Webhooks</h1>
    ${can(frame, 'GET', '/app/webhooks/new') ? html`<p><a class="button primary" href="/app/webhooks/new">New webhook</a></p>` : ''}
    ${
      webhooks.length
        ? html`${listTable('Your webhooks', ['URL', 'Events', 'Status', 'Waiting'], rows)}
      ${nextCursor ? html`<p><a href="/app/webhooks?cursor=${nextCursor}">Older webhooks</a></p>` : ''}`
        : html`<p>No webhooks yet.</p>`
    }`,
  );
}

/** URL, description and the event checkboxes: the same fields on creation and on the edit form. */
function webhookFields(values: WebhookForm) {
  const chosen = new Set(values.events ?? []);
  const choice = (type: string, label: string | Html) =>
    html`<label class="choice"><input type="checkbox" name="events" value="${type}"${chosen.has(type) ? html` checked` : ''}> <span>${label}</span></label>`;
  return html`<label for="url">URL</label>
      <input id="url" name="url" type="url" required maxlength="2048" value="${values.url ?? ''}" placeholder="https://example.com/hooks/signet" aria-describedby="url-hint">
      <p id="url-hint" class="hint">https:// on a public address; Signet signs every POST with the secret.</p>
      <label for="description">Description (optional)</label>
      <input id="description" name="description" maxlength="500" value="${values.description ?? ''}">
      <fieldset>
        <legend>Events</legend>
        ${choice('*', html`<strong>All events</strong>, including those added later`)}
        ${eventTypes.map((type) => choice(type, html`<code>${type}</code>`))}
      </fieldset>`;
}

function newWebhookPage(frame: Frame, values: WebhookForm = {}, problems: string[] = []) {
  return layout(
    frame,
    'New webhook',
    html`<p class="hint"><a href="/app/webhooks">Webhooks</a></p>
    <h1>New webhook</h1>
    ${problemList(problems)}
    <form method="post" action="/app/webhooks" class="card stack webhook-form">
      ${csrfField(frame.csrf)}
      ${webhookFields(values)}
      <button type="submit" class="primary">Create webhook</button>
    </form>`,
  );
}

function secretShown(secret: string) {
  return html`<section class="card created" aria-labelledby="secret-heading">
      <h2 id="secret-heading">The signing secret</h2>
      <p>Copy it now: it is shown only once. Verify the <code>X-Service-Signature</code> header with it.</p>
      <div class="copy-row">
        <input id="new-secret" class="mono" readonly value="${secret}" aria-label="Signing secret">
        <button type="button" data-copy="new-secret">Copy</button>
      </div>
      <p class="hint" data-copy-status="new-secret" aria-live="polite"></p>
    </section>`;
}

/** A form of one button; none for a member whose role may not post it. */
const postButton = (frame: Frame, action: string, label: string, options: { confirm?: string; danger?: boolean; fields?: Record<string, string> } = {}) =>
  !can(frame, 'POST', action)
    ? ''
    : html`<form method="post" action="${action}"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>
        ${csrfField(frame.csrf)}${Object.entries(options.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
        <button type="submit"${options.danger ? html` class="danger"` : ''}>${label}</button></form>`;

function deliveryRows(webhookId: string, deliveries: Delivery[]) {
  return deliveries.map(
    (delivery) => html`<tr>
      <td data-label="Event" class="mono"><a href="/app/webhooks/${webhookId}/deliveries/${delivery.id}">${delivery.eventType}</a></td>
      <td data-label="Status">${statusBadge(delivery.status)}</td>
      <td data-label="Response">${delivery.lastStatusCode ?? delivery.lastError ?? '—'}</td>
      <td data-label="Attempts">${delivery.attempts}</td>
      <td data-label="Queued">${dateTime(delivery.createdAt)}</td>
    </tr>`,
  );
}

function webhookPage(
  frame: Frame,
  webhook: WebhookDetail,
  deliveries: { data: Delivery[]; nextCursor: string | null },
  { secret, values, problems = [] }: { secret?: string; values?: WebhookForm; problems?: string[] },
) {
  const base = `/app/webhooks/${webhook.id}`;
  const facts: [string, Html | string | number][] = [
    ['Status', health(webhook)],
    ['Events', webhook.events.join(', ')],
    ['Description', webhook.description ?? '—'],
    ['Waiting deliveries', webhook.backlog ? html`${webhook.backlog}, the oldest since ${dateTime(webhook.oldestPendingAt)}` : 0],
    ['Created', dateTime(webhook.createdAt)],
  ];
  return layout(
    frame,
    'Webhook',
    html`<p class="hint"><a href="/app/webhooks">Webhooks</a></p>
    <h1 class="mono wrap">${webhook.url}</h1>
    ${secret ? secretShown(secret) : ''}
    <dl class="card facts">${facts.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}</dl>
    <div class="actions">
      ${postButton(frame, `${base}/test`, 'Send a test ping')}
      ${webhook.enabled ? postButton(frame, `${base}/enabled`, 'Disable', { fields: { enabled: 'false' } }) : postButton(frame, `${base}/enabled`, 'Enable', { fields: { enabled: 'true' } })}
      ${postButton(frame, `${base}/rotate-secret`, 'Rotate the secret', { confirm: 'Replace the signing secret? The old one keeps signing alongside the new one for 24 hours.' })}
      ${postButton(frame, `${base}/delete`, 'Delete', { danger: true, confirm: 'Delete this webhook and its delivery log?' })}
    </div>
    ${
      can(frame, 'POST', base)
        ? html`<section class="card" aria-labelledby="edit-heading">
      <h2 id="edit-heading">Edit</h2>
      ${problemList(problems)}
      <form method="post" action="${base}" class="stack webhook-form">
        ${csrfField(frame.csrf)}
        ${webhookFields(values ?? webhook)}
        <button type="submit" class="primary">Save changes</button>
      </form>
    </section>`
        : ''
    }
    <section aria-labelledby="log-heading">
      <h2 id="log-heading">Delivery log</h2>
      ${
        deliveries.data.length
          ? html`${listTable('Deliveries, newest first', ['Event', 'Status', 'Response', 'Attempts', 'Queued'], deliveryRows(webhook.id, deliveries.data))}
        ${deliveries.nextCursor ? html`<p><a href="${base}?cursor=${deliveries.nextCursor}">Older deliveries</a></p>` : ''}`
          : html`<p>No deliveries yet. Send a test ping to try the receiver.</p>`
      }
    </section>`,
    ['console.js'],
  );
}

function deliveryPage(frame: Frame, delivery: DeliveryDetail) {
  const facts: [string, Html | string | number][] = [
    ['Status', delivery.status],
    ['Attempts', delivery.attempts],
    ['Last response', delivery.lastStatusCode ?? '—'],
    ['Next retry', delivery.nextRetryAt ? dateTime(delivery.nextRetryAt) : '—'],
    ['Event id', html`<span class="mono">${delivery.eventId}</span>`],
    ['Queued', dateTime(delivery.createdAt)],
  ];
  return layout(
    frame,
    'Delivery',
    html`<p class="hint"><a href="/app/webhooks/${delivery.webhookId}">Back to the webhook</a></p>
    <h1 class="mono wrap">${delivery.eventType}</h1>
    <dl class="card facts">${facts.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}</dl>
    <div class="actions">${postButton(frame, `/app/webhooks/${delivery.webhookId}/deliveries/${delivery.id}/redeliver`, 'Send again now')}</div>
    <section class="card" aria-labelledby="attempts-heading">
      <h2 id="attempts-heading">Attempts</h2>
      ${
        delivery.attemptLog.length
          ? html`<ol class="attempts">${delivery.attemptLog.map(
              (attempt) => html`<li>
          <p>${dateTime(attempt.createdAt)}: ${attempt.statusCode === null ? 'no response' : html`answered <strong>${attempt.statusCode}</strong>`} in ${attempt.latencyMs} ms</p>
          ${attempt.error ? html`<p class="hint">${attempt.error}</p>` : ''}
          ${attempt.responseBody ? html`<pre class="body" tabindex="0" aria-label="Response body of attempt ${attempt.attempt}">${truncated(attempt.responseBody)}</pre>` : ''}
        </li>`,
            )}</ol>`
          : html`<p>Not attempted yet.</p>`
      }
    </section>
    <section class="card" aria-labelledby="body-heading">
      <h2 id="body-heading">Request body</h2>
      <pre class="body" tabindex="0" aria-label="Request body">${truncated(delivery.requestBody)}</pre>
    </section>`,
    ['console.js'],
  );
}
