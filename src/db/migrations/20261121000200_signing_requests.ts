import type { Knex } from 'knex';

export async function up(knex: Knex) {
  await knex.schema.createTable('signing_requests', (table) => {
    table.text('id').primary().comment('sr_… TypeID; also the Temporal workflow id');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    table.text('document_id').notNullable().references('documents.id').comment('the document being signed');
    table.text('title').notNullable();
    table.text('message').comment('note from the sender, shown to signers');
    table.text('signing_order').notNullable().comment('parallel | sequential');
    table.text('status').notNullable().defaultTo('pending').comment('pending | completed | declined | cancelled | expired');
    table.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    table.integer('reminder_every_days').notNullable().comment('0 = no reminders');
    table.text('original_sha256').notNullable().comment('hash of the document when the request was made');
    table.text('sealed_sha256').comment('hash of the sealed PDF once completed');
    table.text('cancel_reason');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('completed_at', { useTz: true, precision: 3 }).comment('when it reached a final status');
    table.index(['account_id', 'id'], 'signing_requests_account_index');
    table.index(['document_id'], 'signing_requests_document_index');
  });

  await knex.schema.createTable('signers', (table) => {
    table.text('id').primary().comment('sgr_… TypeID');
    table.text('signing_request_id').notNullable().references('signing_requests.id').onDelete('CASCADE');
    table.text('name').notNullable();
    table.text('email').notNullable();
    table.integer('order').notNullable().comment('1-based position; the turn order when sequential');
    table.text('status').notNullable().defaultTo('pending').comment('pending | notified | viewed | signed | declined');
    table.jsonb('fields').comment('where this signer signs: [{page, x, y, width, height, type}]; null = signature page');
    table.timestamp('notified_at', { useTz: true, precision: 3 });
    table.timestamp('viewed_at', { useTz: true, precision: 3 });
    table.timestamp('signed_at', { useTz: true, precision: 3 });
    table.timestamp('declined_at', { useTz: true, precision: 3 });
    table.text('decline_reason');
    table.jsonb('signature').comment('{type: typed|drawn, value}: the typed name or a PNG data URL');
    table.text('ip_address').comment('of the sign or decline call');
    table.text('user_agent').comment('of the sign or decline call');
    table.unique(['signing_request_id', 'email'], { indexName: 'signers_request_email_unique' });
  });

  await knex.schema.createTable('signer_tokens', (table) => {
    table.text('token_hash').primary().comment('hex SHA-256 of the 256-bit link token; the token itself is never stored');
    table.text('signer_id').notNullable().references('signers.id').onDelete('CASCADE');
    table.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.index(['signer_id'], 'signer_tokens_signer_index');
  });

  await knex.schema.createTable('sealed_documents', (table) => {
    table.text('signing_request_id').primary().references('signing_requests.id').onDelete('CASCADE');
    table.binary('content').notNullable().comment('the sealed PDF');
    table.text('sha256').notNullable();
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('audit_trail', (table) => {
    table.bigIncrements('id');
    table.text('signing_request_id').notNullable().references('signing_requests.id').onDelete('CASCADE');
    table.text('signer_id').comment('the signer concerned, if any');
    table.text('action').notNullable().comment('created, invitation_sent, reminder_sent, viewed, signed, declined, cancelled, expired, sealed, completed');
    table.text('actor').comment('who did it: a signer e-mail, the account, or signet');
    table.text('ip_address');
    table.text('user_agent');
    table.jsonb('data');
    table.text('idempotency_key').comment('keeps a retried activity from writing the step twice');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.unique(['idempotency_key'], { indexName: 'audit_trail_idempotency_key_unique' });
    table.index(['signing_request_id', 'id'], 'audit_trail_request_index');
  });

  // Events written by retried activities carry the key of the step that wrote them: written once.
  await knex.schema.alterTable('events', (table) => {
    table.text('idempotency_key').comment('set by activities so a retry never writes a second event');
    table.unique(['idempotency_key'], { indexName: 'events_idempotency_key_unique' });
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('events', (table) => {
    table.dropUnique(['idempotency_key'], 'events_idempotency_key_unique');
    table.dropColumn('idempotency_key');
  });
  await knex.schema.dropTable('audit_trail');
  await knex.schema.dropTable('sealed_documents');
  await knex.schema.dropTable('signer_tokens');
  await knex.schema.dropTable('signers');
  await knex.schema.dropTable('signing_requests');
}
