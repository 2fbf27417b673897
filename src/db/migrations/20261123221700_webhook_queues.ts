import type { Knex } from 'knex';

// Each webhook's queue: its pending deliveries in the order they fall due.
export async function up(knex: Knex) {
  await knex.raw(`create index webhook_deliveries_due_index on webhook_deliveries (webhook_id, next_retry_at) where status = 'pending'`);
}

export async function down(knex: Knex) {
  await knex.raw('drop index webhook_deliveries_due_index');
}
