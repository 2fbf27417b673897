import type { Knex } from 'knex';

// A bulk send is committed, then its workflow started: an api that died between the two left a job that never sent
// a row. The time its workflow was started lets the sweeper find and start those (src/bulkSends/workflow.ts); the jobs
// made before this were started by the api that made them, or are started once more, which is harmless.
export async function up(knex: Knex) {
  await knex.schema.alterTable('bulk_sends', (table) => {
    table.timestamp('workflow_started_at', { useTz: true, precision: 3 }).comment('when its workflow was started; null: not yet');
  });
  await knex('bulk_sends')
    .whereNotNull('finished_at')
    .update({ workflow_started_at: knex.ref('created_at') });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('bulk_sends', (table) => {
    table.dropColumn('workflow_started_at');
  });
}
