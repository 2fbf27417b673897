import type { Knex } from 'knex';

// Bulk send (src/bulkSends): one template to many people in one job. The job and each of its rows, as given; a row
// becomes one signing request (its id derived from the job's and the row's, so that a retry makes none twice) or
// records why it could not.
export async function up(knex: Knex) {
  await knex.schema.createTable('bulk_sends', (table) => {
    table.text('id').primary().comment('bulk_… TypeID');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    table.text('template_id').notNullable().comment('the template each row is sent from (kept when the template is deleted later)');
    table.text('status').notNullable().defaultTo('sending').comment('sending | sent (every row has its outcome) | cancelled');
    table.integer('row_count').notNullable();
    table.boolean('cancel_sent').notNullable().defaultTo(false).comment('a cancel asked for the requests already sent to be cancelled too');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('finished_at', { useTz: true, precision: 3 });
    table.index(['account_id', 'id'], 'bulk_sends_account_index');
  });
  await knex.schema.createTable('bulk_send_rows', (table) => {
    table.text('bulk_send_id').notNullable().references('bulk_sends.id').onDelete('CASCADE');
    table.integer('row').notNullable().comment('0-based position in the job');
    table.jsonb('input').notNullable().comment('the row as given: recipients by role, prefill, title, message, expiresInDays');
    table.text('external_id').comment("the caller's own id for the row");
    table.text('status').notNullable().defaultTo('queued').comment('queued | sent | failed | cancelled');
    table.text('signing_request_id').comment('once sent');
    table.text('error').comment('once failed: why');
    table.primary(['bulk_send_id', 'row']);
    table.index(['bulk_send_id', 'status', 'row'], 'bulk_send_rows_status_index');
  });
  await knex.schema.alterTable('signing_requests', (table) => {
    table.text('bulk_send_id').comment('the bulk send it was made by, if any');
    table.integer('bulk_row');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('signing_requests', (table) => {
    table.dropColumn('bulk_row');
    table.dropColumn('bulk_send_id');
  });
  await knex.schema.dropTable('bulk_send_rows');
  await knex.schema.dropTable('bulk_sends');
}
