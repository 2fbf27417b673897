import type { Db } from '../db';
import type { Role } from '../domain/roles';
import { newId } from '../ids';
import { accountEmailTaken, createAccount, findAccountByEmail, getAccount, markEmailVerified, type Account } from '../accounts/service';
import { violatesUnique } from '../db/errors';
import { revokeAllApiKeys } from '../apiKeys/service';
import { hashLinkToken, newLinkToken } from './linkTokens';
import { decoyHash, hashPassword, verifyPassword } from './passwords';
import {
  deleteSessionsOf,
  findAccountUserByEmail,
  findUsableReset,
  findUsableVerification,
  findUserRow,
  findUserRowByEmail,
  insertEmailVerification,
  insertPasswordReset,
  insertUser,
  setPasswordHash,
  useReset,
  useVerification,
  voidResetsOf,
  type UserRow,
} from './peopleStore';

// A person who signs in to the console: a member of one account, with a role there (src/domain/roles.ts).
// Sign-up creates an account and its owner; an invitation brings in the others (src/members). Addresses are
// compared in any letter case (unique indexes on lower(email)): one address, one person, one account.
export interface User {
  id: string;
  accountId: string;
  email: string;
  role: Role;
  createdAt: Date;
}

export const toUser = (row: UserRow): User => ({ id: row.id, accountId: row.account_id, email: row.email, role: row.role, createdAt: row.created_at });

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/**
 * A new free account, owned by a new person with this password, its address not proven yet: the
 * account reads until the link in `verificationToken` is followed. 409 when any account has the address.
 */
export async function signUp(
  db: Db,
  input: { email: string; password: string; accountName: string },
): Promise<{ user: User; account: Account; verificationToken: string }> {
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (trx) => {
    const account = await createAccount(trx, { email, plan: 'free', name: input.accountName, emailVerified: false });
    try {
      const row = await insertUser(trx, { id: newId('user'), accountId: account.id, email, passwordHash, role: 'owner' });
      return { user: toUser(row), account, verificationToken: await createEmailVerification(trx, toUser(row)) };
    } catch (error) {
      if (violatesUnique(error, 'users_email_lower_unique')) throw accountEmailTaken();
      throw error;
    }
  });
}

/** What a log-in checks: the person with this e-mail (or their id) and their password's hash (null until they set one). */
export interface Login {
  user: User;
  passwordHash: string | null;
}

export async function findLogin(db: Db, by: { email: string } | { userId: string }): Promise<Login | undefined> {
  const row = await ('email' in by ? findUserRowByEmail(db, by.email.trim()) : findUserRow(db, by.userId));
  return row && { user: toUser(row), passwordHash: row.password_hash };
}

/** Whether this is the password of the login; the same scrypt work is done whether or not there is one. */
export async function passwordMatches(login: Login | undefined, password: string): Promise<boolean> {
  const matches = await verifyPassword(password, login?.passwordHash ?? (await decoyHash()));
  return Boolean(login?.passwordHash) && matches;
}

export async function getUserAndAccount(db: Db, userId: string): Promise<{ user: User; account: Account } | null> {
  const row = await findUserRow(db, userId);
  if (!row) return null;
  return { user: toUser(row), account: await getAccount(db, row.account_id) };
}

// --- E-mail verification: a link e-mailed at sign-up (and on request), valid once, for a day ---

export const EMAIL_VERIFICATION_HOURS = 24;

/** A verification token for the person's address (only its SHA-256 is stored). */
export async function createEmailVerification(db: Db, user: User): Promise<string> {
  const token = newLinkToken();
  await insertEmailVerification(db, {
    tokenHash: hashLinkToken(token),
    userId: user.id,
    email: user.email,
    expiresAt: new Date(Date.now() + EMAIL_VERIFICATION_HOURS * 3_600_000),
  });
  return token;
}

/** The person a verification token is for, while it is unused and unexpired. */
export async function findEmailVerification(db: Db, token: string): Promise<User | null> {
  const userId = await findUsableVerification(db, hashLinkToken(token));
  const row = userId && (await findUserRow(db, userId));
  return row ? toUser(row) : null;
}

/**
 * Uses the token once, for this person only: their account's address is proven (if it is still the
 * address the link went to). Null when the token is unknown, used, expired or someone else's.
 */
export async function verifyEmail(db: Db, token: string, userId: string): Promise<User | null> {
  return db.transaction(async (trx) => {
    const link = await useVerification(trx, hashLinkToken(token), userId);
    if (!link) return null;
    const row = await findUserRow(trx, link.user_id);
    if (!row || normalizeEmail(row.email) !== normalizeEmail(link.email)) return null;
    await markEmailVerified(trx, row.account_id);
    return toUser(row);
  });
}

// --- Password resets: a link e-mailed to the person, valid once, for an hour ---

export const PASSWORD_RESET_MINUTES = 60;

/**
 * The person who may set a password for this e-mail: the owner of the one account with that address.
 * An account the operator created with the CLI (its address vouched for) has no person yet: the first
 * request makes its person, with no password, so that whoever reads that inbox can set one.
 */
async function findOrClaimOwner(db: Db, email: string): Promise<UserRow | undefined> {
  const account = await findAccountByEmail(db, email);
  if (!account) return undefined;
  const owner = () => findAccountUserByEmail(db, account.id, account.email);
  const existing = await owner();
  if (existing || !account.emailVerified) return existing;
  try {
    await insertUser(db, { id: newId('user'), accountId: account.id, email: normalizeEmail(account.email), passwordHash: null, role: 'owner' });
  } catch (error) {
    if (!violatesUnique(error, 'users_email_lower_unique')) throw error; // a request at the same moment made it
  }
  return owner();
}

/** A reset token for the person with this e-mail (only its SHA-256 is stored), or null when there is none. */
export async function createPasswordReset(db: Db, email: string): Promise<{ user: User; token: string } | null> {
  const row = (await findUserRowByEmail(db, normalizeEmail(email))) ?? (await findOrClaimOwner(db, email));
  if (!row) return null;
  const token = newLinkToken();
  await insertPasswordReset(db, { tokenHash: hashLinkToken(token), userId: row.id, expiresAt: new Date(Date.now() + PASSWORD_RESET_MINUTES * 60_000) });
  return { user: toUser(row), token };
}

/** The person a reset token is for, while it is unused and unexpired. */
export async function findPasswordReset(db: Db, token: string): Promise<User | null> {
  const userId = await findUsableReset(db, hashLinkToken(token));
  if (!userId) return null;
  const row = await findUserRow(db, userId);
  return row ? toUser(row) : null;
}

/**
 * Uses the token once: sets the password, proves the address, ends every session of the person and voids
 * their other reset links. Null when the token is unknown, used or expired (a second use loses the race).
 * An account whose address was not proven until now was held by whoever signed up with it, perhaps
 * not the owner of the inbox who proves it now: their API keys are revoked too, so that nothing of
 * theirs reaches into the account the owner takes over (an unproven account could make nothing else).
 */
export async function resetPassword(db: Db, token: string, password: string): Promise<User | null> {
  const passwordHash = await hashPassword(password);
  return db.transaction(async (trx) => {
    const userId = await useReset(trx, hashLinkToken(token));
    if (!userId) return null;
    const row = await setPasswordHash(trx, userId, passwordHash);
    // Only the owner's inbox proves the account's address; a member's proves their own (their invitation did).
    if (row.role === 'owner' && (await markEmailVerified(trx, row.account_id))) await revokeAllApiKeys(trx, row.account_id);
    await deleteSessionsOf(trx, userId);
    await voidResetsOf(trx, userId);
    return toUser(row);
  });
}
