// What the signing-request activities hand to a transport. Activities are retried, so every message
// carries an idempotency key: the outbox stores one row per key, SMTP derives its Message-ID from it,
// and SendGrid receives it as a custom arg and header so a repeated send can be traced.
export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface MailMessage {
  idempotencyKey: string;
  to: string;
  toName?: string;
  from: string;
  fromName?: string;
  subject: string;
  text: string;
  html: string;
  attachments?: MailAttachment[];
}

export interface MailTransport {
  name: string;
  send(message: MailMessage): Promise<{ messageId: string }>;
}

/** `Name <address>`, or the bare address; the name is quoted so commas and brackets in it stay harmless. */
export function formatAddress(address: string, name?: string) {
  return name ? `"${name.replace(/["\\\r\n]/g, ' ')}" <${address}>` : address;
}
