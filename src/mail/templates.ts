// The e-mails of the signing-request workflow. Names, titles, messages and reasons are user input:
// every value interpolated into HTML goes through the `html` tag, which escapes it. Those to signers
// carry the brand of the request's account (its name in place of Signet's, logo, colour, footer), and
// below it a line no brand can change: the sending account's verified address.

import { DEFAULT_BRAND_NAME, defaultBrand, mailBrandOf, type MailBrand } from '../domain/brand';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

class SafeHtml {
  constructor(readonly value: string) {}
}

export function escapeHtml(value: string) {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function renderValue(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(renderValue).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** A template literal whose interpolations are escaped, unless they are themselves `html` fragments. */
function html(strings: TemplateStringsArray, ...values: unknown[]) {
  let out = strings[0];
  values.forEach((value, index) => {
    out += renderValue(value) + strings[index + 1];
  });
  return new SafeHtml(out);
}

const fonts = "font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";

const signetMail: MailBrand = mailBrandOf(defaultBrand, '', null);

interface Layout {
  heading: string;
  paragraphs: SafeHtml[];
  quote?: string;
  button?: { label: string; url: string };
  footer?: string;
  /** Below the footer, in a row of its own: who sent the e-mail (senderIdentity). */
  identity?: string;
  brand?: MailBrand;
}

// The brand's logo (or name) above the heading: nothing for Signet's own e-mails.
const brandHeading = (brand: MailBrand) =>
  brand.logoUrl
    ? html`<p style="margin:0 0 16px;"><img src="${brand.logoUrl}" alt="${brand.name}" height="40" style="display:block;height:40px;max-width:200px;border:0;"></p>`
    : brand.name !== DEFAULT_BRAND_NAME
      ? html`<p style="margin:0 0 16px;font-size:18px;font-weight:700;">${brand.name}</p>`
      : '';

function layout({ heading, paragraphs, quote, button, footer, identity, brand = signetMail }: Layout): string {
  // At least 4.5:1 against white (checked when it was set): white text on it and it on white can be read.
  const accent = brand.accentColor ?? '#2563eb';
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${heading}</title></head>
<body style="margin:0;padding:0;background:#f4f4f5;${fonts};color:#18181b;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f4f5;"><tr><td align="center" style="padding:24px 12px;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px;">
<tr><td style="padding:28px 24px;font-size:16px;line-height:1.5;">
${brandHeading(brand)}<h1 style="margin:0 0 16px;font-size:20px;line-height:1.3;">${heading}</h1>
${paragraphs.map((paragraph) => html`<p style="margin:0 0 16px;">${paragraph}</p>`)}
${quote ? html`<blockquote style="margin:0 0 16px;padding:12px 16px;background:#f4f4f5;border-left:4px solid #a1a1aa;white-space:pre-wrap;">${quote}</blockquote>` : ''}
${
  button
    ? html`<p style="margin:24px 0;"><a href="${button.url}" style="display:inline-block;padding:12px 20px;background:${accent};color:#ffffff;text-decoration:none;border-radius:6px;font-weight:600;">${button.label}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#52525b;word-break:break-all;">Or open this link: <a href="${button.url}" style="color:${accent};">${button.url}</a></p>`
    : ''
}
</td></tr>
${footer ? html`<tr><td style="padding:16px 24px;border-top:1px solid #e4e4e7;font-size:13px;color:#71717a;">${footer}</td></tr>` : ''}
${identity ? html`<tr><td style="padding:12px 24px 16px;border-top:1px solid #e4e4e7;font-size:13px;color:#52525b;">${identity}</td></tr>` : ''}
</table>
</td></tr></table>
</body>
</html>`.value;
}

function text(lines: (string | undefined | false)[]) {
  return `${lines.filter((line): line is string => typeof line === 'string').join('\n')}\n`;
}

/** The closing words of an e-mail to signers: the brand's name, its own footer and support address. */
function signOff(brand: MailBrand, onBehalf = true) {
  const sentBy = onBehalf ? `Sent by ${brand.name} on behalf of the sender. If you did not expect this e-mail, you can ignore it.` : `Sent by ${brand.name}.`;
  return [sentBy, brand.emailFooter, brand.supportEmail ? `Questions? Write to ${brand.supportEmail}.` : null].filter(Boolean).join(' ');
}

/**
 * The last line of every e-mail to signers, after all the brand says: the account that sent it, by the
 * address Signet verified, so that a brand cannot pass for someone else.
 */
function senderIdentity(brand: MailBrand) {
  return brand.verifiedSender
    ? `Sent via ${DEFAULT_BRAND_NAME} on behalf of ${brand.verifiedSender}, the verified e-mail address of the sending account.`
    : `Sent via ${DEFAULT_BRAND_NAME} on behalf of an account whose e-mail address is not verified.`;
}

export function formatDate(date: Date) {
  return `${new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(date)} UTC`;
}

/** The sender as signers see it: the account name, with the e-mail so it can be checked. */
function senderLabel(sender: { name?: string | null; email: string }) {
  return sender.name ? `${sender.name} (${sender.email})` : sender.email;
}

export interface InvitationInput {
  signerName: string;
  sender: { name?: string | null; email: string };
  title: string;
  message?: string | null;
  signingUrl: string;
  expiresAt: Date;
  /** What the recipient is asked to do: sign (the default), approve, or read the documents. */
  part?: 'signer' | 'approver' | 'viewer';
  /** The brand of the request's account; Signet's by default. */
  brand?: MailBrand;
}

// How each kind of recipient is asked: the verb of the invitation, the reminder's noun, the button.
const asks = {
  signer: { verb: 'sign', waiting: 'your signature', button: 'Review and sign' },
  approver: { verb: 'approve', waiting: 'your approval', button: 'Review and approve' },
  viewer: { verb: 'read', waiting: 'you to read it', button: 'Read the documents' },
};

// Invitations and reminders differ only in their wording: one template serves both.
function signingLinkMail(input: InvitationInput, wording: { subject: string; heading: string; lead: string }): RenderedMail {
  const brand = input.brand ?? signetMail;
  const from = senderLabel(input.sender);
  const expires = formatDate(input.expiresAt);
  return {
    subject: wording.subject,
    text: text([
      `Hello ${input.signerName},`,
      '',
      `${from} ${wording.lead} "${input.title}".`,
      input.message ? `\nTheir message:\n${input.message}\n` : '',
      `${asks[input.part ?? 'signer'].button}: ${input.signingUrl}`,
      `The link expires on ${expires}.`,
      '',
      signOff(brand),
      senderIdentity(brand),
    ]),
    html: layout({
      heading: wording.heading,
      paragraphs: [html`Hello ${input.signerName},`, html`<strong>${from}</strong> ${wording.lead} <strong>${input.title}</strong>.`],
      quote: input.message ?? undefined,
      button: { label: asks[input.part ?? 'signer'].button, url: input.signingUrl },
      footer: `The link expires on ${expires}. ${signOff(brand)}`,
      identity: senderIdentity(brand),
      brand,
    }),
  };
}

export function invitationMail(input: InvitationInput): RenderedMail {
  const { verb } = asks[input.part ?? 'signer'];
  return signingLinkMail(input, {
    subject: `${input.sender.name || input.sender.email} asks you to ${verb}: ${input.title}`,
    heading: `Please ${verb}: ${input.title}`,
    lead: `asks you to ${verb}`,
  });
}

export type ReminderInput = InvitationInput;

export function reminderMail(input: ReminderInput): RenderedMail {
  const { waiting } = asks[input.part ?? 'signer'];
  return signingLinkMail(input, {
    subject: `Reminder: ${input.title} is waiting for ${waiting}`,
    heading: `Reminder: ${input.title}`,
    lead: `is still waiting for ${waiting} on`,
  });
}

export interface DeclinedInput {
  recipientName: string;
  title: string;
  decliner: { name: string; email: string };
  reason?: string | null;
  brand?: MailBrand;
}

export function declinedMail(input: DeclinedInput): RenderedMail {
  const brand = input.brand ?? signetMail;
  const who = `${input.decliner.name} (${input.decliner.email})`;
  return {
    subject: `${input.decliner.name} declined to sign: ${input.title}`,
    text: text([
      `Hello ${input.recipientName},`,
      '',
      `${who} declined to sign "${input.title}". The signing request is closed; no one else needs to sign it.`,
      input.reason ? `\nTheir reason:\n${input.reason}` : '',
      '',
      signOff(brand, false),
      senderIdentity(brand),
    ]),
    html: layout({
      heading: `Declined: ${input.title}`,
      paragraphs: [
        html`Hello ${input.recipientName},`,
        html`<strong>${who}</strong> declined to sign <strong>${input.title}</strong>. The signing request is closed; no one else needs to sign it.`,
        ...(input.reason ? [html`Their reason:`] : []),
      ],
      quote: input.reason ?? undefined,
      footer: signOff(brand, false),
      identity: senderIdentity(brand),
      brand,
    }),
  };
}

export interface CancelledInput {
  recipientName: string;
  title: string;
  sender: { name?: string | null; email: string };
  reason?: string | null;
  brand?: MailBrand;
}

export function cancelledMail(input: CancelledInput): RenderedMail {
  const brand = input.brand ?? signetMail;
  const from = senderLabel(input.sender);
  return {
    subject: `Cancelled: ${input.title}`,
    text: text([
      `Hello ${input.recipientName},`,
      '',
      `${from} cancelled the signing request for "${input.title}". You no longer need to sign it, and its link no longer works.`,
      input.reason ? `\nTheir reason:\n${input.reason}` : '',
      '',
      signOff(brand),
      senderIdentity(brand),
    ]),
    html: layout({
      heading: `Cancelled: ${input.title}`,
      paragraphs: [
        html`Hello ${input.recipientName},`,
        html`<strong>${from}</strong> cancelled the signing request for <strong>${input.title}</strong>. You no longer need to sign it, and its link no longer works.`,
        ...(input.reason ? [html`Their reason:`] : []),
      ],
      quote: input.reason ?? undefined,
      footer: signOff(brand),
      identity: senderIdentity(brand),
      brand,
    }),
  };
}

export interface CompletedInput {
  recipientName: string;
  title: string;
  /** When set, the sealed PDF is linked; otherwise the caller attaches it. */
  downloadUrl?: string;
  brand?: MailBrand;
}

export function completedMail(input: CompletedInput): RenderedMail {
  const brand = input.brand ?? signetMail;
  const where = input.downloadUrl
    ? 'Download the sealed PDF, with its audit trail, from the link below.'
    : 'The sealed PDF, with its audit trail, is attached.';
  return {
    subject: `Completed: ${input.title}`,
    text: text([
      `Hello ${input.recipientName},`,
      '',
      `Everyone has signed "${input.title}". ${where}`,
      input.downloadUrl ? `\nDownload: ${input.downloadUrl}` : '',
      '',
      signOff(brand, false),
      senderIdentity(brand),
    ]),
    html: layout({
      heading: `Completed: ${input.title}`,
      paragraphs: [html`Hello ${input.recipientName},`, html`Everyone has signed <strong>${input.title}</strong>. ${where}`],
      button: input.downloadUrl ? { label: 'Download the signed PDF', url: input.downloadUrl } : undefined,
      footer: signOff(brand, false),
      identity: senderIdentity(brand),
      brand,
    }),
  };
}

export interface WebhookDisabledInput {
  url: string;
  reason: 'gone' | 'failing';
  webhookId: string;
}

export function webhookDisabledMail(input: WebhookDisabledInput): RenderedMail {
  const why = input.reason === 'gone' ? 'answered 410 Gone, which tells Signet to stop sending' : 'has failed every delivery for 5 days';
  const lead = `Your webhook ${input.webhookId} (${input.url}) ${why}, so Signet disabled it.`;
  const next =
    'Fix the receiver, then enable the webhook again with PATCH /api/v1/webhooks/{id} {"enabled": true}; failed deliveries can be sent again from their delivery log.';
  return {
    subject: `Webhook disabled: ${input.url}`,
    text: text([lead, '', next, '', 'Sent by Signet.']),
    html: layout({ heading: 'Webhook disabled', paragraphs: [html`${lead}`, html`${next}`], footer: 'Sent by Signet.' }),
  };
}

export interface VerificationCodeInput {
  signerName: string;
  sender: { name?: string | null; email: string };
  code: string;
  expiresAt: Date;
  brand?: MailBrand;
}

/** The 6-digit code a signer gives on their page; the e-mail holds the only copy of it. */
export function verificationCodeMail(input: VerificationCodeInput): RenderedMail {
  const brand = input.brand ?? signetMail;
  const from = senderLabel(input.sender);
  const lead = `Your code to open the documents ${from} sent you for signing is ${input.code}.`;
  const expiry = `It works once, until ${formatDate(input.expiresAt)}. If you did not open a signing page, ignore this e-mail.`;
  return {
    subject: `Your signing code: ${input.code}`,
    text: text([`Hello ${input.signerName},`, '', lead, expiry, '', signOff(brand), senderIdentity(brand)]),
    html: layout({
      heading: 'Your signing code',
      paragraphs: [
        html`Hello ${input.signerName},`,
        html`Your code to open the documents <strong>${from}</strong> sent you for signing:`,
        html`<strong style="font-size:28px;letter-spacing:6px;">${input.code}</strong>`,
        html`${expiry}`,
      ],
      footer: signOff(brand),
      identity: senderIdentity(brand),
      brand,
    }),
  };
}

export interface VerificationLockedInput {
  ownerName: string;
  title: string;
  signer: { name: string; email: string };
  lockedUntil: Date;
  /** Wrong codes given so far, over the request's life. */
  wrongTries: number;
  /** The last lock: it holds until the sender reminds the signer. */
  untilSenderActs: boolean;
}

/** The sender's notice that a signer's wrong codes locked their page: someone else may hold the link. */
export function verificationLockedMail(input: VerificationLockedInput): RenderedMail {
  const who = `${input.signer.name} (${input.signer.email})`;
  const lead = input.untilSenderActs
    ? `${input.wrongTries} wrong codes in all were given on the signing page of ${who} for "${input.title}", so the page stays locked until you remind the signer (Remind, in the console or the API): each remind gives 5 more tries.`
    : `${input.wrongTries} wrong codes in all were given on the signing page of ${who} for "${input.title}", so the page is locked until ${formatDate(input.lockedUntil)}.`;
  const next =
    'If the signer did not mistype, someone else may hold their link: the audit trail of the request lists each try with its IP address and browser.';
  return {
    subject: `Signing page locked: ${input.title}`,
    text: text([`Hello ${input.ownerName},`, '', lead, next, '', 'Sent by Signet.']),
    html: layout({
      heading: 'A signing page was locked',
      paragraphs: [html`Hello ${input.ownerName},`, html`${lead}`, html`${next}`],
      footer: 'Sent by Signet.',
    }),
  };
}
