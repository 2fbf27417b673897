import type { Account } from '../accounts/service';
import { withArticle } from '../domain/words';
import type { Config } from '../config';
import type { Db } from '../db';
import { createMailTransport, mailSender } from '../mail';
import { escapeHtml as e } from '../mail/templates';
import { hashLinkToken } from './linkTokens';
import { INVITATION_DAYS, type Invitation } from './service';

/** Sends an invitation's link to its address through the configured mail transport. */
export function invitationMailer(db: Db, config: Config) {
  const mail = createMailTransport(config, db);
  return async (account: Account, invitation: Invitation, token: string) => {
    const link = `${config.publicUrl}/app/invitations/${token}`;
    const idempotencyKey = `invitation:${hashLinkToken(token)}`;
    await mail.send({ idempotencyKey, to: invitation.email, ...mailSender(config), ...invitationMail(account, invitation, link) });
  };
}

export function invitationMail(account: Account, invitation: Invitation, link: string) {
  const accountName = account.name ?? account.email;
  const who = invitation.invitedBy ?? accountName;
  const lead = `${who} invited you to join ${accountName} on Signet as ${withArticle(invitation.role)}.`;
  const expiry = `The link works once, within ${INVITATION_DAYS} days. If you did not expect it, ignore this e-mail.`;
  const subject = `Join ${accountName} on Signet`;
  return {
    subject,
    text: `${lead}\n\nOpen this link to accept:\n${link}\n\n${expiry}\n`,
    html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${e(subject)}</title></head>
<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1b1e24;">
<h1 style="font-size:20px;">${e(subject)}</h1>
<p>${e(lead)}</p>
<p><a href="${e(link)}" style="display:inline-block;padding:12px 20px;background:#2f54eb;color:#ffffff;text-decoration:none;border-radius:6px;">Accept the invitation</a></p>
<p style="font-size:13px;word-break:break-all;">Or open this link: <a href="${e(link)}">${e(link)}</a></p>
<p style="font-size:13px;color:#5c6370;">${e(expiry)}</p>
</body></html>`,
  };
}
