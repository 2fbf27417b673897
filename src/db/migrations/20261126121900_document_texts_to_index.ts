import type { Knex } from 'knex';

// The worker stores a document's text in PostgreSQL, then writes it to the search index: a worker killed
// in between left the text stored (so never extracted again) and out of the index. Now the indexer notes
// each document it claims here before extracting it, and strikes it off once the index has its text; the
// next indexer takes up the texts still noted (src/search/indexer.ts). A table of its own, not a column of
// documents: an update of a documents row makes PostgreSQL compute its search_vector again.
export async function up(knex: Knex) {
  await knex.schema.createTable('document_texts_to_index', (table) => {
    table.text('document_id').primary().references('documents.id').onDelete('CASCADE').comment('a document claimed for its text, not yet in the index with it');
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('document_texts_to_index');
}
