import type { Db } from '../db';
import type { MemberRole, Role } from '../domain/roles';

// The SQL of an account's members (users rows, with their role) and of its invitations; service.ts maps
// the rows. Each takes a Db, which may be the caller's transaction.

export interface MemberRow {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  created_at: Date;
}

export interface InvitationRow {
  id: string;
  account_id: string;
  email: string;
  role: MemberRole;
  token_hash: string;
  invited_by: string | null;
  invited_by_email: string | null;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

const memberColumns = ['id', 'account_id', 'email', 'role', 'created_at'];

/** Oldest first: the owner who made the account, then each member as they joined. */
export const listMemberRows = (db: Db, accountId: string): Promise<MemberRow[]> =>
  db('users')
    .where({ account_id: accountId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(memberColumns);

/**
 * Every member of the account, locked until the transaction ends: changes to an account's people (a role,
 * a removal, a hand-over) take their turn, and each sees what the one before it left.
 */
export const lockMemberRows = (trx: Db, accountId: string): Promise<MemberRow[]> =>
  trx('users').where({ account_id: accountId }).orderBy('id').forUpdate().select(memberColumns);

export async function setRole(trx: Db, id: string, role: Role) {
  await trx('users').where({ id }).update({ role, updated_at: trx.fn.now() });
}

export async function deleteMember(trx: Db, id: string) {
  await trx('users').where({ id }).delete();
}

export async function insertInvitation(trx: Db, invitation: Omit<InvitationRow, 'created_at' | 'accepted_at' | 'revoked_at'>): Promise<InvitationRow> {
  const [row] = await trx<InvitationRow>('invitations').insert(invitation).returning('*');
  return row;
}

/** Newest first, the pending ones (accepted and revoked ones are history). */
export const listPendingInvitationRows = (db: Db, accountId: string): Promise<InvitationRow[]> =>
  db<InvitationRow>('invitations').where({ account_id: accountId }).whereNull('accepted_at').whereNull('revoked_at').orderBy('created_at', 'desc');

/** Revokes the pending invitations of the account for this address (all of them, when no address is given). */
export const revokePendingInvitations = (trx: Db, accountId: string, email: string) =>
  trx('invitations').where({ account_id: accountId, email }).whereNull('accepted_at').whereNull('revoked_at').update({ revoked_at: trx.fn.now() });

/** Revokes one pending invitation of the account; undefined when it is not the account's, or not pending. */
export async function revokeInvitationRow(db: Db, accountId: string, id: string): Promise<InvitationRow | undefined> {
  const [row] = await db<InvitationRow>('invitations')
    .where({ id, account_id: accountId })
    .whereNull('accepted_at')
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now() })
    .returning('*');
  return row;
}

export const findInvitationRow = (db: Db, accountId: string, id: string): Promise<InvitationRow | undefined> =>
  db<InvitationRow>('invitations').where({ id, account_id: accountId }).first();

// Found by the token's SHA-256 (unique): a lookup's timing tells nothing about a token whose hash the asker cannot choose.
const usableInvitation = (db: Db, tokenHash: string) =>
  db<InvitationRow>('invitations').where({ token_hash: tokenHash }).whereNull('accepted_at').whereNull('revoked_at').andWhere('expires_at', '>', db.fn.now());

export const findUsableInvitation = (db: Db, tokenHash: string): Promise<InvitationRow | undefined> => usableInvitation(db, tokenHash).first();

/** Accepts a usable invitation once: one of an acceptance and a revocation at the same moment wins. */
export async function acceptInvitationRow(trx: Db, tokenHash: string): Promise<InvitationRow | undefined> {
  const [row] = await usableInvitation(trx, tokenHash).update({ accepted_at: trx.fn.now() }).returning('*');
  return row;
}
