import type { Knex } from 'knex';

// A template holds a packet of documents (1 to REQUEST_MAX_DOCUMENTS), as a signing request does, each
// with its own copy of its PDF. Templates made before keep their one PDF as the first document;
// templates keeps source_document_id, page_count, page_sizes and sha256 as those of the first document,
// which the API has always shown. Fields name their document in templates.fields (document: its 1-based
// position; absent = the first).
export async function up(knex: Knex) {
  await knex.schema.createTable('template_documents', (table) => {
    table.text('template_id').notNullable().references('templates.id').onDelete('CASCADE');
    table.integer('position').notNullable().comment('1-based: the order in which signers see the documents');
    // Documents are deleted for good only with their account, whose templates go with it.
    table.text('source_document_id').comment('the document whose PDF was copied, by which fields name it; for reference only');
    table.text('file_name').notNullable().comment('the source document’s file name when it was copied');
    table.integer('page_count').notNullable();
    table.jsonb('page_sizes').notNullable().comment('[width, height] of each page in PDF points');
    table.text('sha256').notNullable().comment('hex SHA-256 of the copy');
    table.binary('content').notNullable().comment('the template’s own copy of the PDF (its text tags taken out)');
    table.primary(['template_id', 'position']);
    table.unique(['template_id', 'source_document_id'], { indexName: 'template_documents_source_unique' });
  });
  await knex.raw(
    `insert into template_documents (template_id, position, source_document_id, file_name, page_count, page_sizes, sha256, content)
     select t.id, 1, t.source_document_id, coalesce(d.file_name, t.name || '.pdf'), t.page_count, t.page_sizes, t.sha256, f.content
     from templates t join template_files f on f.template_id = t.id left join documents d on d.id = t.source_document_id`,
  );
  await knex.schema.dropTable('template_files');
}

export async function down(knex: Knex) {
  await knex.schema.createTable('template_files', (table) => {
    table.text('template_id').primary().references('templates.id').onDelete('CASCADE');
    table.binary('content').notNullable().comment('the template’s own copy of the PDF, never modified');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`insert into template_files (template_id, content) select template_id, content from template_documents where position = 1`);
  await knex.schema.dropTable('template_documents');
}
