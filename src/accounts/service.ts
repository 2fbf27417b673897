import type { Db } from '../db';
import { violatesUnique } from '../db/errors';
import { conflict, notFound } from '../errors';
import { newId } from '../ids';
import { authChanged } from './authChanges';
import { monthWindow, type Plan } from '../domain/plans';

export interface Account {
  id: string;
  email: string;
  name: string | null;
  plan: Plan;
  /** Whether the address is proven (a link, a reset) or vouched for (the operator): until then the account only reads. */
  emailVerified: boolean;
  createdAt: Date;
}

interface AccountRow {
  id: string;
  email: string;
  name: string | null;
  plan: Plan;
  email_verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  email: row.email,
  name: row.name,
  plan: row.plan,
  emailVerified: row.email_verified_at !== null,
  createdAt: row.created_at,
});

export const accountEmailTaken = () => conflict('An account with this e-mail already exists. Log in, or set a password with “Forgot your password?”.');

/**
 * A new account. Its address is taken by no other account in any letter case (409 otherwise). The
 * operator vouches for the addresses it gives (the CLI, tests); a console sign-up passes
 * emailVerified: false until its owner follows the link e-mailed to it.
 */
export async function createAccount(db: Db, input: { email: string; plan: Plan; name?: string; emailVerified?: boolean }): Promise<Account> {
  try {
    const [row] = await db<AccountRow>('accounts')
      .insert({
        id: newId('account'),
        email: input.email.trim(),
        plan: input.plan,
        name: input.name ?? null,
        email_verified_at: input.emailVerified === false ? null : (db.fn.now() as unknown as Date),
      })
      .returning('*');
    return toAccount(row);
  } catch (error) {
    if (violatesUnique(error, 'accounts_email_lower_unique')) throw accountEmailTaken();
    throw error;
  }
}

/** The account with this address, in any letter case. */
export async function findAccountByEmail(db: Db, email: string): Promise<Account | undefined> {
  const row = await db<AccountRow>('accounts').whereRaw('lower(email) = lower(?)', [email.trim()]).first();
  return row && toAccount(row);
}

/** Every account, oldest first: the operator's `signet account list`. */
export async function listAccounts(db: Db): Promise<Account[]> {
  const rows = await db<AccountRow>('accounts').orderBy('created_at').orderBy('id');
  return rows.map(toAccount);
}

/** Marks the address proven; true when it was not before. */
export async function markEmailVerified(db: Db, id: string): Promise<boolean> {
  const changed = await db('accounts').where({ id }).whereNull('email_verified_at').update({ email_verified_at: db.fn.now(), updated_at: db.fn.now() });
  if (changed) authChanged();
  return changed > 0;
}

export async function getAccount(db: Db, id: string): Promise<Account> {
  const row = await db<AccountRow>('accounts').where({ id }).first();
  if (!row) throw notFound('Account');
  return toAccount(row);
}

export async function setAccountPlan(db: Db, id: string, plan: Plan): Promise<Account> {
  const [row] = await db<AccountRow>('accounts').where({ id }).update({ plan, updated_at: db.fn.now() }).returning('*');
  if (!row) throw notFound('Account');
  authChanged();
  return toAccount(row);
}

/** Documents created this calendar month (UTC), deleted ones included: deleting does not give quota back. */
export async function countDocumentsThisMonth(db: Db, accountId: string, now = new Date()): Promise<number> {
  const { start } = monthWindow(now);
  const [{ count }] = await db('documents').where('account_id', accountId).andWhere('created_at', '>=', start).count({ count: '*' });
  return Number(count);
}
