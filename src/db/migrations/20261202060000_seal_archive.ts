import type { Knex } from 'knex';

// Seals that outlive their certificates (src/signingRequests/archive.ts). Each sealed PDF notes its
// PAdES level, the certificate that sealed it, and when its newest timestamp must be renewed; a renewal
// replaces the file, and the hash of the copy it replaces is kept, so that a copy handed out before
// still verifies as one Signet sealed. Every certificate ever sealed with is kept too, so that a file
// sealed before a rotation and changed since reads modified_after_seal, not sealed_by_other.
export async function up(knex: Knex) {
  await knex.schema.alterTable('sealed_documents', (table) => {
    table.text('seal_level').comment('B-B, B-T, B-LT or B-LTA; null: sealed before levels were noted (B-B)');
    table.text('seal_certificate_sha256').comment("hex SHA-256 of the seal certificate's DER");
    table
      .timestamp('archive_renew_after', { useTz: true, precision: 3 })
      .comment("B-LTA: when the newest document timestamp's authority certificate or an algorithm it rests on comes within the renewal margin of its end");
    table
      .specificType('archive_algorithms', 'text[]')
      .comment('B-LTA: what the newest document timestamp rests on (sha256, rsa-2048): due at once when one of them weakens');
    table.integer('archive_renewals').notNullable().defaultTo(0);
    table.timestamp('archive_renewed_at', { useTz: true, precision: 3 }).comment('when its archive was last renewed');
    table.index(['archive_renew_after'], 'sealed_documents_archive_renew_after');
  });
  await knex.schema.createTable('sealed_document_versions', (table) => {
    table.text('sha256').notNullable().comment('a sealed PDF handed out before a renewal replaced it');
    table.text('signing_request_id').notNullable();
    table.text('document_id').notNullable();
    table.timestamp('replaced_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.primary(['sha256', 'signing_request_id', 'document_id']);
    table.foreign(['signing_request_id', 'document_id']).references(['signing_request_id', 'document_id']).inTable('sealed_documents').onDelete('CASCADE');
  });
  await knex.schema.createTable('seal_certificates', (table) => {
    table.text('sha256').primary().comment("hex SHA-256 of a certificate's DER that sealed a document here");
    table.text('subject').notNullable();
    table.timestamp('first_used_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('seal_certificates');
  await knex.schema.dropTable('sealed_document_versions');
  await knex.schema.alterTable('sealed_documents', (table) => {
    table.dropIndex(['archive_renew_after'], 'sealed_documents_archive_renew_after');
    table.dropColumn('archive_renewed_at');
    table.dropColumn('archive_algorithms');
    table.dropColumn('archive_renewals');
    table.dropColumn('archive_renew_after');
    table.dropColumn('seal_certificate_sha256');
    table.dropColumn('seal_level');
  });
}
