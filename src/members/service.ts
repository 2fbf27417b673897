import type { Account } from '../accounts/service';
import { revokeAllApiKeys } from '../apiKeys/service';
import type { Db } from '../db';
import { violatesUnique } from '../db/errors';
import { managesAccount, type MemberRole, type Role } from '../domain/roles';
import { AppError, conflict, notFound } from '../errors';
import { newId } from '../ids';
import { openMailHour } from '../mail/allowance';
import { hashLinkToken, newLinkToken } from './linkTokens';
import { hashPassword } from './passwords';
import { normalizeEmail, toUser, type User } from './people';
import { findUserRowByEmail, insertUser } from './peopleStore';
import {
  acceptInvitationRow,
  deleteMember,
  findInvitationRow,
  findUsableInvitation,
  insertInvitation,
  listMemberRows,
  listPendingInvitationRows,
  lockMemberRows,
  revokeInvitationRow,
  revokePendingInvitations,
  setRole,
  type InvitationRow,
  type MemberRow,
} from './store';

// The people of an account: who they are, their roles, and the invitations that bring in new ones. Every
// change is one transaction that first locks the account's members (lockMemberRows), so changes take turns
// and each checks, as it stands then, that whoever makes it may (two admins removing each other: the
// second finds they are no longer a member) and that the account keeps exactly one owner.

export const INVITATION_DAYS = 7;

export interface Member {
  id: string;
  email: string;
  role: Role;
  joinedAt: Date;
}

