import type { Knex } from 'knex';

// Scoped keys that expire. Existing keys get null scopes (all of them) and no expiry: they keep working as before.
export async function up(knex: Knex) {
  await knex.schema.alterTable('api_keys', (table) => {
    table.jsonb('scopes').comment('["documents:read", …]: what the key may do; null = every scope');
    table.timestamp('expires_at', { useTz: true, precision: 3 }).comment('the key stops working then; null = never');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('api_keys', (table) => {
    table.dropColumn('expires_at');
    table.dropColumn('scopes');
  });
}
