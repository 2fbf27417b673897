import crypto from 'node:crypto';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import { conflict } from '../errors';
import { mailSender, type MailTransport } from '../mail';
import { countOwedMail } from '../mail/allowance';
import { verificationLockedMail } from '../mail/templates';
import type { Config } from '../config';
import type { ClientInfo, VerificationMethod } from '../domain/signingRequests';
import { eventDocument, recordAuditStep } from './store';
import { hashVerificationCode } from './tokens';

// A signer's verification: before their page shows anything, they give an access code the sender told
// them, or a 6-digit code e-mailed to them. Wrong codes count over the request's whole life, whatever
// the method: every fifth locks the signer, each lock longer than the last, and the twentieth until the
// sender reminds them, so that no code can be guessed within the request's life (the bound is stated in
// docs/api.md#signer-verification). Every try is decided in one transaction that locks the signer's row,
// and a wrong one is counted by an update that only counts a try that is left, so tries at once never
// take more. Codes are kept only as HMACs (tokens.ts) and compared in constant time; no code is written
// anywhere else.

/** Wrong tries between two locks. */
export const WRONG_TRIES_PER_LOCK = 5;
/**
 * How long the first, second and third locks last. The fourth, at the twentieth wrong try (the
 * allowance a signer starts with: signer_verifications.wrong_tries_allowed), lasts until the sender
 * reminds the signer, which allows five more.
 */
export const LOCKS_MS = [15 * 60_000, 60 * 60_000, 4 * 60 * 60_000];
export const EMAIL_CODE_MS = 10 * 60_000;
export const EMAIL_CODE_EVERY_MS = 60_000;

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

/** Who tries: the signer, their request (its account and expiry), and the request's documents (which every event of a request names). */
export interface Verifying {
  accountId: string;
  requestId: string;
  requestExpiresAt: Date;
  signer: { id: string; name: string; email: string };
  documents: { documentId: string; fileName: string }[];
}

export interface VerificationDeps {
  db: Db;
  events: EventLog;
  /** verificationKey (tokens.ts). */
  key: Buffer;
}

/** A lock: no try until `lockedUntil`, or, once every allowed wrong try is spent, until the sender reminds the signer (`lockedUntil` is then the request's expiry). */
export interface VerificationLock {
  lockedUntil: Date;
  untilSenderActs: boolean;
}

export type TryOutcome =
  | { outcome: 'verified' }
  | { outcome: 'wrong'; triesLeft: number; /** how long the lock after them lasts; null: until the sender acts */ nextLockMs: number | null }
  | ({ outcome: 'locked'; /** this try locked it: the sender is to be told */ justLocked: boolean } & VerificationLock);

export async function findSignerVerification(db: Db, signerId: string): Promise<SignerVerification | null> {
  const row = await db('signer_verifications').where({ signer_id: signerId }).first();
  return row ? toVerification(row) : null;
}

/** Every wrong try allowed is spent: locked until the sender reminds the signer. */
const outOfTries = (wrongTries: number, wrongTriesAllowed: number) => wrongTries >= wrongTriesAllowed;

/** The lock the signer is under at `now`, if any. */
export function lockOf(verification: SignerVerification, now: Date): VerificationLock | null {
  if (outOfTries(verification.wrongTries, verification.wrongTriesAllowed)) return { lockedUntil: verification.lockedUntil ?? now, untilSenderActs: true };
  if (verification.lockedUntil && verification.lockedUntil > now) return { lockedUntil: verification.lockedUntil, untilSenderActs: false };
  return null;
}

/** The lock that the wrong try numbered `wrongTries` begins: none, one of so many milliseconds, or one until the sender acts. */
function lockAfter(wrongTries: number, wrongTriesAllowed: number): number | 'until_sender_acts' | null {
  if (outOfTries(wrongTries, wrongTriesAllowed)) return 'until_sender_acts';
  if (wrongTries % WRONG_TRIES_PER_LOCK !== 0) return null;
  return LOCKS_MS[Math.min(wrongTries / WRONG_TRIES_PER_LOCK, LOCKS_MS.length) - 1];
}

/**
 * Counts one wrong try, only if the signer has one left and no lock holds: the condition is the update's
 * own, so two tries at once never both take the last one (and the table's check refuses a count past the
 * allowance, whoever writes it). Nothing counted is a conflict: the caller holds the row and saw a try left.
 */
async function countWrongTry(trx: Db, signerId: string, now: Date): Promise<number> {
  const [counted] = await trx('signer_verifications')
    .where({ signer_id: signerId })
    .where('wrong_tries', '<', trx.ref('wrong_tries_allowed'))
    .where((open) => open.whereNull('locked_until').orWhere('locked_until', '<=', now))
    .increment('wrong_tries', 1)
    .returning('wrong_tries');
  if (!counted) throw conflict('This signer has no try left now.');
  return counted.wrong_tries;
}

