import { createHash } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { MailMessage, MailTransport } from './message';

/** The same idempotency key always gives the same Message-ID, so a retried send is recognisable downstream. */
export function messageIdFor(message: Pick<MailMessage, 'idempotencyKey' | 'from'>) {
  const digest = createHash('sha256').update(message.idempotencyKey).digest('hex').slice(0, 32);
  const domain = message.from.split('@')[1] ?? 'signet.local';
  return `<${digest}@${domain}>`;
}

export function createSmtpTransport(smtpUrl: string): MailTransport {
  const transporter = nodemailer.createTransport(smtpUrl);
  return {
    name: 'smtp',
    async send(message) {
      const messageId = messageIdFor(message);
      await transporter.sendMail({
        messageId,
        from: { name: message.fromName ?? '', address: message.from },
        to: { name: message.toName ?? '', address: message.to },
        subject: message.subject,
        text: message.text,
        html: message.html,
        headers: { 'X-Signet-Idempotency-Key': message.idempotencyKey },
        attachments: message.attachments?.map(({ filename, contentType, content }) => ({ filename, contentType, content })),
      });
      return { messageId };
    },
  };
}
