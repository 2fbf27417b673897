import type { Context } from 'koa';
import type { Config } from '../config';
import type { Db } from '../db';
import { createMailTransport, mailSender } from '../mail';
import { html } from './html';
import { csrfField, layout, problemList, type Frame } from './pages';
import { hashLinkToken, LinkTokenParams } from '../members/linkTokens';
import { MAX_PASSWORD_LENGTH } from '../members/passwords';
import { createEmailVerification, EMAIL_VERIFICATION_HOURS, findEmailVerification, verifyEmail, type User } from '../members/people';
import type { ConsoleKit } from './kit';
import { countAttempt, windowLimiter } from './limits';

// A console sign-up proves its address by a link e-mailed to it: single use, for a day, only its SHA-256
// stored. The link confirms only for the person who signed up (their session, or their password on the
// link's page), so a stranger's inbox cannot confirm an account that someone else made with its address.
// Until then the account only reads (see requireLogin in routes.ts and the REST API's authenticate).

const RESENDS_PER_HOUR = 5;

/** Sends a verification link for this person's address through the configured mail transport. */
export function verificationMailer(db: Db, config: Config) {
  const mail = createMailTransport(config, db);
  return async (user: User, token: string) => {
    const link = `${config.publicUrl}/app/email/verify/${token}`;
    await mail.send({ idempotencyKey: `email-verification:${hashLinkToken(token)}`, to: user.email, ...mailSender(config), ...verificationMail(link) });
  };
}

export function emailVerificationPages({ router, deps, frame, page, form, sessions, logins, requireLoginOnly, user }: ConsoleKit) {
  const { db, config } = deps;
  const send = verificationMailer(db, config);
  const resendsByUser = windowLimiter(db, 'console-verification-user', RESENDS_PER_HOUR, 3600);
  const tokenOf = (ctx: Context) => LinkTokenParams.safeParse(ctx.params).data?.token;
  const linkFor = async (ctx: Context) => {
    const token = tokenOf(ctx);
    const owner = token ? await findEmailVerification(db, token) : null;
    return token && owner ? { token, owner } : undefined;
  };

  const invalidLink = (ctx: Context) =>
    page(
      ctx,
      layout(
        frame(ctx),
        'Link not valid',
        html`<h1>This link does not work</h1>
    <p class="alert" role="alert">The link is unknown, was already used, or is more than ${EMAIL_VERIFICATION_HOURS} hours old.</p>
    <p>Log in: the console sends you a new link.</p><p><a href="/app">Go to the console</a></p>`,
      ),
      400,
    );
  // The session's account was read before the link confirmed it: shown as confirmed, without the banner that asks for it.
  const confirmed = (ctx: Context, email: string) => {
    const before = frame(ctx);
    page(
      ctx,
      layout(
        { ...before, account: before.account && { ...before.account, emailVerified: true } },
        'Address confirmed',
        html`<h1>Address confirmed</h1>
    <p class="notice" role="status">${email} is confirmed: your account can now upload and send documents.</p>
    <p><a href="/app">Go to the dashboard</a></p>`,
      ),
    );
  };

  // Opened by the person who signed up, in the browser they are logged in with: confirmed at once. Anyone
  // else (a link scanner, a stranger) sees a log-in form and changes nothing.
  router.get('/email/verify/:token', async (ctx) => {
    const link = await linkFor(ctx);
    if (!link) return invalidLink(ctx);
    if (user(ctx)?.id !== link.owner.id) return page(ctx, confirmPage(frame(ctx), ctx.path, link.owner.email));
    if (!(await verifyEmail(db, link.token, link.owner.id))) return invalidLink(ctx);
    confirmed(ctx, link.owner.email);
  });
  router.post('/email/verify/:token', async (ctx) => {
    const link = await linkFor(ctx);
    if (!link) return invalidLink(ctx);
    const password = form(ctx).password;
    const person = typeof password === 'string' && password.length <= MAX_PASSWORD_LENGTH ? await logins.logIn(ctx, link.owner.email, password) : null;
    if (!person) return page(ctx, confirmPage(frame(ctx), ctx.path, link.owner.email, ['The password is wrong.']), 401);
    await sessions.start(ctx, person.id);
    if (!(await verifyEmail(db, link.token, person.id))) return invalidLink(ctx);
    confirmed(ctx, person.email);
  });

  router.post('/email/verification', requireLoginOnly, async (ctx) => {
    const person = user(ctx)!;
    if (frame(ctx).account?.emailVerified) return page(ctx, sentPage(frame(ctx), `${person.email} is already confirmed.`));
    await countAttempt('Too many verification e-mails.', [resendsByUser, person.id]);
    await send(person, await createEmailVerification(db, person));
    page(ctx, sentPage(frame(ctx), `We sent a new link to ${person.email}. It works once, within ${EMAIL_VERIFICATION_HOURS} hours.`));
  });
}

function confirmPage(frame: Frame, action: string, email: string, problems: string[] = []) {
  return layout(
    frame,
    'Confirm your address',
    html`<h1>Confirm your address</h1>
    ${problemList(problems)}
    <p>Log in as the person who signed up with ${email} to confirm it.</p>
    <form method="post" action="${action}" class="card stack">
      ${csrfField(frame.csrf)}
      <input type="hidden" name="username" value="${email}" autocomplete="username">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" required maxlength="${MAX_PASSWORD_LENGTH}" autocomplete="current-password">
      <button type="submit" class="primary">Log in and confirm</button>
    </form>
    <p>Did not sign up? Ignore the link: nothing happens without the password.</p>`,
  );
}

function sentPage(frame: Frame, message: string) {
  return layout(
    frame,
    'Verification link',
    html`<h1>Confirm your address</h1><p class="notice" role="status">${message}</p><p><a href="/app">Back to the dashboard</a></p>`,
  );
}

export function verificationMail(link: string) {
  const lead = 'Someone, hopefully you, signed up for Signet with this e-mail address.';
  const expiry = `The link works once, within ${EMAIL_VERIFICATION_HOURS} hours. If you did not sign up, ignore this e-mail: without the password, nobody can confirm the address, and the account can send nothing.`;
  return {
    subject: 'Confirm your e-mail address for Signet',
    text: `${lead}\n\nOpen this link to confirm it:\n${link}\n\n${expiry}\n`,
    html: html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Confirm your e-mail address for Signet</title></head>
<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1b1e24;">
<h1 style="font-size:20px;">Confirm your e-mail address</h1>
<p>${lead}</p>
<p><a href="${link}" style="display:inline-block;padding:12px 20px;background:#2f54eb;color:#ffffff;text-decoration:none;border-radius:6px;">Confirm the address</a></p>
<p style="font-size:13px;word-break:break-all;">Or open this link: <a href="${link}">${link}</a></p>
<p style="font-size:13px;color:#5c6370;">${expiry}</p>
</body></html>`.text,
  };
}
