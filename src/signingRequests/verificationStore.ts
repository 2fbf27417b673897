import type { Db } from '../db';
import type { VerificationMethod } from '../domain/signingRequests';

// The queries of signer_verifications (verification.ts says how a signer is verified). Codes are kept
// only as HMACs. Each takes a Db, which may be the caller's transaction.

export interface SignerVerification {
  method: VerificationMethod;
  codeSentAt: Date | null;
  codeExpiresAt: Date | null;
  codeUsedAt: Date | null;
  wrongTries: number;
  wrongTriesAllowed: number;
  lockedAt: Date | null;
  lockedUntil: Date | null;
  verifiedAt: Date | null;
}

const toVerification = (row: Record<string, any>): SignerVerification => ({
  method: row.method,
  codeSentAt: row.code_sent_at,
  codeExpiresAt: row.code_expires_at,
  codeUsedAt: row.code_used_at,
  wrongTries: row.wrong_tries,
  wrongTriesAllowed: row.wrong_tries_allowed,
  lockedAt: row.locked_at,
  lockedUntil: row.locked_until,
  verifiedAt: row.verified_at,
});

export async function findSignerVerification(db: Db, signerId: string): Promise<SignerVerification | null> {
  const row = await db('signer_verifications').where({ signer_id: signerId }).first();
  return row ? toVerification(row) : null;
}

/** Locks the signer's verification for the rest of the transaction, and reads it with its code's HMAC; undefined when they have none. */
export async function lockSignerVerification(trx: Db, signerId: string): Promise<{ verification: SignerVerification; codeHash: string | null } | undefined> {
  const row = await trx('signer_verifications').where({ signer_id: signerId }).forUpdate().first();
  return row && { verification: toVerification(row), codeHash: row.code_hash };
}

/**
 * Counts one wrong try, only if the signer has one left and no lock holds at `now`: the condition is the
 * update's own, so two tries at once never both take the last one. Returns the count, or undefined when
 * nothing was counted.
 */
export async function incrementWrongTries(trx: Db, signerId: string, now: Date): Promise<number | undefined> {
  const [counted] = await trx('signer_verifications')
    .where({ signer_id: signerId })
    .where('wrong_tries', '<', trx.ref('wrong_tries_allowed'))
    .where((open) => open.whereNull('locked_until').orWhere('locked_until', '<=', now))
    .increment('wrong_tries', 1)
    .returning('wrong_tries');
  return counted?.wrong_tries;
}

/** A right code: the signer is verified since `verifiedAt`, and an e-mailed code is used up at `codeUsedAt`. */
export async function markSignerVerified(trx: Db, signerId: string, at: { verifiedAt: Date; codeUsedAt?: Date }) {
  await trx('signer_verifications')
    .where({ signer_id: signerId })
    .update({ verified_at: at.verifiedAt, ...(at.codeUsedAt ? { code_used_at: at.codeUsedAt } : {}) });
}

export async function lockSigner(trx: Db, signerId: string, lock: { lockedAt: Date; lockedUntil: Date }) {
  await trx('signer_verifications').where({ signer_id: signerId }).update({ locked_at: lock.lockedAt, locked_until: lock.lockedUntil });
}

/**
 * Gives `more` tries, and lifts the lock, to those of `signerIds` on the request who spent every allowed
 * wrong try; returns them with their wrong tries.
 */
export const raiseTriesAllowed = (trx: Db, requestId: string, signerIds: string[], more: number): Promise<{ signer_id: string; wrong_tries: number }[]> =>
  trx('signer_verifications')
    .whereIn('signer_id', trx('signers').where({ signing_request_id: requestId }).whereIn('id', signerIds).select('id'))
    .where('wrong_tries', '>=', trx.ref('wrong_tries_allowed'))
    .update({ wrong_tries_allowed: trx.raw('wrong_tries + ?', [more]), locked_until: null })
    .returning(['signer_id', 'wrong_tries']);

/** A new e-mailed code (its HMAC), replacing the last. */
export async function storeEmailCode(trx: Db, signerId: string, code: { codeHash: string; sentAt: Date; expiresAt: Date }) {
  await trx('signer_verifications')
    .where({ signer_id: signerId })
    .update({ code_hash: code.codeHash, code_sent_at: code.sentAt, code_expires_at: code.expiresAt, code_used_at: null });
}

/** A lock whose sender was not told of it yet, with what the e-mail to them says. */
export interface UntoldLock {
  signer_id: string;
  locked_at: Date;
  locked_until: Date;
  wrong_tries: number;
  wrong_tries_allowed: number;
  name: string;
  email: string;
  title: string;
  owner_email: string;
  owner_name: string | null;
}

/** The locks whose senders were not told of them yet: the signer's, or up to `limit` that began before `lockedBefore`. */
export function findUntoldLocks(db: Db, select: { signerId: string } | { lockedBefore: Date; limit: number }): Promise<UntoldLock[]> {
  return db('signer_verifications as v')
    .join('signers as s', 's.id', 'v.signer_id')
    .join('signing_requests as r', 'r.id', 's.signing_request_id')
    .join('accounts as a', 'a.id', 'r.account_id')
    .whereNotNull('v.locked_until')
    .whereNotNull('v.locked_at')
    .where((untold) => untold.whereNull('v.notified_lock_at').orWhereRaw('v.notified_lock_at <> v.locked_at'))
    .modify((builder) => {
      if ('signerId' in select) builder.where('v.signer_id', select.signerId);
      else builder.where('v.locked_at', '<', select.lockedBefore).limit(select.limit);
    })
    .select(
      'v.signer_id',
      'v.locked_at',
      'v.locked_until',
      'v.wrong_tries',
      'v.wrong_tries_allowed',
      's.name',
      's.email',
      'r.title',
      'a.email as owner_email',
      'a.name as owner_name',
    );
}

/** The sender was told of the lock that began at `lockedAt` (and not of a later one). */
export async function markLockTold(db: Db, signerId: string, lockedAt: Date) {
  await db('signer_verifications').where({ signer_id: signerId, locked_at: lockedAt }).update({ notified_lock_at: lockedAt });
}
