import type { Db } from '../db';
import { violatesUnique } from '../db/errors';
import { conflict, notFound } from '../errors';
import { newId } from '../ids';
import { authChanged } from './authChanges';
import type { Plan } from '../domain/plans';
import { findAccountRow, findAccountRowByEmail, insertAccount, listAccountRows, setEmailVerified, updateAccountPlan, type AccountRow } from './store';

export interface Account {
  id: string;
  email: string;
  name: string | null;
  plan: Plan;
  /** Whether the address is proven (a link, a reset) or vouched for (the operator): until then the account only reads. */
  emailVerified: boolean;
  createdAt: Date;
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
    const row = await insertAccount(db, {
      id: newId('account'),
      email: input.email.trim(),
      plan: input.plan,
      name: input.name ?? null,
      emailVerified: input.emailVerified !== false,
    });
    return toAccount(row);
  } catch (error) {
    if (violatesUnique(error, 'accounts_email_lower_unique')) throw accountEmailTaken();
    throw error;
  }
}

/** The account with this address, in any letter case. */
export async function findAccountByEmail(db: Db, email: string): Promise<Account | undefined> {
  const row = await findAccountRowByEmail(db, email.trim());
  return row && toAccount(row);
}

/** Every account, oldest first: the operator's `signet account list`. */
export async function listAccounts(db: Db): Promise<Account[]> {
  return (await listAccountRows(db)).map(toAccount);
}

/** Marks the address proven; true when it was not before. */
export async function markEmailVerified(db: Db, id: string): Promise<boolean> {
  const changed = await setEmailVerified(db, id);
  if (changed) authChanged();
  return changed;
}

export async function getAccount(db: Db, id: string): Promise<Account> {
  const row = await findAccountRow(db, id);
  if (!row) throw notFound('Account');
  return toAccount(row);
}

export async function setAccountPlan(db: Db, id: string, plan: Plan): Promise<Account> {
  const row = await updateAccountPlan(db, id, plan);
  if (!row) throw notFound('Account');
  authChanged();
  return toAccount(row);
}
