import type { Db } from '../db';
import type { Role } from '../domain/roles';

// The SQL of the console's own tables: users, console_sessions, email_verifications, password_resets,
// and the console's rows of rate_limits. people.ts, sessions.ts and loginLimits.ts map the rows.

export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  password_hash: string | null;
  role: Role;
  created_at: Date;
  updated_at: Date;
}

/** Throws the unique violation users_email_lower_unique when the address is taken in any letter case. */
export async function insertUser(db: Db, user: { id: string; accountId: string; email: string; passwordHash: string | null; role: Role }): Promise<UserRow> {
  const [row] = await db<UserRow>('users')
    .insert({ id: user.id, account_id: user.accountId, email: user.email, password_hash: user.passwordHash, role: user.role })
    .returning('*');
  return row;
}

export const findUserRow = (db: Db, id: string): Promise<UserRow | undefined> => db<UserRow>('users').where({ id }).first();

/** In any letter case. */
export const findUserRowByEmail = (db: Db, email: string): Promise<UserRow | undefined> =>
  db<UserRow>('users').whereRaw('lower(email) = lower(?)', [email]).first();

export const findAccountUserByEmail = (db: Db, accountId: string, email: string): Promise<UserRow | undefined> =>
  db<UserRow>('users').where({ account_id: accountId }).whereRaw('lower(email) = lower(?)', [email]).first();

export async function setPasswordHash(db: Db, userId: string, passwordHash: string): Promise<UserRow> {
  const [row] = await db<UserRow>('users')
    .where({ id: userId })
    .update({ password_hash: passwordHash, updated_at: db.fn.now() as unknown as Date })
    .returning('*');
  return row;
}

export async function insertEmailVerification(db: Db, link: { tokenHash: string; userId: string; email: string; expiresAt: Date }) {
  await db('email_verifications').insert({ token_hash: link.tokenHash, user_id: link.userId, email: link.email, expires_at: link.expiresAt });
}

const usableVerification = (db: Db, tokenHash: string) =>
  db('email_verifications').where({ token_hash: tokenHash }).whereNull('used_at').andWhere('expires_at', '>', db.fn.now());

/** The person of an unused, unexpired verification. */
export async function findUsableVerification(db: Db, tokenHash: string): Promise<string | undefined> {
  return (await usableVerification(db, tokenHash).first('user_id'))?.user_id;
}

/** Uses the person's unused, unexpired verification once; the address it went to. */
export async function useVerification(db: Db, tokenHash: string, userId: string): Promise<{ user_id: string; email: string } | undefined> {
  const [link] = await usableVerification(db, tokenHash).andWhere({ user_id: userId }).update({ used_at: db.fn.now() }).returning(['user_id', 'email']);
  return link;
}

export async function insertPasswordReset(db: Db, reset: { tokenHash: string; userId: string; expiresAt: Date }) {
  await db('password_resets').insert({ token_hash: reset.tokenHash, user_id: reset.userId, expires_at: reset.expiresAt });
}

// Tokens are found by their SHA-256 (the primary key): no comparison of the secret itself happens here, and
// a lookup's timing tells nothing about a token whose hash the asker cannot choose.
const usableReset = (db: Db, tokenHash: string) =>
  db('password_resets').where({ token_hash: tokenHash }).whereNull('used_at').andWhere('expires_at', '>', db.fn.now());

/** The person of an unused, unexpired reset. */
export async function findUsableReset(db: Db, tokenHash: string): Promise<string | undefined> {
  return (await usableReset(db, tokenHash).first('user_id'))?.user_id;
}

/** Uses an unused, unexpired reset once; the person it is for. */
export async function useReset(db: Db, tokenHash: string): Promise<string | undefined> {
  const [reset] = await usableReset(db, tokenHash).update({ used_at: db.fn.now() }).returning('user_id');
  return reset?.user_id;
}

export async function voidResetsOf(db: Db, userId: string) {
  await db('password_resets').where({ user_id: userId }).whereNull('used_at').update({ used_at: db.fn.now() });
}

export async function insertSession(db: Db, session: { tokenHash: string; userId: string; expiresAt: Date }) {
  await db('console_sessions').insert({ token_hash: session.tokenHash, user_id: session.userId, expires_at: session.expiresAt });
}

export const findLiveSession = (db: Db, tokenHash: string): Promise<{ token_hash: string; user_id: string } | undefined> =>
  db('console_sessions').where({ token_hash: tokenHash }).andWhere('expires_at', '>', db.fn.now()).first('token_hash', 'user_id');

export async function deleteSession(db: Db, tokenHash: string) {
  await db('console_sessions').where({ token_hash: tokenHash }).delete();
}

export async function deleteSessionsOf(db: Db, userId: string) {
  await db('console_sessions').where({ user_id: userId }).delete();
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (character) => `\\${character}`);

/** Deletes the rate-limit counters keyed `key` and those whose keys begin with one of `prefixes`. */
export async function deleteRateLimits(db: Db, key: string, prefixes: string[]) {
  await db('rate_limits')
    .where('key', key)
    .modify((builder) => {
      for (const prefix of prefixes) builder.orWhere('key', 'like', `${escapeLike(prefix)}%`);
    })
    .delete();
}
