import type { Knex } from 'knex';

// Embedded signing: a one-time URL an API client frames in its own page, for the origins it names, and
// where a signer goes once they have acted (per embedded URL, and per request for e-mail links).
export async function up(knex: Knex) {
  await knex.schema.createTable('embedded_signing_links', (table) => {
    table.text('token_hash').primary().comment('hex SHA-256 of the one-time token of the embedded URL; the token itself is never stored');
    table.text('signer_id').notNullable().references('id').inTable('signers').onDelete('CASCADE');
    table.jsonb('allowed_origins').notNullable().comment('the origins that may frame the page: ["https://app.example.com"], lower-case, no path');
    table.text('return_url').comment('where the signer goes after acting, with ?event=…&signing_request_id=…');
    table.text('locale').comment('BCP 47 tag the page formats dates and times with');
    table
      .timestamp('expires_at', { useTz: true, precision: 3 })
      .notNullable()
      .comment('the URL opens nothing after this (at most 5 minutes after it was made)');
    table.timestamp('used_at', { useTz: true, precision: 3 }).comment('when it was opened: it opens once');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.index(['signer_id'], 'embedded_signing_links_signer_index');
  });
  await knex.schema.alterTable('signer_tokens', (table) => {
    table
      .text('embedded_link_hash')
      .references('token_hash')
      .inTable('embedded_signing_links')
      .onDelete('CASCADE')
      .comment('a session opened by this embedded URL: its page holds the token in memory, never in a link');
    table.timestamp('verified_at', { useTz: true, precision: 3 }).comment('an embedded session whose signer gave the right code through it');
  });
  await knex.schema.alterTable('signing_requests', (table) => {
    table.text('redirect_url').comment('where signers from e-mail links go after acting, with ?event=…&signing_request_id=…');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('signing_requests', (table) => table.dropColumn('redirect_url'));
  await knex.schema.alterTable('signer_tokens', (table) => {
    table.dropColumn('verified_at');
    table.dropColumn('embedded_link_hash');
  });
  await knex.schema.dropTable('embedded_signing_links');
}
