import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.createTable('documents', (table) => {
    table.text('id').primary().comment('doc_… TypeID');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    table.text('file_name').notNullable();
    table.bigInteger('file_size').notNullable().comment('declared size in bytes; an uploaded file must match it');
    table.text('status').notNullable().comment('awaiting_file | ready');
    table.integer('page_count').comment('set when the PDF arrives');
    table.text('sha256').comment('hex SHA-256 of the original PDF');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('deleted_at', { useTz: true, precision: 3 }).comment('soft delete: still counts against the monthly quota');
    table.index(['account_id', 'created_at', 'id'], 'documents_account_created_index');
  });
  await knex.raw(`alter table documents add constraint documents_status_check check (status in ('awaiting_file', 'ready'))`);

  await knex.schema.createTable('document_files', (table) => {
    table.text('document_id').primary().references('documents.id').onDelete('CASCADE');
    table.binary('content').notNullable().comment('the original PDF bytes, never modified');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });

  // The transactional outbox: every state change writes its event row in the same transaction.
  await knex.schema.createTable('events', (table) => {
    table.text('id').primary().comment('evt_… TypeID');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    table.text('type').notNullable().comment('e.g. document.created, signer.signed');
    table.jsonb('data').notNullable().comment('the envelope data, exactly as delivered');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('dispatched_at', { useTz: true, precision: 3 }).comment('when delivery was handed to Temporal');
    table.index(['account_id', 'created_at', 'id'], 'events_account_created_index');
  });
  await knex.raw('create index events_undispatched_index on events (created_at) where dispatched_at is null');
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('events');
  await knex.schema.dropTable('document_files');
  await knex.schema.dropTable('documents');
}
