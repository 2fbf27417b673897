import type { Knex } from 'knex';

// The Idempotency-Key of a POST under /api/v1 (src/api/middleware/idempotency.ts): one row per account
// and key, claimed by the first request that carries it, holding its answer for 24 hours once it is done.
export async function up(knex: Knex) {
  await knex.schema.createTable('idempotency_keys', (table) => {
    table.text('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE');
    table.text('key').notNullable().comment('the Idempotency-Key header, 1–255 printable ASCII characters');
    table.text('method').notNullable().comment('the method of the request that claimed the key');
    table.text('path').notNullable().comment('its path, e.g. /api/v1/signatures');
    table.text('body_hash').comment('SHA-256 (hex) of its body, multipart part by part; null until its body was read in full');
    table.text('holder').notNullable().comment('a random token of the request that holds the key: only it stores or releases the answer');
    table
      .timestamp('locked_until', { useTz: true, precision: 3 })
      .comment('while in progress: the holder’s lease, extended while it runs; past it, a retry may take the key over');
    table.integer('status').comment('the stored answer’s HTTP status; null while in progress');
    table.jsonb('response_headers').comment('the stored answer’s headers that a replay repeats (Content-Type, Location)');
    table
      .text('response_body')
      .comment(
        'the stored answer’s body as sent, AES-256-GCM encrypted (iv.tag.ciphertext) with a key derived from the webhook secret key, the account and the key',
      );
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().comment('when the key was claimed; ids derived from the key carry this time');
    table.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable().comment('24 hours after the claim: past it, the key is free again');
    table.primary(['account_id', 'key'], { constraintName: 'idempotency_keys_pkey' });
    table.index(['expires_at'], 'idempotency_keys_expires_at');
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('idempotency_keys');
}