// One audit step per try, with the signer's IP and user agent and never the code.
const auditStep = (trx: Db, who: Verifying, action: string, client: ClientInfo, data: object) =>
  recordAuditStep(trx, who.requestId, {
    action,
    key: `${action}:${who.signer.id}:${crypto.randomUUID()}`,
    signerId: who.signer.id,
    actor: who.signer.email,
    client,
    data,
  });

/**
 * One try of a code. While locked, a try is refused unweighed and uncounted. A right code resets
 * nothing: the signer's slips and anyone else's guesses share the one allowance of the request's life.
 */
export async function tryVerificationCode({ db, events, key }: VerificationDeps, who: Verifying, code: string, client: ClientInfo): Promise<TryOutcome> {
  return unitOfWork(db, async (trx) => {
    const now = new Date();
    const row = await trx('signer_verifications').where({ signer_id: who.signer.id }).forUpdate().first();
    if (!row) return { outcome: 'verified' };
    const verification = toVerification(row);
    const lock = lockOf(verification, now);
    if (lock) return { outcome: 'locked', ...lock, justLocked: false };
    // An e-mailed code works once, for ten minutes; the hash is computed whether or not there is one to match.
    const usable = verification.method === 'access_code' || (verification.codeUsedAt === null && (verification.codeExpiresAt ?? now) > now);
    const given = Buffer.from(hashVerificationCode(key, who.signer.id, code), 'hex');
    const stored = Buffer.from(row.code_hash ?? '', 'hex');
    const matches = stored.length === given.length && crypto.timingSafeEqual(stored, given);
    const method = verification.method;
    if (matches && usable) {
      await trx('signer_verifications')
        .where({ signer_id: who.signer.id })
        .update({ verified_at: verification.verifiedAt ?? now, ...(method === 'email_code' ? { code_used_at: now } : {}) });
      await auditStep(trx, who, 'verification_succeeded', client, { method });
      return { outcome: 'verified' };
    }
    const wrongTries = await countWrongTry(trx, who.signer.id, now);
    await auditStep(trx, who, 'verification_failed', client, { method, wrongTries });
    const allowed = verification.wrongTriesAllowed;
    const lockMs = lockAfter(wrongTries, allowed);
    if (lockMs === null) {
      const triesLeft = Math.min(WRONG_TRIES_PER_LOCK - (wrongTries % WRONG_TRIES_PER_LOCK), allowed - wrongTries);
      const next = lockAfter(wrongTries + triesLeft, allowed);
      return { outcome: 'wrong', triesLeft, nextLockMs: next === 'until_sender_acts' ? null : next };
    }
    const untilSenderActs = lockMs === 'until_sender_acts';
    const lockedUntil = untilSenderActs ? who.requestExpiresAt : new Date(now.getTime() + lockMs);
    await trx('signer_verifications').where({ signer_id: who.signer.id }).update({ locked_at: now, locked_until: lockedUntil });
    await auditStep(trx, who, 'verification_locked', client, { method, wrongTries, lockedUntil: lockedUntil.toISOString(), untilSenderActs });
    await events.record(
      trx,
      who.accountId,
      'signer.verification_locked',
      {
        signingRequestId: who.requestId,
        signerId: who.signer.id,
        name: who.signer.name,
        email: who.signer.email,
        method,
        lockedUntil: lockedUntil.toISOString(),
        untilSenderActs,
        wrongTries,
        documents: who.documents.map(eventDocument),
      },
      `${who.signer.id}:verification_locked:${wrongTries}`,
    );
    return { outcome: 'locked', lockedUntil, untilSenderActs, justLocked: true };
  });
}

/**
 * The sender's remind of `signerIds` (those it reached) lets each of them who spent every allowed wrong
 * try try again: five more, then the lock until the sender acts again. So every five guesses past the
 * twenty of a request's life take a deliberate act of its sender. Safe to repeat: a signer let go is
 * no longer out of tries, and the step is keyed by the count.
 */
