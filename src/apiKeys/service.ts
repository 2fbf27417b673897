import crypto from 'node:crypto';
import type { Db } from '../db';
import { notFound } from '../errors';
import { scopes as allScopes, type KeyScopes } from '../domain/scopes';
import { managesAccount, scopesOfRole, type Role } from '../domain/roles';
import type { Actor } from '../domain/actors';
import { newId } from '../ids';
import type { Account } from '../accounts/service';
import { authChanged } from '../accounts/authChanges';
import { findLiveKeyByPrefix, insertApiKey, listApiKeyRows, revokeLiveKeys, setRevoked, touchLastUsed, type ApiKeyRow } from './store';

// Keys look like sk_live_<43 base62 chars>. The first 16 characters are a non-secret prefix used
// to find the row; the whole key is stored only as its SHA-256 and compared in constant time.
const KEY_START = 'sk_live_';
const PREFIX_LENGTH = 16;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  /** null: every scope. */
  scopes: KeyScopes;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** The member who made it (their address as it was then), null when the CLI or an older version did. */
  createdBy: { id: string | null; email: string } | null;
}

const toApiKey = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  prefix: row.prefix,
  scopes: row.scopes,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
  revokedAt: row.revoked_at,
  createdBy: row.created_by_email ? { id: row.created_by, email: row.created_by_email } : null,
});

function randomBase62(length: number): string {
  const bytes = crypto.randomBytes(length * 2);
  let out = '';
  // 248 = 4 * 62: rejecting bytes above it keeps every character equally likely.
  for (const byte of bytes) {
    if (byte < 248) out += BASE62[byte % 62];
    if (out.length === length) return out;
  }
  return out + randomBase62(length - out.length);
}

export const hashKey = (key: string) => crypto.createHash('sha256').update(key).digest('hex');

export interface ApiKeyLimits {
  /** Omitted or null: every scope. */
  scopes?: KeyScopes;
  expiresAt?: Date | null;
  /** The member making it: the key then never does more than their role allows. */
  createdBy?: { id: string; email: string } | null;
}

export async function createApiKey(db: Db, accountId: string, name = 'default', { scopes = null, expiresAt = null, createdBy = null }: ApiKeyLimits = {}) {
  const secret = `${KEY_START}${randomBase62(43)}`;
  const row = await insertApiKey(db, {
    id: newId('apiKey'),
    accountId,
    name,
    prefix: secret.slice(0, PREFIX_LENGTH),
    keyHash: hashKey(secret),
    scopes: scopes === null ? null : [...new Set(scopes)],
    expiresAt,
    createdBy,
  });
  return { apiKey: toApiKey(row), secret };
}

export async function listApiKeys(db: Db, accountId: string) {
  return (await listApiKeyRows(db, accountId)).map(toApiKey);
}

/** Revokes the key `id` (of the account `accountId` only, when given: another account's key is not found). */
export async function revokeApiKey(db: Db, id: string, accountId?: string) {
  const row = await setRevoked(db, id, accountId);
  if (!row) throw notFound('API key');
  authChanged();
  return toApiKey(row);
}

/**
 * Revokes every live key of the account (e.g. keys made by whoever held it before its address was proven),
 * or those its member `createdBy` made (a member who leaves).
 */
export async function revokeAllApiKeys(db: Db, accountId: string, createdBy?: string): Promise<number> {
  const revoked = await revokeLiveKeys(db, accountId, createdBy);
  if (revoked) authChanged();
  return revoked;
}

export interface Authenticated {
  account: Account;
  keyId: string;
  /** What the key may do: its own scopes, within its maker's role while they are a member. */
  scopes: KeyScopes;
  actor: Actor;
  /** The key works until then: checked on every request (see authenticate.ts), cached or not. */
  expiresAt: Date | null;
}

const LAST_USED_EVERY_MS = 60_000;

/** A key's scopes narrowed to its maker's role (all of a key's scopes when no member made it, or an admin did). */
function withinRole(held: KeyScopes, role: Role | null): KeyScopes {
  if (role === null || managesAccount(role)) return held;
  const allowed = scopesOfRole(role);
  return (held ?? allScopes).filter((scope) => allowed.includes(scope));
}

/** The account a presented key belongs to (expired or not), or null for a malformed, unknown or revoked key. */
export async function authenticateApiKey(db: Db, presented: string): Promise<Authenticated | null> {
  if (!presented.startsWith(KEY_START) || presented.length !== KEY_START.length + 43) return null;
  const row = await findLiveKeyByPrefix(db, presented.slice(0, PREFIX_LENGTH));
  if (!row) return null;
  const expected = Buffer.from(row.key_hash, 'hex');
  if (!crypto.timingSafeEqual(expected, Buffer.from(hashKey(presented), 'hex'))) return null;
  const expired = row.expires_at !== null && row.expires_at.getTime() <= Date.now();
  if (!expired && (!row.last_used_at || Date.now() - row.last_used_at.getTime() > LAST_USED_EVERY_MS)) {
    await touchLastUsed(db, row.key_id, LAST_USED_EVERY_MS);
  }
  return {
    keyId: row.key_id,
    scopes: withinRole(row.scopes, row.creator_role),
    actor: { type: 'api_key', id: row.key_id, name: row.key_name, memberId: row.created_by, memberEmail: row.created_by_email },
    expiresAt: row.expires_at,
    account: { id: row.id, email: row.email, name: row.name, plan: row.plan, emailVerified: row.email_verified_at !== null, createdAt: row.created_at },
  };
}
