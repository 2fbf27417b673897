import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.createTable('accounts', (table) => {
    table.text('id').primary().comment('acct_… TypeID');
    table.text('email').notNullable().comment('account owner e-mail, shown to signers as the sender');
    table.text('name').comment('display name of the sender; falls back to the e-mail');
    table.text('plan').notNullable().defaultTo('free').comment('free | pro | business (quotas, rate limits, webhooks)');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table accounts add constraint accounts_plan_check check (plan in ('free', 'pro', 'business'))`);

  await knex.schema.createTable('api_keys', (table) => {
    table.text('id').primary().comment('key_… TypeID');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    table.text('name').notNullable().defaultTo('default').comment('owner-chosen label');
    table.text('prefix').notNullable().comment('non-secret start of the key, used to look it up and to show it');
    table.text('key_hash').notNullable().comment('hex SHA-256 of the whole key; the key itself is never stored');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('last_used_at', { useTz: true, precision: 3 }).comment('updated at most once a minute');
    table.timestamp('revoked_at', { useTz: true, precision: 3 }).comment('set once; a revoked key never works again');
    table.unique(['prefix'], { indexName: 'api_keys_prefix_unique' });
    table.index(['account_id'], 'api_keys_account_id_index');
  });

  // Shared counters for rate-limiter-flexible's RateLimiterPostgres, so several api processes agree.
  await knex.schema.createTable('rate_limits', (table) => {
    table.string('key', 255).primary().comment('<operation>:<account id>');
    table.integer('points').notNullable().defaultTo(0).comment('requests counted in the current window');
    table.bigInteger('expire').comment('epoch milliseconds at which the window ends');
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('rate_limits');
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('accounts');
}
