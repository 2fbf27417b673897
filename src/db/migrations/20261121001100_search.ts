import type { Knex } from 'knex';

// Full-text search on PostgreSQL (the embedded default; Elasticsearch answers the same API when configured)
// and the indexes the dashboard's aggregations read.
export async function up(knex: Knex) {
  // ASCII punctuation separates words, exactly as the query parser (src/search/text.ts) splits them, so that
  // "contract.pdf" and "ada@example.com" are found by "contract" and "ada" on both backends.
  await knex.raw(`
    create function signet_search_words(value text) returns text
    language sql immutable parallel safe
    as $$ select regexp_replace(coalesce(value, ''), '[[:space:][:punct:]]+', ' ', 'g') $$`);

  await knex.schema.alterTable('documents', (table) => {
    table.text('body_text').comment('text extracted from the PDF at upload (capped); empty for scanned PDFs');
  });
  await knex.raw(`
    alter table documents add column search_vector tsvector generated always as (
      setweight(to_tsvector('simple'::regconfig, signet_search_words(file_name)), 'A') ||
      setweight(to_tsvector('simple'::regconfig, signet_search_words(body_text)), 'D')
    ) stored`);
  await knex.raw('create index documents_search_index on documents using gin (search_vector)');

  await knex.schema.alterTable('signing_requests', (table) => {
    table.text('signer_text').notNullable().defaultTo('').comment('names and e-mails of the signers, for search');
    table.index(['account_id', 'created_at'], 'signing_requests_account_created_index');
    table.index(['account_id', 'completed_at'], 'signing_requests_account_completed_index');
  });
  await knex.raw(`
    update signing_requests r set signer_text = coalesce(
      (select string_agg(s.name || ' ' || s.email, ' ' order by s."order") from signers s where s.signing_request_id = r.id), '')`);
  await knex.raw(`
    alter table signing_requests add column search_vector tsvector generated always as (
      setweight(to_tsvector('simple'::regconfig, signet_search_words(title)), 'A') ||
      setweight(to_tsvector('simple'::regconfig, signet_search_words(signer_text)), 'B') ||
      setweight(to_tsvector('simple'::regconfig, signet_search_words(message)), 'C')
    ) stored`);
  await knex.raw('create index signing_requests_search_index on signing_requests using gin (search_vector)');

  // The activity feed filtered by type, newest first.
  await knex.raw('create index events_account_type_created_index on events (account_id, type, created_at desc, id desc)');
}

export async function down(knex: Knex) {
  await knex.raw('drop index events_account_type_created_index');
  await knex.raw('drop index signing_requests_search_index');
  await knex.schema.alterTable('signing_requests', (table) => {
    table.dropColumn('search_vector');
    table.dropIndex([], 'signing_requests_account_completed_index');
    table.dropIndex([], 'signing_requests_account_created_index');
    table.dropColumn('signer_text');
  });
  await knex.raw('drop index documents_search_index');
  await knex.schema.alterTable('documents', (table) => {
    table.dropColumn('search_vector');
    table.dropColumn('body_text');
  });
  await knex.raw('drop function signet_search_words(text)');
}
