import type { Knex } from 'knex';

// API keys and accounts are cached in each api process (src/apiKeys/cache.ts). Whoever changes them
// (an api process, the CLI, a psql session) makes PostgreSQL notify every listening process at commit,
// and each drops what it holds. Statement-level: one notification per statement, however many rows.
export async function up(knex: Knex) {
  await knex.raw(`
    create function notify_auth_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('signet_auth_changed', '');
      return null;
    end $$`);
  // last_used_at is written once a minute per key and changes nothing a cache holds.
  await knex.raw(`create trigger api_keys_auth_changed after update of revoked_at, key_hash, prefix, account_id or delete
    on api_keys for each statement execute function notify_auth_changed()`);
  await knex.raw(`create trigger accounts_auth_changed after update or delete
    on accounts for each statement execute function notify_auth_changed()`);
}

export async function down(knex: Knex) {
  await knex.raw('drop trigger accounts_auth_changed on accounts');
  await knex.raw('drop trigger api_keys_auth_changed on api_keys');
  await knex.raw('drop function notify_auth_changed()');
}
