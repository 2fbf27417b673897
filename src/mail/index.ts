import type { Config } from '../config';
import type { Db } from '../db';
import type { MailTransport } from './message';
import { createOutboxTransport } from './outbox';
import { createSendgridTransport } from './sendgrid';
import { createSmtpTransport } from './smtp';

export type { MailAttachment, MailMessage, MailTransport } from './message';

type MailConfig = Partial<Pick<Config, 'SENDGRID_API_KEY' | 'SENDGRID_API_URL' | 'SMTP_URL'>>;

/** SendGrid when it has a key, else SMTP when it has a URL, else the database outbox (read at /dev/mail). */
export function createMailTransport(config: MailConfig, db: Db): MailTransport {
  if (config.SENDGRID_API_KEY) return createSendgridTransport(config.SENDGRID_API_KEY, config.SENDGRID_API_URL);
  if (config.SMTP_URL) return createSmtpTransport(config.SMTP_URL);
  return createOutboxTransport(db);
}

/** MAIL_FROM (`Name <address>` or a bare address) as the from fields of a MailMessage. */
export function mailSender(config: Pick<Config, 'MAIL_FROM'>): { from: string; fromName?: string } {
  const match = /^\s*"?([^"<]*?)"?\s*<([^>]+)>\s*$/.exec(config.MAIL_FROM);
  if (!match) return { from: config.MAIL_FROM.trim() };
  return { from: match[2].trim(), fromName: match[1].trim() || undefined };
}
