import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { createRouter } from '../api/router';
import type { Db } from '../db';
import { getOutboxAttachment, getOutboxMessage, listOutboxMessages } from './outbox';
import { escapeHtml } from './templates';

// /dev/mail: the outbox as a web page, so a developer can open the links Signet e-mails. It shows
// every signing link and has no authentication, so it is mounted only in development (and tests) and
// answers only clients on this machine: anyone else gets 404, as if it did not exist.
const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-src 'self'; frame-ancestors 'none'";

function page(title: string, body: string) {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body style="margin:0 auto;max-width:960px;padding:16px;font-family:system-ui,sans-serif;color:#18181b;overflow-wrap:break-word;">
${body}
</body>
</html>`;
}

/** Escaped plain text, with its http(s) links made clickable. */
function linkify(text: string) {
  return escapeHtml(text).replace(/https?:\/\/[^\s<]+/g, (url) => `<a href="${url}" target="_blank" rel="noopener">${url}</a>`);
}

const isLoopback = (address = '') => /^(127\.|::1$|::ffff:127\.)/.test(address);

/**
 * A request made on this machine: the connection's own peer address (not X-Forwarded-For, which anyone
 * may send) is loopback, and no proxy relayed it (a proxy on this machine connects from loopback for
 * clients anywhere, and says so in X-Forwarded-For or Forwarded).
 */
const isLocalRequest = (req: IncomingMessage) =>
  isLoopback(req.socket.remoteAddress) && req.headers['x-forwarded-for'] === undefined && req.headers.forwarded === undefined;

// Outbox ids are bigints; a longer run of digits is no id of ours.
const outboxId = (text: string) => (/^\d{1,15}$/.test(text) ? Number(text) : undefined);

/**
 * The outbox's pages, for local requests only. The check wraps the router rather than being a
 * middleware inside it, so that it does not depend on a path match agreeing with the routes': a request
 * from elsewhere never reaches the router, whatever its path.
 */
export function mailDevRoutes(db: Db): Middleware {
  const routes = outboxRouter(db).routes() as Middleware;
  return (ctx, next) => (isLocalRequest(ctx.req) ? routes(ctx, next) : next());
}

function outboxRouter(db: Db) {
  const router = createRouter({ prefix: '/dev/mail' });

  router.get('/', async (ctx) => {
    const messages = await listOutboxMessages(db);
    const rows = messages.map(
      (message) =>
        `<tr><td style="padding:6px;white-space:nowrap;">${escapeHtml(message.createdAt.toISOString())}</td>` +
        `<td style="padding:6px;">${escapeHtml(message.to)}</td>` +
        `<td style="padding:6px;"><a href="/dev/mail/${message.id}">${escapeHtml(message.subject)}</a></td></tr>`,
    );
    ctx.set('Content-Security-Policy', csp);
    ctx.type = 'text/html';
    ctx.body = page(
      'Outbox',
      `<h1>Outbox</h1><p>E-mails Signet would have sent, newest first (no SendGrid or SMTP is configured).</p>` +
        (rows.length
          ? `<div style="overflow-x:auto;"><table style="border-collapse:collapse;width:100%;"><thead><tr><th align="left">sent</th><th align="left">to</th><th align="left">subject</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`
          : '<p>No e-mails yet.</p>'),
    );
  });

  router.get('/:id', async (ctx) => {
    const id = outboxId(ctx.params.id);
    const message = id === undefined ? undefined : await getOutboxMessage(db, id);
    if (!message) return;
    const attachments = message.attachments.map(
      (attachment, index) =>
        `<li><a href="/dev/mail/${message.id}/attachments/${index}">${escapeHtml(attachment.filename)}</a> (${escapeHtml(attachment.contentType)}, ${attachment.size} bytes)</li>`,
    );
    ctx.set('Content-Security-Policy', csp);
    ctx.type = 'text/html';
    ctx.body = page(
      message.subject,
      `<p><a href="/dev/mail">← Outbox</a></p>
<h1 style="font-size:20px;">${escapeHtml(message.subject)}</h1>
<p style="overflow-wrap:anywhere;">From: ${escapeHtml(message.from)}<br>To: ${escapeHtml(message.to)}<br>Sent: ${escapeHtml(message.createdAt.toISOString())}<br>Idempotency key: <code>${escapeHtml(message.idempotencyKey)}</code></p>
${attachments.length ? `<ul>${attachments.join('')}</ul>` : ''}
<h2 style="font-size:16px;">HTML</h2>
<iframe title="HTML body" sandbox="allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation" srcdoc="${escapeHtml(message.html)}" style="box-sizing:border-box;width:100%;height:640px;border:1px solid #d4d4d8;"></iframe>
<h2 style="font-size:16px;">Text</h2>
<pre style="white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f5;padding:12px;">${linkify(message.text)}</pre>`,
    );
  });

  router.get('/:id/attachments/:index', async (ctx) => {
    const id = outboxId(ctx.params.id);
    const index = outboxId(ctx.params.index);
    if (id === undefined || index === undefined) return;
    const attachment = await getOutboxAttachment(db, id, index);
    if (!attachment) return;
    ctx.type = attachment.contentType;
    ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(attachment.filename)}`);
    ctx.body = attachment.content;
  });

  return router;
}
