import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.alterTable('signing_requests', (table) => {
    table.timestamp('workflow_started_at', { useTz: true, precision: 3 }).comment('when its workflow was started; null = the sweeper starts it');
  });
  await knex('signing_requests').update({ workflow_started_at: knex.ref('created_at') });
  // The sweeper's question: requests committed but never started (the api died between the two).
  await knex.raw('create index signing_requests_unstarted_index on signing_requests (created_at) where workflow_started_at is null');
}

export async function down(knex: Knex) {
  await knex.raw('drop index signing_requests_unstarted_index');
  await knex.schema.alterTable('signing_requests', (table) => table.dropColumn('workflow_started_at'));
}
