import type { Knex } from 'knex';

// A request made on a document reads its PDF's text tags (pdf.js over every page) to take them out of the
// signers' copy: a document's file never changes once stored, so the tags are read once and kept here.
export async function up(knex: Knex) {
  await knex.schema.alterTable('documents', (table) => {
    table.jsonb('text_tags').comment('the text tags found in its PDF, as fields (src/pdf/textTags.ts); null until a request first reads them');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('documents', (table) => {
    table.dropColumn('text_tags');
  });
}