export interface Invitation {
  id: string;
  email: string;
  role: MemberRole;
  invitedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** Who changes the account's people: a member (their role checked as it stands), or a key that may manage the account. */
export type Manager = { memberId: string } | { apiKey: true; memberId?: never };

const toMember = (row: MemberRow): Member => ({ id: row.id, email: row.email, role: row.role, joinedAt: row.created_at });
const toInvitation = (row: InvitationRow): Invitation => ({
  id: row.id,
  email: row.email,
  role: row.role,
  invitedBy: row.invited_by_email,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

const notAllowed = () => new AppError(403, 'forbidden', 'Only the account’s owner and admins manage its members.');
const ownerStays = () =>
  conflict('The owner stays the owner until they hand the account on to another member (transfer ownership): an account always has exactly one.');

export const listMembers = async (db: Db, accountId: string) => (await listMemberRows(db, accountId)).map(toMember);

export const listInvitations = async (db: Db, accountId: string) => (await listPendingInvitationRows(db, accountId)).map(toInvitation);

/** In the caller's transaction: the account's members, locked, after checking that `by` may manage them. */
async function lockedFor(trx: Db, accountId: string, by: Manager): Promise<MemberRow[]> {
  const members = await lockMemberRows(trx, accountId);
  if (by.memberId !== undefined) {
    const manager = members.find((member) => member.id === by.memberId);
    if (!manager || !managesAccount(manager.role)) throw notAllowed();
  }
  return members;
}

const memberIn = (members: MemberRow[], id: string) => {
  const member = members.find((candidate) => candidate.id === id);
  if (!member) throw notFound('Member');
  return member;
};

export async function changeRole(db: Db, accountId: string, by: Manager, memberId: string, role: MemberRole): Promise<Member> {
  return db.transaction(async (trx) => {
    const member = memberIn(await lockedFor(trx, accountId, by), memberId);
    if (member.role === 'owner') throw ownerStays();
    await setRole(trx, member.id, role);
    return toMember({ ...member, role });
  });
}

/**
 * Removes a member: their sessions end at once (they cascade), the API keys they made are revoked, and what
 * they did stays attributed to them (the audit trail and events hold their address). A member may always
 * leave; the owner never can.
 */
export async function removeMember(db: Db, accountId: string, by: Manager, memberId: string): Promise<Member> {
  return db.transaction(async (trx) => {
    const leaving = by.memberId === memberId;
    const members = leaving ? await lockMemberRows(trx, accountId) : await lockedFor(trx, accountId, by);
    const member = memberIn(members, memberId);
    if (member.role === 'owner') throw ownerStays();
    await revokeAllApiKeys(trx, accountId, member.id);
    await deleteMember(trx, member.id);
    return toMember(member);
  });
}

/** The owner hands the account on to another member, and becomes an admin. */
export async function transferOwnership(db: Db, accountId: string, ownerId: string, memberId: string): Promise<Member> {
  return db.transaction(async (trx) => {
    const members = await lockMemberRows(trx, accountId);
    const owner = members.find((member) => member.id === ownerId && member.role === 'owner');
    if (!owner) throw new AppError(403, 'forbidden', 'Only the owner hands the account on.');
    const next = memberIn(members, memberId);
    if (next.id === owner.id) throw conflict('You are the owner already.');
    // In this order: the unique index users_one_owner allows one owner at any moment.
    await setRole(trx, owner.id, 'admin');
    await setRole(trx, next.id, 'owner');
    return toMember({ ...next, role: 'owner' });
  });
}

/**
 * Invites an address to join the account with a role; the link (its token, only its SHA-256 stored) works
 * once, for seven days. A new invitation to the same address replaces the pending one. 409 when the
 * address is a member already, or signs in to another account (a person belongs to one account); 429 when
 * the plan's e-mails of the hour are spent.
 */
export async function inviteMember(
  db: Db,
  account: Account,
  by: Manager & { email: string | null },
  input: { email: string; role: MemberRole },
  mailMultiplier: number,
): Promise<{ invitation: Invitation; token: string }> {
  const email = normalizeEmail(input.email);
  const token = newLinkToken();
  return db.transaction(async (trx) => {
    const members = await lockedFor(trx, account.id, by);
    if (members.some((member) => normalizeEmail(member.email) === email)) throw conflict(`${email} is a member of this account already.`);
    if (await findUserRowByEmail(trx, email)) throw elsewhere(email);
    // Its e-mail counts in the plan's e-mails of the hour, as a signing request's do: a free account
    // cannot make Signet mail strangers by the thousand.
    await (await openMailHour(trx, account, mailMultiplier)).takeAll([`invitation:${hashLinkToken(token)}`], 'This invitation');
    await revokePendingInvitations(trx, account.id, email);
    const row = await insertInvitation(trx, {
      id: newId('invitation'),
      account_id: account.id,
      email,
      role: input.role,
      token_hash: hashLinkToken(token),
      invited_by: by.memberId ?? null,
      invited_by_email: by.email,
      expires_at: new Date(Date.now() + INVITATION_DAYS * 86_400_000),
    });
    return { invitation: toInvitation(row), token };
  });
}

const elsewhere = (email: string) =>
  conflict(`${email} signs in to another Signet account already; a person belongs to one account. They can leave it, or use another address.`);

export async function revokeInvitation(db: Db, accountId: string, id: string): Promise<Invitation> {
  const row = await revokeInvitationRow(db, accountId, id);
  if (row) return toInvitation(row);
  if (await findInvitationRow(db, accountId, id)) throw conflict('This invitation was accepted or revoked already.');
  throw notFound('Invitation');
}

/** What the invitation's page shows: the account and role it is for, while it is usable. */
export async function findInvitation(db: Db, token: string): Promise<(Invitation & { accountId: string }) | null> {
  const row = await findUsableInvitation(db, hashLinkToken(token));
  return row ? { ...toInvitation(row), accountId: row.account_id } : null;
}

/**
 * Accepts an invitation once, as the person it went to (following the link proves the address), with this
 * password: they are a member from now on. Null when the link is unknown, used, revoked or expired.
 */
export async function acceptInvitation(db: Db, token: string, password: string): Promise<User | null> {
  const passwordHash = await hashPassword(password);
  return db.transaction(async (trx) => {
    const invitation = await acceptInvitationRow(trx, hashLinkToken(token));
    if (!invitation) return null;
    try {
      const row = await insertUser(trx, { id: newId('user'), accountId: invitation.account_id, email: invitation.email, passwordHash, role: invitation.role });
      return toUser(row);
    } catch (error) {
      if (violatesUnique(error, 'users_email_lower_unique')) throw elsewhere(invitation.email);
      throw error;
    }
  });
}
