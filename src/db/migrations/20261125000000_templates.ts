import type { Knex } from 'knex';

// Templates: a reusable PDF with roles and each role's fields. A template keeps its own copy of the PDF,
// so deleting the document it was made from does not break it.
export async function up(knex: Knex) {
  await knex.schema.createTable('templates', (table) => {
    table.text('id').primary().comment('tpl_… TypeID');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    table.text('name').notNullable();
    table.text('description');
    table.text('source_document_id').references('documents.id').onDelete('SET NULL').comment('the document whose PDF was copied; for reference only');
    table.integer('page_count').notNullable().comment('pages of the PDF');
    table.jsonb('page_sizes').notNullable().comment('[width, height] of each page in PDF points');
    table.text('sha256').notNullable().comment('hex SHA-256 of the PDF');
    table.jsonb('roles').notNullable().comment('[{name, order}]: who signs, in signing order when sequential');
    table
      .jsonb('fields')
      .notNullable()
      .comment('[{role, page, x, y, width, height, type, required, label}]: PDF points from the bottom-left corner of a 1-based page');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('deleted_at', { useTz: true, precision: 3 }).comment('soft delete: no longer listed nor counted against the plan’s templates');
    table.index(['account_id', 'id'], 'templates_account_index');
  });
  // Found by name in search (PostgreSQL backend), split into words as documents' names are.
  await knex.raw(
    `alter table templates add column search_vector tsvector generated always as (to_tsvector('simple'::regconfig, signet_search_words(name))) stored`,
  );
  await knex.raw('create index templates_search_index on templates using gin (search_vector)');

  await knex.schema.createTable('template_files', (table) => {
    table.text('template_id').primary().references('templates.id').onDelete('CASCADE');
    table.binary('content').notNullable().comment('the template’s own copy of the PDF, never modified');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('template_files');
  await knex.schema.dropTable('templates');
}
