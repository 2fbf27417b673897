import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.createTable('webhooks', (table) => {
    table.text('id').primary().comment('wh_… TypeID');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    table.text('url').notNullable().comment('where deliveries are POSTed');
    table.text('description').comment('free text for the owner');
    table.specificType('events', 'text[]').notNullable().comment('subscribed event types; * = all');
    table.boolean('enabled').notNullable().defaultTo(true);
    table.text('disabled_reason').comment('why Signet disabled it: gone (410) or failing (5 days); null when the owner did');
    table.timestamp('disabled_at', { useTz: true, precision: 3 }).comment('when Signet disabled it; keys the owner e-mail');
    table.text('secret_ciphertext').notNullable().comment('AES-256-GCM of the signing secret: iv.tag.ciphertext, base64url');
    table.text('previous_secret_ciphertext').comment('the secret before the last rotation, still signing until previous_secret_expires_at');
    table.timestamp('previous_secret_expires_at', { useTz: true, precision: 3 });
    table.timestamp('failing_since', { useTz: true, precision: 3 }).comment('first failed attempt since the last success');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.index(['account_id', 'id'], 'webhooks_account_index');
  });

  // One row per (webhook, event): what was sent and where it stands. webhook.test pings have no events row.
  await knex.schema.createTable('webhook_deliveries', (table) => {
    table.text('id').primary().comment('whd_… TypeID');
    table.text('webhook_id').notNullable().references('webhooks.id').onDelete('CASCADE');
    table.text('event_id').notNullable().comment('evt_… id, the webhook-id header; identical across retries');
    table.text('event_type').notNullable();
    table.text('body').notNullable().comment('the exact JSON text sent and signed, the same on every attempt');
    table.text('status').notNullable().defaultTo('pending').comment('pending | succeeded | failed | cancelled');
    table.integer('attempts').notNullable().defaultTo(0);
    table.integer('last_status_code').comment('HTTP status of the last attempt; null when no response came');
    table.integer('last_latency_ms');
    table.text('last_response_body').comment('first 1 KB of the last response');
    table.text('last_error').comment('why the last attempt failed without a response (timeout, refused, blocked)');
    table.timestamp('next_retry_at', { useTz: true, precision: 3 }).comment('when the next attempt is due, while pending');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.unique(['webhook_id', 'event_id'], { indexName: 'webhook_deliveries_webhook_event_unique' });
    table.index(['webhook_id', 'id'], 'webhook_deliveries_webhook_index');
  });
  await knex.raw(
    `alter table webhook_deliveries add constraint webhook_deliveries_status_check check (status in ('pending', 'succeeded', 'failed', 'cancelled'))`,
  );

  // Every attempt, written before the next one is scheduled: the delivery log.
  await knex.schema.createTable('webhook_delivery_attempts', (table) => {
    table.text('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    table.integer('attempt').notNullable().comment('1, 2, …; manual redeliveries continue the count');
    table.integer('status_code').comment('null when no response came');
    table.integer('latency_ms').notNullable();
    table.text('response_body').comment('first 1 KB of the response');
    table.text('error').comment('timeout, connection refused, blocked address, …');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.primary(['delivery_id', 'attempt']);
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('webhook_delivery_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhooks');
}