export async function releaseSignersOutOfTries(db: Db, who: { requestId: string; signerIds: string[]; actor: string }): Promise<void> {
  if (who.signerIds.length === 0) return;
  await unitOfWork(db, async (trx) => {
    const released: { signer_id: string; wrong_tries: number }[] = await trx('signer_verifications')
      .whereIn('signer_id', trx('signers').where({ signing_request_id: who.requestId }).whereIn('id', who.signerIds).select('id'))
      .where('wrong_tries', '>=', trx.ref('wrong_tries_allowed'))
      .update({ wrong_tries_allowed: trx.raw('wrong_tries + ?', [WRONG_TRIES_PER_LOCK]), locked_until: null })
      .returning(['signer_id', 'wrong_tries']);
    for (const { signer_id: signerId, wrong_tries: wrongTries } of released) {
      await recordAuditStep(trx, who.requestId, {
        action: 'verification_released',
        key: `verification_released:${signerId}:${wrongTries}`,
        signerId,
        actor: who.actor,
        data: { wrongTries, wrongTriesAllowed: wrongTries + WRONG_TRIES_PER_LOCK },
      });
    }
  });
}

export type IssueOutcome =
  | { outcome: 'issued'; code: string; mailKey: string; sentAt: Date; expiresAt: Date }
  | { outcome: 'too_soon'; retryAt: Date }
  | ({ outcome: 'locked' } & VerificationLock);

/**
 * A new e-mail code for the signer, replacing the last (at most one a minute); the caller e-mails it
 * under `mailKey`. The e-mail is counted in the account's hour as owed, never refused.
 */
export async function issueEmailCode({ db, key }: Pick<VerificationDeps, 'db' | 'key'>, who: Verifying, client: ClientInfo): Promise<IssueOutcome> {
  return unitOfWork(db, async (trx) => {
    const now = new Date();
    const row = await trx('signer_verifications').where({ signer_id: who.signer.id }).forUpdate().first();
    if (!row || row.method !== 'email_code') throw conflict('This signer is not verified by an e-mailed code.');
    const verification = toVerification(row);
    const lock = lockOf(verification, now);
    if (lock) return { outcome: 'locked', ...lock };
    const nextAt = verification.codeSentAt && new Date(verification.codeSentAt.getTime() + EMAIL_CODE_EVERY_MS);
    if (nextAt && nextAt > now) return { outcome: 'too_soon', retryAt: nextAt };
    const code = String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
    const expiresAt = new Date(now.getTime() + EMAIL_CODE_MS);
    await trx('signer_verifications')
      .where({ signer_id: who.signer.id })
      .update({ code_hash: hashVerificationCode(key, who.signer.id, code), code_sent_at: now, code_expires_at: expiresAt, code_used_at: null });
    const mailKey = `verification-code:${who.signer.id}:${now.getTime()}`;
    await auditStep(trx, who, 'verification_code_sent', client, { method: 'email_code', email: who.signer.email });
    await countOwedMail(trx, who.accountId, mailKey);
    return { outcome: 'issued', code, mailKey, sentAt: now, expiresAt };
  });
}

/**
 * E-mails the sender of each lock not told yet, then notes it: the api right after the locking try
 * (`signerId`), the sweeper for locks that began a minute ago or more, which a process that died after
 * the commit left untold. The e-mail is keyed by the lock's start, so telling twice sends it once.
 */
export async function tellSendersOfLocks(
  { db, mail, config }: { db: Db; mail: MailTransport; config: Pick<Config, 'MAIL_FROM'> },
  select: { signerId: string } | { olderThanMs: number; limit: number },
): Promise<number> {
  const locks = await db('signer_verifications as v')
    .join('signers as s', 's.id', 'v.signer_id')
    .join('signing_requests as r', 'r.id', 's.signing_request_id')
    .join('accounts as a', 'a.id', 'r.account_id')
    .whereNotNull('v.locked_until')
    .whereNotNull('v.locked_at')
    .where((untold) => untold.whereNull('v.notified_lock_at').orWhereRaw('v.notified_lock_at <> v.locked_at'))
    .modify((builder) => {
      if ('signerId' in select) builder.where('v.signer_id', select.signerId);
      else builder.where('v.locked_at', '<', new Date(Date.now() - select.olderThanMs)).limit(select.limit);
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
  for (const lock of locks) {
    const lockedAt: Date = lock.locked_at;
    await mail.send({
      idempotencyKey: `verification-locked:${lock.signer_id}:${lockedAt.toISOString()}`,
      to: lock.owner_email,
      toName: lock.owner_name ?? undefined,
      ...mailSender(config),
      ...verificationLockedMail({
        ownerName: lock.owner_name ?? lock.owner_email,
        title: lock.title,
        signer: { name: lock.name, email: lock.email },
        lockedUntil: lock.locked_until,
        wrongTries: lock.wrong_tries,
        untilSenderActs: outOfTries(lock.wrong_tries, lock.wrong_tries_allowed),
      }),
    });
    await db('signer_verifications').where({ signer_id: lock.signer_id, locked_at: lockedAt }).update({ notified_lock_at: lockedAt });
  }
  return locks.length;
}
