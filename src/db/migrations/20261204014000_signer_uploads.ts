import type { Knex } from 'knex';

// Files signers upload for their image and attachment fields (src/signingRequests/uploads.ts): checked as
// uploads are, kept with their SHA-256, drawn into or carried with the sealed PDF, and downloadable by the owner.
export async function up(knex: Knex) {
  await knex.schema.createTable('signer_uploads', (table) => {
    table.text('id').primary().comment('upl_… TypeID');
    table.text('signer_id').notNullable().references('signers.id').onDelete('CASCADE');
    table.text('signing_request_id').notNullable().references('signing_requests.id').onDelete('CASCADE');
    table.text('file_name').notNullable().comment('as the signer named it, made storable');
    table.text('content_type').notNullable().comment('application/pdf, image/png or image/jpeg, from the bytes, never the client');
    table.integer('size').notNullable();
    table.text('sha256').notNullable();
    table.binary('content').notNullable();
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.index(['signer_id'], 'signer_uploads_signer_index');
    table.index(['signing_request_id'], 'signer_uploads_request_index');
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('signer_uploads');
}
