import { typeid } from 'typeid-js';
import type { Db } from '../db';
import { conflict } from '../errors';
import { createAccount, getAccount, type Account } from '../accounts/service';
import { decoyHash, hashPassword, verifyPassword } from './passwords';

// A person who signs in to the console. Each owns one account: sign-up creates both.
export interface User {
  id: string;
  accountId: string;
  email: string;
  createdAt: Date;
}

interface UserRow {
  id: string;
  account_id: string;
  email: string;
  password_hash: string | null;
  email_verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toUser = (row: UserRow): User => ({ id: row.id, accountId: row.account_id, email: row.email, createdAt: row.created_at });

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** A new free account, owned by a new person with this password. */
export async function signUp(db: Db, input: { email: string; password: string; accountName: string }): Promise<{ user: User; account: Account }> {
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (trx) => {
    if (await trx('users').where({ email }).first('id')) throw conflict('An account with this e-mail already exists. Log in instead.');
    const account = await createAccount(trx, { email, plan: 'free', name: input.accountName });
    const [row] = await trx<UserRow>('users')
      .insert({ id: typeid('user').toString(), account_id: account.id, email, password_hash: passwordHash })
      .onConflict('email')
      .ignore()
      .returning('*');
    if (!row) throw conflict('An account with this e-mail already exists. Log in instead.');
    return { user: toUser(row), account };
  });
}

/** The person with this e-mail and password, or null; the same scrypt work is done whether or not the e-mail is known. */
export async function findUserByPassword(db: Db, email: string, password: string): Promise<User | null> {
  const row = await db<UserRow>('users').where({ email: normalizeEmail(email) }).first();
  const matches = await verifyPassword(password, row?.password_hash ?? (await decoyHash()));
  return row && row.password_hash && matches ? toUser(row) : null;
}

export async function getUserAndAccount(db: Db, userId: string): Promise<{ user: User; account: Account } | null> {
  const row = await db<UserRow>('users').where({ id: userId }).first();
  if (!row) return null;
  return { user: toUser(row), account: await getAccount(db, row.account_id) };
}
