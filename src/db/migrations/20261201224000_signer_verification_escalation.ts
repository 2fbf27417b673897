import type { Knex } from 'knex';

// Wrong codes count over the request's whole life: every fifth locks the signer for longer (15 minutes,
// 1 hour, 4 hours) and the twentieth until the sender reminds them. The numbers are this migration's own,
// as the code had them when it was written. A signer's wrong tries so far are the failed steps of the
// audit trail, never more than twenty; one who had twenty already waits for the sender from now on.
export async function up(knex: Knex) {
  await knex.schema.alterTable('signer_verifications', (table) => {
    table.renameColumn('failed_tries', 'wrong_tries');
    table.renameColumn('lock_notified_until', 'notified_lock_at');
  });
  await knex.schema.alterTable('signer_verifications', (table) => {
    table
      .integer('wrong_tries_allowed')
      .notNullable()
      .defaultTo(20)
      .comment('wrong tries allowed in all: twenty, and five more each time the sender reminds a signer who reached them');
    table.timestamp('locked_at', { useTz: true, precision: 3 }).comment('when the last lock began');
    table.check('wrong_tries <= wrong_tries_allowed', [], 'signer_verifications_wrong_tries_allowed');
  });
  await knex.raw(
    `comment on column signer_verifications.wrong_tries is 'the wrong tries of the request''s whole life, any method; neither a lock running out nor a right code resets it'`,
  );
  await knex.raw(
    `comment on column signer_verifications.locked_until is 'no try until then: 15 minutes, 1 hour, 4 hours after each fifth wrong try; the request''s expiry once wrong_tries reaches wrong_tries_allowed'`,
  );
  await knex.raw(`comment on column signer_verifications.notified_lock_at is 'the locked_at of the last lock the sender was e-mailed about'`);
  await knex.raw(`
    update signer_verifications v
       set wrong_tries = least(failed.count, 20)
      from (select signer_id, count(*)::int as count from audit_trail where action = 'verification_failed' group by signer_id) failed
     where failed.signer_id = v.signer_id`);
  // Every lock so far lasted 15 minutes.
  await knex.raw(`
    update signer_verifications
       set locked_at = locked_until - interval '15 minutes',
           notified_lock_at = notified_lock_at - interval '15 minutes'
     where locked_until is not null`);
  await knex.raw(`
    update signer_verifications v
       set locked_at = now(), locked_until = r.expires_at
      from signers s
      join signing_requests r on r.id = s.signing_request_id
     where s.id = v.signer_id and v.wrong_tries >= v.wrong_tries_allowed`);
}

export async function down(knex: Knex) {
  await knex.raw(`update signer_verifications set wrong_tries = wrong_tries % 5, notified_lock_at = notified_lock_at + (locked_until - locked_at)`);
  await knex.schema.alterTable('signer_verifications', (table) => {
    table.dropChecks('signer_verifications_wrong_tries_allowed');
    table.dropColumn('locked_at');
    table.dropColumn('wrong_tries_allowed');
  });
  await knex.schema.alterTable('signer_verifications', (table) => {
    table.renameColumn('wrong_tries', 'failed_tries');
    table.renameColumn('notified_lock_at', 'lock_notified_until');
  });
  await knex.raw(`comment on column signer_verifications.failed_tries is 'wrong tries since the last success or lock'`);
  await knex.raw(`comment on column signer_verifications.locked_until is 'after five wrong tries: no try until then'`);
  await knex.raw(`comment on column signer_verifications.lock_notified_until is 'the locked_until of the last lock the sender was e-mailed about'`);
}
