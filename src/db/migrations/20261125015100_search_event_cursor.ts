import type { Knex } from 'knex';

// The search indexer followed the events by marking each one it had indexed (events.indexed_at): an
// update of every event, for which PostgreSQL writes a new row version with an entry in each of the
// table's six indices. Now each event carries the id of the transaction that wrote it (xid), and the
// indexer keeps one cursor per Elasticsearch index prefix over (xid, id) (src/search/eventCursor.ts).
export async function up(knex: Knex) {
  // Events from before this stay null, out of every cursor's reach, except those the old indexer had
  // not reached yet: they get this transaction's id, and the first cursor starts below them.
  await knex.raw('alter table events add column xid xid8');
  await knex.raw('alter table events alter column xid set default pg_current_xact_id()');
  await knex.raw('update events set xid = pg_current_xact_id() where indexed_at is null');
  await knex.raw('create index events_xid_index on events (xid, id)');
  await knex.raw('drop index events_unindexed_index');
  await knex.schema.alterTable('events', (table) => {
    table.dropColumn('indexed_at');
  });
  await knex.schema.createTable('search_event_cursors', (table) => {
    table.text('prefix').primary().comment('the Elasticsearch index prefix this cursor feeds');
    table.specificType('xid', 'xid8').notNullable();
    table.text('event_id').notNullable().comment('the last event indexed within xid');
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('search_event_cursors');
  await knex.schema.alterTable('events', (table) => {
    table.timestamp('indexed_at', { useTz: true, precision: 3 });
  });
  // Events a cursor may not have reached stay unmarked: indexed again, which is harmless.
  await knex('events')
    .whereNull('xid')
    .update({ indexed_at: knex.ref('created_at') });
  await knex.raw('create index events_unindexed_index on events (created_at, id) where indexed_at is null');
  await knex.raw('drop index events_xid_index');
  await knex.raw('alter table events drop column xid');
}
