import type { Knex } from 'knex';

// The events table is the queue that keeps Elasticsearch in step: an event not yet indexed has indexed_at
// null, and the search indexer (a Temporal workflow calling an activity) works through them in order.
export async function up(knex: Knex) {
  await knex.schema.alterTable('events', (table) => {
    table.timestamp('indexed_at', { useTz: true, precision: 3 }).comment('when the search index took in this event; null = still to do');
  });
  // Events from before search existed are covered by the first index build, which reads the tables themselves.
  await knex('events').update({ indexed_at: knex.ref('created_at') });
  await knex.raw('create index events_unindexed_index on events (created_at, id) where indexed_at is null');
}

export async function down(knex: Knex) {
  await knex.raw('drop index events_unindexed_index');
  await knex.schema.alterTable('events', (table) => {
    table.dropColumn('indexed_at');
  });
}
