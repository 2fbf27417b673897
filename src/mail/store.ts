import type { Db } from '../db';

// The SQL of the account_mail_log and mail_outbox tables.

/** The database's clock: the transaction's start, when in one. */
export async function databaseNow(trx: Db): Promise<Date> {
  return (await trx.raw('select now() as now')).rows[0].now;
}

/** Forgets the account's e-mails counted at `before` or earlier. */
export async function forgetMailBefore(trx: Db, accountId: string, before: Date) {
  await trx('account_mail_log').where({ account_id: accountId }).where('counted_at', '<=', before).delete();
}

const mailSince = (db: Db, accountId: string, since: Date) => db('account_mail_log').where({ account_id: accountId }).where('counted_at', '>', since);

export async function countMailSince(db: Db, accountId: string, since: Date): Promise<number> {
  return Number((await mailSince(db, accountId, since).count({ count: '*' }).first())?.count ?? 0);
}

/** When the `nth` (1 first) e-mail counted after `since` was counted, oldest first. */
export async function nthMailSince(db: Db, accountId: string, since: Date, nth: number): Promise<Date | undefined> {
  const row = await mailSince(db, accountId, since)
    .orderBy('counted_at')
    .offset(nth - 1)
    .first('counted_at');
  return row?.counted_at;
}

/** Counts each e-mail once by its idempotency key, at `at` (the database's now when not given). */
export async function countMail(db: Db, accountId: string, keys: string[], at?: Date) {
  await db('account_mail_log')
    .insert(keys.map((key) => ({ idempotency_key: key, account_id: accountId, ...(at ? { counted_at: at } : {}) })))
    .onConflict('idempotency_key')
    .ignore();
}

interface OutboxRow {
  id: number;
  idempotency_key: string;
  to_address: string;
  from_address: string;
  subject: string;
  text: string;
  html: string;
  attachments: unknown;
  created_at: Date;
}

/** Keeps the message once per idempotency key; the id of the one kept. */
export async function insertOutboxMessage(db: Db, message: Omit<OutboxRow, 'id' | 'created_at'>): Promise<number> {
  await db('mail_outbox')
    .insert({ ...message, attachments: JSON.stringify(message.attachments) })
    .onConflict('idempotency_key')
    .ignore();
  const row = await db('mail_outbox').where({ idempotency_key: message.idempotency_key }).first('id');
  return row.id;
}

/** Newest first. */
export const listOutboxRows = (db: Db, limit: number): Promise<Pick<OutboxRow, 'id' | 'to_address' | 'subject' | 'created_at'>[]> =>
  db('mail_outbox').select('id', 'to_address', 'subject', 'created_at').orderBy('id', 'desc').limit(limit);

export const findOutboxRow = (db: Db, id: number): Promise<OutboxRow | undefined> => db('mail_outbox').where({ id }).first();

export async function findOutboxAttachments(db: Db, id: number): Promise<unknown> {
  return (await db('mail_outbox').where({ id }).first('attachments'))?.attachments;
}
