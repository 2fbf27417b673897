import type { Knex } from 'knex';

// A signing request sends a packet of documents (1 to REQUEST_MAX_DOCUMENTS), each sealed on its own.
// Requests made before keep their one document as the first of the packet; signing_requests keeps
// document_id, original_sha256 and sealed_sha256 as those of the first document, which the API has
// always shown. Fields name their document in signers.fields (documentId; absent = the first).
export async function up(knex: Knex) {
  await knex.schema.createTable('signing_request_documents', (table) => {
    table.text('signing_request_id').notNullable().references('signing_requests.id').onDelete('CASCADE');
    table.integer('position').notNullable().comment('1-based: the order in which signers see the documents');
    // Documents are deleted for good only with their account, whose requests go with it.
    table.text('document_id').notNullable().references('documents.id').onDelete('CASCADE');
    table.text('original_sha256').notNullable().comment('hash of the document when the request was made');
    table.text('sealed_sha256').comment('hash of its sealed PDF once the request completed');
    table.primary(['signing_request_id', 'position']);
    table.unique(['signing_request_id', 'document_id'], { indexName: 'signing_request_documents_document_unique' });
    table.index(['document_id'], 'signing_request_documents_document_index');
  });
  await knex.raw(
    `insert into signing_request_documents (signing_request_id, position, document_id, original_sha256, sealed_sha256)
     select id, 1, document_id, original_sha256, sealed_sha256 from signing_requests`,
  );

  await knex.schema.alterTable('sealed_documents', (table) => {
    table.text('document_id').comment('which document of the request this sealed PDF is');
  });
  await knex.raw('update sealed_documents s set document_id = r.document_id from signing_requests r where r.id = s.signing_request_id');
  await knex.schema.alterTable('sealed_documents', (table) => {
    table.dropPrimary();
    table.dropNullable('document_id');
    table.primary(['signing_request_id', 'document_id']);
  });
}

export async function down(knex: Knex) {
  await knex.raw(`delete from sealed_documents s using signing_requests r where r.id = s.signing_request_id and s.document_id <> r.document_id`);
  await knex.schema.alterTable('sealed_documents', (table) => {
    table.dropPrimary();
    table.primary(['signing_request_id']);
    table.dropColumn('document_id');
  });
  await knex.schema.dropTable('signing_request_documents');
}
