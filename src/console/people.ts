import crypto from 'node:crypto';
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

// --- Password resets: a link e-mailed to the person, valid once, for an hour ---

export const PASSWORD_RESET_MINUTES = 60;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * The person who may set a password for this e-mail. An account an operator created with the CLI has an
 * owner e-mail but no person yet: the first request for that e-mail makes its person, with no password,
 * so that whoever reads that inbox can set one (the same trust as any reset). An e-mail shared by several
 * such accounts is ambiguous and gets no link: the operator hands out API keys instead.
 */
async function findOrClaimUser(db: Db, email: string): Promise<UserRow | undefined> {
  const existing = await db<UserRow>('users').where({ email }).first();
  if (existing) return existing;
  const unowned = await db('accounts')
    .whereRaw('lower(email) = ?', [email])
    .whereNotExists(db('users').whereRaw('users.account_id = accounts.id'))
    .limit(2)
    .select('id');
  if (unowned.length !== 1) return undefined;
  await db('users').insert({ id: typeid('user').toString(), account_id: unowned[0].id, email, password_hash: null }).onConflict('email').ignore();
  return db<UserRow>('users').where({ email }).first();
}

/** A reset token for the person with this e-mail (only its SHA-256 is stored), or null when there is nobody to reset. */
export async function createPasswordReset(db: Db, email: string): Promise<{ user: User; token: string } | null> {
  const row = await findOrClaimUser(db, normalizeEmail(email));
  if (!row) return null;
  const token = crypto.randomBytes(32).toString('base64url');
  await db('password_resets').insert({ token_hash: sha256(token), user_id: row.id, expires_at: new Date(Date.now() + PASSWORD_RESET_MINUTES * 60_000) });
  return { user: toUser(row), token };
}

// Tokens are found by their SHA-256 (the primary key): no comparison of the secret itself happens here, and
// a lookup's timing tells nothing about a token whose hash the asker cannot choose.
const usableReset = (db: Db, token: string) =>
  db('password_resets').where({ token_hash: sha256(token) }).whereNull('used_at').andWhere('expires_at', '>', db.fn.now());

/** The person a reset token is for, while it is unused and unexpired. */
export async function findPasswordReset(db: Db, token: string): Promise<User | null> {
  const reset = await usableReset(db, token).first('user_id');
  if (!reset) return null;
  const row = await db<UserRow>('users').where({ id: reset.user_id }).first();
  return row ? toUser(row) : null;
}

/**
 * Uses the token once: sets the password, proves the e-mail, ends every session of the person and voids
 * their other reset links. Null when the token is unknown, used or expired (a second use loses the race).
 */
export async function resetPassword(db: Db, token: string, password: string): Promise<User | null> {
  const passwordHash = await hashPassword(password);
  return db.transaction(async (trx) => {
    const [reset] = await usableReset(trx, token).update({ used_at: trx.fn.now() }).returning('user_id');
    if (!reset) return null;
    const [row] = await trx<UserRow>('users')
      .where({ id: reset.user_id })
      .update({ password_hash: passwordHash, email_verified_at: trx.raw('coalesce(email_verified_at, now())') as unknown as Date, updated_at: trx.fn.now() as unknown as Date })
      .returning('*');
    await trx('console_sessions').where({ user_id: reset.user_id }).delete();
    await trx('password_resets').where({ user_id: reset.user_id }).whereNull('used_at').update({ used_at: trx.fn.now() });
    return toUser(row);
  });
}
