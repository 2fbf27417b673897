import type { Db } from '../db';
import type { Plan } from '../domain/plans';
import type { LogoType } from './logo';

// The SQL of the accounts and account_brands tables; service.ts and branding.ts map the rows.

export interface AccountRow {
  id: string;
  email: string;
  name: string | null;
  plan: Plan;
  email_verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Throws the unique violation accounts_email_lower_unique when the address is taken in any letter case. */
export async function insertAccount(db: Db, account: { id: string; email: string; plan: Plan; name: string | null; emailVerified: boolean }) {
  const [row] = await db<AccountRow>('accounts')
    .insert({
      id: account.id,
      email: account.email,
      plan: account.plan,
      name: account.name,
      email_verified_at: account.emailVerified ? (db.fn.now() as unknown as Date) : null,
    })
    .returning('*');
  return row;
}

export const findAccountRow = (db: Db, id: string) => db<AccountRow>('accounts').where({ id }).first();

export const findAccountRowByEmail = (db: Db, email: string) => db<AccountRow>('accounts').whereRaw('lower(email) = lower(?)', [email]).first();

/** Oldest first. */
export const listAccountRows = (db: Db) => db<AccountRow>('accounts').orderBy('created_at').orderBy('id');

/** True when the address was not proven before. */
export async function setEmailVerified(db: Db, id: string): Promise<boolean> {
  const changed = await db('accounts').where({ id }).whereNull('email_verified_at').update({ email_verified_at: db.fn.now(), updated_at: db.fn.now() });
  return changed > 0;
}

export async function updateAccountPlan(db: Db, id: string, plan: Plan): Promise<AccountRow | undefined> {
  const [row] = await db<AccountRow>('accounts').where({ id }).update({ plan, updated_at: db.fn.now() }).returning('*');
  return row;
}

/**
 * Serialises one account's quota and allowance checks: concurrent creations wait here for each other.
 * FOR NO KEY UPDATE, not FOR UPDATE: a row inserted with a foreign key to the account (a signing request,
 * a document) holds a KEY SHARE lock on it, which FOR UPDATE waits for; two transactions that each had
 * inserted one and then took FOR UPDATE deadlocked (40P01, a 500). FOR NO KEY UPDATE still excludes
 * itself, so the checks stay one at a time.
 */
export async function lockAccount(trx: Db, accountId: string) {
  await trx('accounts').where({ id: accountId }).forNoKeyUpdate().first('id');
}

export interface BrandRow {
  account_id: string;
  name: string | null;
  accent_color: string | null;
  email_footer: string | null;
  support_email: string | null;
  logo_type: LogoType | null;
  logo_size: number | null;
  logo_sha256: string | null;
  updated_at: Date;
}

// Never the logo's bytes: they are read only to serve them.
const brandColumns = ['account_id', 'name', 'accent_color', 'email_footer', 'support_email', 'logo_type', 'logo_sha256', 'updated_at'];

export const findBrandRow = (db: Db, accountId: string): Promise<BrandRow | undefined> =>
  db<BrandRow>('account_brands')
    .where({ account_id: accountId })
    .first(...brandColumns, db.raw('octet_length(logo) as logo_size'));

/** Sets the columns given, making the account's brand row when it has none. */
export async function upsertBrand(db: Db, accountId: string, changes: Record<string, unknown>) {
  await db('account_brands')
    .insert({ account_id: accountId, ...changes })
    .onConflict('account_id')
    .merge({ ...changes, updated_at: db.fn.now() });
}

export async function findLogoBySha256(db: Db, sha256: string): Promise<{ type: LogoType; content: Buffer } | undefined> {
  const row = await db('account_brands').where({ logo_sha256: sha256 }).first('logo_type', 'logo');
  return row ? { type: row.logo_type, content: row.logo } : undefined;
}
