import { expect } from 'chai';
import type { Knex } from 'knex';
import { migrationsWhere, scratchDatabaseMigratedBy } from '../support/scratchDatabase';
import { accountRow, documentRow, insertRequestRows } from '../support/factories';
import { lockOf } from '../../src/signingRequests/verification';
import { findSignerVerification } from '../../src/signingRequests/verificationStore';

const MIGRATION = '20261201224000_signer_verification_escalation';
const MINUTE = 60_000;

// Migration 20261201224000 on a database of its own (a fresh PGlite, or a scratch PostgreSQL database):
// signers verified before it keep their wrong tries so far (the audit trail's, at most twenty), a lock
// under way keeps its end, a signer past twenty waits for the sender, and it goes down again.
describe(`migration ${MIGRATION}: wrong codes count over the request's life`, function () {
  this.timeout(120_000);
  let knex: Knex;
  scratchDatabaseMigratedBy(
    'signer-verification-escalation',
    migrationsWhere((name) => name < MIGRATION),
    (opened) => (knex = opened),
  );

  it('counts each signer’s failed steps, keeps a lock under way, makes one past twenty wait for the sender, and goes down again', async () => {
    await knex('accounts').insert(accountRow());
    await knex('documents').insert(documentRow('doc_1', 'acct_1', 'lease.pdf', null));
    await insertRequestRows(knex, { id: 'sr_1', accountId: 'acct_1', documentIds: ['doc_1'] });
    const signers = ['sgn_fresh', 'sgn_slipped', 'sgn_locked', 'sgn_guessed'];
    await knex('signers').insert(signers.map((id, index) => ({ id, signing_request_id: 'sr_1', name: id, email: `${id}@example.com`, order: index + 1 })));
    const lockedUntil = new Date(Date.now() + 10 * MINUTE);
    await knex('signer_verifications').insert([
      { signer_id: 'sgn_fresh', method: 'access_code', code_hash: 'a'.repeat(64) },
      { signer_id: 'sgn_slipped', method: 'access_code', code_hash: 'a'.repeat(64), failed_tries: 2 },
      { signer_id: 'sgn_locked', method: 'email_code', failed_tries: 0, locked_until: lockedUntil, lock_notified_until: lockedUntil },
      { signer_id: 'sgn_guessed', method: 'access_code', code_hash: 'a'.repeat(64), failed_tries: 3 },
    ]);
    const failed = (signerId: string, times: number) =>
      Array.from({ length: times }, () => ({ signing_request_id: 'sr_1', signer_id: signerId, action: 'verification_failed', data: JSON.stringify({}) }));
    await knex('audit_trail').insert([...failed('sgn_slipped', 2), ...failed('sgn_locked', 5), ...failed('sgn_guessed', 23)]);

    await knex.migrate.latest({ migrationSource: migrationsWhere((name) => name <= MIGRATION) });

    const now = new Date();
    const after = Object.fromEntries(await Promise.all(signers.map(async (id) => [id, (await findSignerVerification(knex, id))!] as const)));
    expect(signers.map((id) => [after[id].wrongTries, after[id].wrongTriesAllowed])).to.deep.equal([
      [0, 20],
      [2, 20],
      [5, 20],
      [20, 20],
    ]);
    expect(signers.map((id) => lockOf(after[id], now)?.untilSenderActs ?? null)).to.deep.equal([null, null, false, true]);
    expect(after.sgn_locked.lockedUntil?.toISOString()).to.equal(lockedUntil.toISOString());
    expect(after.sgn_locked.lockedAt?.toISOString()).to.equal(new Date(lockedUntil.getTime() - 15 * MINUTE).toISOString());
    const request = await knex('signing_requests').where({ id: 'sr_1' }).first('expires_at');
    expect(after.sgn_guessed.lockedUntil?.toISOString()).to.equal(request.expires_at.toISOString());
    const told = await knex('signer_verifications')
      .whereIn('signer_id', ['sgn_locked', 'sgn_guessed'])
      .orderBy('signer_id')
      .select('signer_id', 'locked_at', 'notified_lock_at');
    // The lock under way was told; the new wait for the sender is not yet (the sweeper will).
    expect(told.map((row) => [row.signer_id, row.notified_lock_at?.getTime() === row.locked_at.getTime()])).to.deep.equal([
      ['sgn_guessed', false],
      ['sgn_locked', true],
    ]);

    await knex.migrate.down({ migrationSource: migrationsWhere((name) => name <= MIGRATION) });
    const before = await knex('signer_verifications').orderBy('signer_id').select('signer_id', 'failed_tries', 'locked_until', 'lock_notified_until');
    expect(before.map((row) => [row.signer_id, row.failed_tries])).to.deep.equal([
      ['sgn_fresh', 0],
      ['sgn_guessed', 0],
      ['sgn_locked', 0],
      ['sgn_slipped', 2],
    ]);
    const locked = before.find((row) => row.signer_id === 'sgn_locked')!;
    expect(locked.lock_notified_until.toISOString()).to.equal(lockedUntil.toISOString());
  });
});
