import type { Db } from '../db';
import { formatAddress, type MailTransport } from './message';
import { findOutboxAttachments, findOutboxRow, insertOutboxMessage, listOutboxRows } from './store';

interface StoredAttachment {
  filename: string;
  contentType: string;
  size: number;
  /** base64 */
  content: string;
}

export interface OutboxSummary {
  id: number;
  to: string;
  subject: string;
  createdAt: Date;
}

export interface OutboxMessage extends OutboxSummary {
  idempotencyKey: string;
  from: string;
  text: string;
  html: string;
  attachments: { filename: string; contentType: string; size: number }[];
}

/** Development and tests: messages are kept in the mail_outbox table, one row per idempotency key. */
export function createOutboxTransport(db: Db): MailTransport {
  return {
    name: 'outbox',
    async send(message) {
      const attachments: StoredAttachment[] = (message.attachments ?? []).map(({ filename, contentType, content }) => ({
        filename,
        contentType,
        size: content.length,
        content: content.toString('base64'),
      }));
      const id = await insertOutboxMessage(db, {
        idempotency_key: message.idempotencyKey,
        to_address: formatAddress(message.to, message.toName),
        from_address: formatAddress(message.from, message.fromName),
        subject: message.subject,
        text: message.text,
        html: message.html,
        attachments,
      });
      return { messageId: `outbox-${id}` };
    },
  };
}

export async function listOutboxMessages(db: Db, limit = 200): Promise<OutboxSummary[]> {
  const rows = await listOutboxRows(db, limit);
  return rows.map((row) => ({ id: Number(row.id), to: row.to_address, subject: row.subject, createdAt: row.created_at }));
}

export async function getOutboxMessage(db: Db, id: number): Promise<OutboxMessage | undefined> {
  const row = await findOutboxRow(db, id);
  if (!row) return undefined;
  return {
    id: Number(row.id),
    idempotencyKey: row.idempotency_key,
    to: row.to_address,
    from: row.from_address,
    subject: row.subject,
    text: row.text,
    html: row.html,
    createdAt: row.created_at,
    attachments: (row.attachments as StoredAttachment[]).map(({ filename, contentType, size }) => ({ filename, contentType, size })),
  };
}

export async function getOutboxAttachment(db: Db, id: number, index: number) {
  const attachment = ((await findOutboxAttachments(db, id)) as StoredAttachment[] | undefined)?.[index];
  if (!attachment) return undefined;
  return { filename: attachment.filename, contentType: attachment.contentType, content: Buffer.from(attachment.content, 'base64') };
}
