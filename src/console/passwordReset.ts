import type { Context } from 'koa';
import { parseInput, z } from '../api/validation';
import { AppError } from '../errors';
import { createMailTransport, mailSender } from '../mail';
import { html } from './html';
import { csrfField, layout, problemList, type Frame } from './pages';
import { hashLinkToken, LinkTokenParams } from '../members/linkTokens';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, NewPasswordSchema } from '../members/passwords';
import { createPasswordReset, findPasswordReset, PASSWORD_RESET_MINUTES, resetPassword } from '../members/people';
import type { ConsoleKit } from './kit';
import { clientKey, countAttempt, emailKey, windowLimiter } from './limits';

// "Forgot your password?": a single-use link by e-mail, valid for an hour, for the owner of the account
// with that address. It is also how the owner of an account created with the CLI sets a first password,
// and how the owner of an address takes back an account someone else signed up with but never proved
// (see createPasswordReset and resetPassword).

const ForgotSchema = z.object({ email: z.email().max(320) });

const HOUR_SECONDS = 3600;
const RESETS_PER_EMAIL = 5;
const RESETS_PER_ADDRESS = 30;
const SENT = 'If an account exists for this e-mail, we sent it a link to set a new password. It works once, within an hour.';

export function passwordResetPages({ router, deps, frame, page, form, seeOther, sessions, logins }: ConsoleKit) {
  const { db, config } = deps;
  const mail = createMailTransport(config, db);
  const requestsByEmail = windowLimiter(db, 'console-reset-email', RESETS_PER_EMAIL, HOUR_SECONDS);
  const requestsByAddress = windowLimiter(db, 'console-reset-address', RESETS_PER_ADDRESS, HOUR_SECONDS);

  /** Counts this request; past either limit it is refused, whether or not the e-mail is known. */
  const countRequest = (ctx: Context, email: string) =>
    countAttempt('Too many requests for a reset link.', [requestsByAddress, clientKey(ctx.ip)], [requestsByEmail, emailKey(email)]);

  router.get('/password/forgot', (ctx) => page(ctx, forgotPage(frame(ctx))));
  router.post('/password/forgot', async (ctx) => {
    const values = form(ctx);
    let email: string;
    try {
      ({ email } = parseInput(ForgotSchema, { email: values.email?.trim() }));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return page(ctx, forgotPage(frame(ctx), values, error.details ?? [error.message]), error.status);
    }
    await countRequest(ctx, email);
    // Known or not, the answer is the same (sign-up already tells whether an e-mail has an account, so the
    // time the e-mail takes to send is no secret worth hiding).
    const reset = await createPasswordReset(db, email);
    if (reset) {
      const link = `${config.publicUrl}/app/password/reset/${reset.token}`;
      await mail.send({
        idempotencyKey: `password-reset:${hashLinkToken(reset.token)}`,
        to: reset.user.email,
        ...mailSender(config),
        ...passwordResetMail(link),
      });
    }
    page(ctx, forgotPage(frame(ctx), {}, [], SENT));
  });

  const invalidLink = (ctx: Context) =>
    page(
      ctx,
      layout(
        frame(ctx),
        'Link not valid',
        html`<h1>This link does not work</h1>
    <p class="alert" role="alert">The link is unknown, was already used, or is more than an hour old.</p>
    <p><a href="/app/password/forgot">Ask for a new link</a> or <a href="/app/login">log in</a>.</p>`,
      ),
      400,
    );

  router.get('/password/reset/:token', async (ctx) => {
    const params = LinkTokenParams.safeParse(ctx.params);
    const user = params.success ? await findPasswordReset(db, params.data.token) : null;
    if (!user) return invalidLink(ctx);
    page(ctx, resetPage(frame(ctx), ctx.path, user.email));
  });
  router.post('/password/reset/:token', async (ctx) => {
    const params = LinkTokenParams.safeParse(ctx.params);
    const user = params.success ? await findPasswordReset(db, params.data.token) : null;
    if (!params.success || !user) return invalidLink(ctx);
    let password: string;
    try {
      ({ password } = parseInput(NewPasswordSchema, { password: form(ctx).password }));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return page(ctx, resetPage(frame(ctx), ctx.path, user.email, error.details ?? [error.message]), error.status);
    }
    const changed = await resetPassword(db, params.data.token, password);
    if (!changed) return invalidLink(ctx);
    await logins.clear(changed); // the inbox is proven: whoever locked this e-mail's logins, the owner is back
    await sessions.start(ctx, changed.id);
    await logins.trustBrowser(ctx, changed);
    seeOther(ctx, '/app');
  });
}

function passwordResetMail(link: string) {
  const lead = 'Someone, hopefully you, asked to set a new password for your Signet console.';
  const expiry = `The link works once, within ${PASSWORD_RESET_MINUTES} minutes. If you did not ask, ignore this e-mail: your password stays as it is.`;
  return {
    subject: 'Set your Signet password',
    text: `${lead}\n\nOpen this link to choose a new password:\n${link}\n\n${expiry}\n`,
    html: html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Set your Signet password</title></head>
<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1b1e24;">
<h1 style="font-size:20px;">Set your Signet password</h1>
<p>${lead}</p>
<p><a href="${link}" style="display:inline-block;padding:12px 20px;background:#2f54eb;color:#ffffff;text-decoration:none;border-radius:6px;">Choose a new password</a></p>
<p style="font-size:13px;word-break:break-all;">Or open this link: <a href="${link}">${link}</a></p>
<p style="font-size:13px;color:#5c6370;">${expiry}</p>
</body></html>`.text,
  };
}

function forgotPage(frame: Frame, values: { email?: string } = {}, problems: string[] = [], sent?: string) {
  return layout(
    frame,
    'Forgot your password?',
    html`<h1>Forgot your password?</h1>
    ${sent ? html`<p class="notice" role="status">${sent}</p>` : ''}
    ${problemList(problems)}
    <p>Enter the e-mail you log in with, or the owner e-mail of an account an operator created for you: we send a link to set a new password.</p>
    <form method="post" action="/app/password/forgot" class="card stack">
      ${csrfField(frame.csrf)}
      <label for="email">E-mail</label>
      <input id="email" name="email" type="email" required maxlength="320" autocomplete="email" value="${values.email ?? ''}">
      <button type="submit" class="primary">Send the link</button>
    </form>
    <p><a href="/app/login">Back to log in</a></p>`,
  );
}

function resetPage(frame: Frame, action: string, email: string, problems: string[] = []) {
  return layout(
    frame,
    'Set a new password',
    html`<h1>Set a new password</h1>
    ${problemList(problems)}
    <form method="post" action="${action}" class="card stack">
      ${csrfField(frame.csrf)}
      <input type="hidden" name="username" value="${email}" autocomplete="username">
      <label for="password">New password for ${email}</label>
      <input id="password" name="password" type="password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="${MAX_PASSWORD_LENGTH}" autocomplete="new-password" aria-describedby="password-hint">
      <p id="password-hint" class="hint">At least ${MIN_PASSWORD_LENGTH} characters. Every other session of this account is logged out.</p>
      <button type="submit" class="primary">Set the password</button>
    </form>`,
  );
}
