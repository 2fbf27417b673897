import type { Knex } from 'knex';

// A document's cached text tags are what the reader of its day found: a tag of a type it did not know yet was left
// out. Each cache now names the types its reader knew (src/documents/store.ts), and one that names others is read
// again; the caches kept before name none, so each is read again once.
export async function up(knex: Knex) {
  await knex.schema.alterTable('documents', (table) => {
    table.text('text_tag_types').comment('the tag types the reader that filled text_tags knew, comma-separated; null: before this was kept');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('documents', (table) => {
    table.dropColumn('text_tag_types');
  });
}
