import type { Knex } from 'knex';

// Public verification (POST /api/v1/verify) finds a sealed PDF by its SHA-256. sealed_documents.sha256 has
// held it since the table was made (filled when each document is sealed), so there is nothing to backfill:
// only the index to look it up by.
export async function up(knex: Knex) {
  await knex.schema.alterTable('sealed_documents', (table) => {
    table.index(['sha256'], 'sealed_documents_sha256_index');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('sealed_documents', (table) => {
    table.dropIndex(['sha256'], 'sealed_documents_sha256_index');
  });
}
