import type { Knex } from 'knex';

// A kept answer may hold a secret shown once (a new API key, a webhook's secret, a signing link), so it
// belongs to the API key whose request made it, not to every key of the account. Rows kept before this
// have no key: no replay is given from them (they expire within 24 hours).
export async function up(knex: Knex) {
  await knex.schema.alterTable('idempotency_keys', (table) => {
    table.text('api_key_id').comment('the API key whose request claimed the key: only it gets the kept answer; null on rows kept before this column');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('idempotency_keys', (table) => {
    table.dropColumn('api_key_id');
  });
}
