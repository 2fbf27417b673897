import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.alterTable('documents', (table) => {
    table
      .jsonb('page_sizes')
      .comment('[width, height] of each page in PDF points, set with page_count; null for files stored before it, read from the file when needed');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('documents', (table) => table.dropColumn('page_sizes'));
}
