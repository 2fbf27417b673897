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
// them, or a 6-digit code e-mailed to them. Every try is decided in one transaction that locks the
// signer's row, so tries at once are counted one by one: the fifth wrong one locks, and none slips past.
// Codes are kept only as HMACs (tokens.ts) and compared in constant time; no code is written anywhere else.

export const MAX_WRONG_TRIES = 5;
export const LOCK_MS = 15 * 60_000;
export const EMAIL_CODE_MS = 10 * 60_000;
export const EMAIL_CODE_EVERY_MS = 60_000;

export interface SignerVerification {
  method: VerificationMethod;
  codeSentAt: Date | null;
  codeExpiresAt: Date | null;
  codeUsedAt: Date | null;
  failedTries: number;
  lockedUntil: Date | null;
  verifiedAt: Date | null;
}

const toVerification = (row: Record<string, any>): SignerVerification => ({
  method: row.method,
  codeSentAt: row.code_sent_at,
  codeExpiresAt: row.code_expires_at,
  codeUsedAt: row.code_used_at,
  failedTries: row.failed_tries,
  lockedUntil: row.locked_until,
  verifiedAt: row.verified_at,
});

/** Who tries: the signer, their request and its account, and the request's documents (which every event of a request names). */
export interface Verifying {
  accountId: string;
  requestId: string;
  signer: { id: string; name: string; email: string };
  documents: { documentId: string; fileName: string }[];
}

export interface VerificationDeps {
  db: Db;
  events: EventLog;
  /** verificationKey (tokens.ts). */
  key: Buffer;
}

export type TryOutcome =
  | { outcome: 'verified' }
  | { outcome: 'wrong'; triesLeft: number }
  | { outcome: 'locked'; lockedUntil: Date; /** this try locked it: the sender is to be told */ justLocked: boolean };

export async function findSignerVerification(db: Db, signerId: string): Promise<SignerVerification | null> {
  const row = await db('signer_verifications').where({ signer_id: signerId }).first();
  return row ? toVerification(row) : null;
}

const isLocked = (verification: SignerVerification, now: Date) => verification.lockedUntil !== null && verification.lockedUntil > now;

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

/** One try of a code. While locked, a try is refused unweighed and uncounted. */
export async function tryVerificationCode({ db, events, key }: VerificationDeps, who: Verifying, code: string, client: ClientInfo): Promise<TryOutcome> {
  return unitOfWork(db, async (trx) => {
    const now = new Date();
    const row = await trx('signer_verifications').where({ signer_id: who.signer.id }).forUpdate().first();
    if (!row) return { outcome: 'verified' };
    const verification = toVerification(row);
    if (isLocked(verification, now)) return { outcome: 'locked', lockedUntil: verification.lockedUntil!, justLocked: false };
    // An e-mailed code works once, for ten minutes; the hash is computed whether or not there is one to match.
    const usable = verification.method === 'access_code' || (verification.codeUsedAt === null && (verification.codeExpiresAt ?? now) > now);
    const given = Buffer.from(hashVerificationCode(key, who.signer.id, code), 'hex');
    const stored = Buffer.from(row.code_hash ?? '', 'hex');
    const matches = stored.length === given.length && crypto.timingSafeEqual(stored, given);
    const method = verification.method;
    if (matches && usable) {
      await trx('signer_verifications')
        .where({ signer_id: who.signer.id })
        .update({ failed_tries: 0, verified_at: verification.verifiedAt ?? now, ...(method === 'email_code' ? { code_used_at: now } : {}) });
      await auditStep(trx, who, 'verification_succeeded', client, { method });
      return { outcome: 'verified' };
    }
    const failedTries = verification.failedTries + 1;
    await auditStep(trx, who, 'verification_failed', client, { method, failedTries });
    if (failedTries < MAX_WRONG_TRIES) {
      await trx('signer_verifications').where({ signer_id: who.signer.id }).update({ failed_tries: failedTries });
      return { outcome: 'wrong', triesLeft: MAX_WRONG_TRIES - failedTries };
    }
    const lockedUntil = new Date(now.getTime() + LOCK_MS);
    await trx('signer_verifications').where({ signer_id: who.signer.id }).update({ failed_tries: 0, locked_until: lockedUntil });
    await auditStep(trx, who, 'verification_locked', client, { method, lockedUntil: lockedUntil.toISOString() });
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
        documents: who.documents.map(eventDocument),
      },
      `${who.signer.id}:verification_locked:${lockedUntil.toISOString()}`,
    );
    return { outcome: 'locked', lockedUntil, justLocked: true };
  });
}

export type IssueOutcome =
  | { outcome: 'issued'; code: string; mailKey: string; sentAt: Date; expiresAt: Date }
  | { outcome: 'too_soon'; retryAt: Date }
  | { outcome: 'locked'; lockedUntil: Date };

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
    if (isLocked(verification, now)) return { outcome: 'locked', lockedUntil: verification.lockedUntil! };
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
 * (`signerId`), the sweeper for locks of a minute ago or more, which a process that died after the
 * commit left untold. The e-mail is keyed by the lock, so telling twice sends it once.
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
    .where((untold) => untold.whereNull('v.lock_notified_until').orWhereRaw('v.lock_notified_until <> v.locked_until'))
    .modify((builder) => {
      if ('signerId' in select) builder.where('v.signer_id', select.signerId);
      else builder.where('v.locked_until', '<', new Date(Date.now() + LOCK_MS - select.olderThanMs)).limit(select.limit);
    })
    .select('v.signer_id', 'v.locked_until', 's.name', 's.email', 'r.title', 'a.email as owner_email', 'a.name as owner_name');
  for (const lock of locks) {
    const lockedUntil: Date = lock.locked_until;
    await mail.send({
      idempotencyKey: `verification-locked:${lock.signer_id}:${lockedUntil.toISOString()}`,
      to: lock.owner_email,
      toName: lock.owner_name ?? undefined,
      ...mailSender(config),
      ...verificationLockedMail({
        ownerName: lock.owner_name ?? lock.owner_email,
        title: lock.title,
        signer: { name: lock.name, email: lock.email },
        lockedUntil,
      }),
    });
    await db('signer_verifications').where({ signer_id: lock.signer_id, locked_until: lockedUntil }).update({ lock_notified_until: lockedUntil });
  }
  return locks.length;
}
