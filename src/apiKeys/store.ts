import type { Db } from '../db';
import type { AccountRow } from '../accounts/store';
import type { Role } from '../domain/roles';
import type { KeyScopes, Scope } from '../domain/scopes';

// The SQL of the api_keys table; service.ts maps the rows.

export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: Scope[] | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_by: string | null;
  created_by_email: string | null;
}

export async function insertApiKey(
  db: Db,
  key: {
    id: string;
    accountId: string;
    name: string;
    prefix: string;
    keyHash: string;
    scopes: KeyScopes;
    expiresAt: Date | null;
    createdBy: { id: string; email: string } | null;
  },
): Promise<ApiKeyRow> {
  const [row] = await db<ApiKeyRow>('api_keys')
    .insert({
      id: key.id,
      account_id: key.accountId,
      name: key.name,
      prefix: key.prefix,
      key_hash: key.keyHash,
      // jsonb: knex would send a JS array as a PostgreSQL array literal.
      scopes: (key.scopes === null ? null : JSON.stringify(key.scopes)) as never,
      expires_at: key.expiresAt,
      created_by: key.createdBy?.id ?? null,
      created_by_email: key.createdBy?.email ?? null,
    })
    .returning('*');
  return row;
}

/** Oldest first. */
export const listApiKeyRows = (db: Db, accountId: string) => db<ApiKeyRow>('api_keys').where({ account_id: accountId }).orderBy('created_at');

/** Revokes the key `id` (of the account `accountId` only, when given); a key revoked before keeps its time. */
export async function setRevoked(db: Db, id: string, accountId?: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db<ApiKeyRow>('api_keys')
    .where({ id, ...(accountId ? { account_id: accountId } : {}) })
    .update({ revoked_at: db.raw('coalesce(revoked_at, now())') })
    .returning('*');
  return row;
}

/** How many live keys it revoked: every one of the account, or those its member `createdBy` made. */
export const revokeLiveKeys = (db: Db, accountId: string, createdBy?: string): Promise<number> =>
  db('api_keys')
    .where({ account_id: accountId, ...(createdBy ? { created_by: createdBy } : {}) })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() });

/** A key's columns (as key_id, key_hash…) beside its account's. */
type LiveKeyWithAccount = Omit<AccountRow, 'updated_at'> & {
  key_id: string;
  key_hash: string;
  last_used_at: Date | null;
  scopes: KeyScopes;
  expires_at: Date | null;
  key_name: string;
  created_by: string | null;
  created_by_email: string | null;
  /** The role of the member who made the key, null when no member did. */
  creator_role: Role | null;
};

/** The unrevoked key of this prefix, with its account's columns and its maker's role. */
export function findLiveKeyByPrefix(db: Db, prefix: string): Promise<LiveKeyWithAccount | undefined> {
  return db('api_keys')
    .join('accounts', 'accounts.id', 'api_keys.account_id')
    .leftJoin('users', 'users.id', 'api_keys.created_by')
    .where('api_keys.prefix', prefix)
    .whereNull('api_keys.revoked_at')
    .first(
      'api_keys.id as key_id',
      'api_keys.key_hash',
      'api_keys.last_used_at',
      'api_keys.scopes',
      'api_keys.expires_at',
      'api_keys.name as key_name',
      'api_keys.created_by',
      'api_keys.created_by_email',
      'users.role as creator_role',
      'accounts.id',
      'accounts.email',
      'accounts.name',
      'accounts.plan',
      'accounts.email_verified_at',
      'accounts.created_at',
    );
}

/** Stamps the key used now, unless it was within `everyMs`: conditional, so that processes looking it up at once write it once. */
export async function touchLastUsed(db: Db, id: string, everyMs: number) {
  await db('api_keys')
    .where({ id })
    .where((stale) => stale.whereNull('last_used_at').orWhere('last_used_at', '<', db.raw(`now() - interval '${everyMs} milliseconds'`)))
    .update({ last_used_at: db.fn.now() });
}
