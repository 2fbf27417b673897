import type { Knex } from 'knex';

// A signer who must prove who they are before their page shows anything: by an access code the sender
// told them, or by a code e-mailed to them. One row per such signer; codes are kept only as HMACs.
export async function up(knex: Knex) {
  await knex.schema.createTable('signer_verifications', (table) => {
    table.text('signer_id').primary().references('id').inTable('signers').onDelete('CASCADE');
    table.text('method').notNullable().comment('access_code | email_code');
    table.text('code_hash').comment('HMAC-SHA256 (key derived from the signing-token secret) of the access code, or of the e-mail code sent last');
    table.timestamp('code_sent_at', { useTz: true, precision: 3 }).comment('e-mail code: when the last one was sent (a new one at most once a minute)');
    table.timestamp('code_expires_at', { useTz: true, precision: 3 }).comment('e-mail code: the last one works until then');
    table.timestamp('code_used_at', { useTz: true, precision: 3 }).comment('e-mail code: the last one was used then, and works no more');
    table.integer('failed_tries').notNullable().defaultTo(0).comment('wrong tries since the last success or lock');
    table.timestamp('locked_until', { useTz: true, precision: 3 }).comment('after five wrong tries: no try until then');
    table.timestamp('lock_notified_until', { useTz: true, precision: 3 }).comment('the locked_until of the last lock the sender was e-mailed about');
    table.timestamp('verified_at', { useTz: true, precision: 3 }).comment('the first right try');
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('signer_verifications');
}
