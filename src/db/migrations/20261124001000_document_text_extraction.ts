import type { Knex } from 'knex';

// The text of an uploaded PDF is extracted by the worker after the upload commits: until then body_text
// is null, and the worker finds such documents through this index.
export async function up(knex: Knex) {
  await knex.raw(
    `comment on column documents.body_text is 'text of the PDF for search (capped), extracted by the worker after upload; null until then; empty for scanned PDFs'`,
  );
  await knex.raw(`create index documents_awaiting_text_index on documents (updated_at) where status = 'ready' and body_text is null and deleted_at is null`);
}

export async function down(knex: Knex) {
  await knex.raw('drop index documents_awaiting_text_index');
  await knex.raw(`comment on column documents.body_text is 'text extracted from the PDF at upload (capped); empty for scanned PDFs'`);
}
