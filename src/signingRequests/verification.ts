import crypto from 'node:crypto';
import type { Db } from '../db';
import { unitOfWork } from '../db/unitOfWork';
import type { EventLog } from '../events/service';
import { conflict } from '../errors';
import { mailSender, type MailTransport } from '../mail';
import { countOwedMail } from '../mail/allowance';
import { verificationLockedMail } from '../mail/templates';
import type { Config } from '../config';
import type { ClientInfo } from '../domain/signingRequests';
import { eventDocument, recordAuditStep } from './store';
import { hashVerificationCode } from './tokens';
import {
  findUntoldLocks,
  incrementWrongTries,
  lockSigner,
  lockSignerVerification,
  markLockTold,
  markSignerVerified,
  raiseTriesAllowed,
  storeEmailCode,
  type SignerVerification,
} from './verificationStore';

// The signer portal reads a signer's verification here, with the rest of verification.

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
  const counted = await incrementWrongTries(trx, signerId, now);
  if (counted === undefined) throw conflict('This signer has no try left now.');
  return counted;
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
    const locked = await lockSignerVerification(trx, who.signer.id);
    if (!locked) return { outcome: 'verified' };
    const { verification } = locked;
    const lock = lockOf(verification, now);
    if (lock) return { outcome: 'locked', ...lock, justLocked: false };
    // An e-mailed code works once, for ten minutes; the hash is computed whether or not there is one to match.
    const usable = verification.method === 'access_code' || (verification.codeUsedAt === null && (verification.codeExpiresAt ?? now) > now);
    const given = Buffer.from(hashVerificationCode(key, who.signer.id, code), 'hex');
    const stored = Buffer.from(locked.codeHash ?? '', 'hex');
    const matches = stored.length === given.length && crypto.timingSafeEqual(stored, given);
    const method = verification.method;
    if (matches && usable) {
      await markSignerVerified(trx, who.signer.id, { verifiedAt: verification.verifiedAt ?? now, codeUsedAt: method === 'email_code' ? now : undefined });
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
    await lockSigner(trx, who.signer.id, { lockedAt: now, lockedUntil });
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
    const released = await raiseTriesAllowed(trx, who.requestId, who.signerIds, WRONG_TRIES_PER_LOCK);
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
    const verification = (await lockSignerVerification(trx, who.signer.id))?.verification;
    if (!verification || verification.method !== 'email_code') throw conflict('This signer is not verified by an e-mailed code.');
    const lock = lockOf(verification, now);
    if (lock) return { outcome: 'locked', ...lock };
    const nextAt = verification.codeSentAt && new Date(verification.codeSentAt.getTime() + EMAIL_CODE_EVERY_MS);
    if (nextAt && nextAt > now) return { outcome: 'too_soon', retryAt: nextAt };
    const code = String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
    const expiresAt = new Date(now.getTime() + EMAIL_CODE_MS);
    await storeEmailCode(trx, who.signer.id, { codeHash: hashVerificationCode(key, who.signer.id, code), sentAt: now, expiresAt });
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
  const locks = await findUntoldLocks(db, 'signerId' in select ? select : { lockedBefore: new Date(Date.now() - select.olderThanMs), limit: select.limit });
  for (const lock of locks) {
    const lockedAt = lock.locked_at;
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
    await markLockTold(db, lock.signer_id, lockedAt);
  }
  return locks.length;
}
