import type { Knex } from 'knex';

// Relevance on PostgreSQL ranks, among its candidates, the newest requests whose title or documents'
// names hold every word (src/search/postgres.ts). Those words are weighted A in search_vector, which
// its GIN index cannot tell apart, and since search_vector holds the documents' text (migration
// 20261126151000) PostgreSQL walked the requests by creation time, reading each one's whole vector,
// to find the few so named. As documents have (20261126122500), requests get a small tsvector of their
// title and documents' names with a GIN index of its own, kept by the same triggers.
//
// Without a long lock: the column is added empty, the triggers fill it from then on, the existing rows
// are filled in batches of their own transactions, and the index is built CONCURRENTLY. Hence no
// transaction around the migration; each step can run again after a failure.
export const config = { transaction: false };

const BATCH = 1000;
const INDEX = 'signing_requests_name_search_index';

/** The trigger functions of 20261126151000, which set both vectors from now on (`both`) or search_vector alone. */
async function replaceTriggerFunctions(knex: Knex, both: boolean) {
  const vectors = (row: string) =>
    `search_vector = signing_request_search_vector(${row}.id, ${row}.title, ${row}.signer_text, ${row}.message)` +
    (both ? `, name_search_vector = signing_request_name_search_vector(${row}.id, ${row}.title)` : '');
  await knex.raw(`
    create or replace function signing_requests_search_vector() returns trigger language plpgsql as $$
    begin
      new.search_vector := signing_request_search_vector(new.id, new.title, new.signer_text, new.message);
      ${both ? 'new.name_search_vector := signing_request_name_search_vector(new.id, new.title);' : ''}
      return new;
    end $$`);
  await knex.raw(`
    create or replace function signing_request_documents_added() returns trigger language plpgsql as $$
    begin
      perform 1 from documents where id in (select document_id from added) order by id for share;
      update signing_requests r set ${vectors('r')} where r.id in (select signing_request_id from added);
      return null;
    end $$`);
  await knex.raw(`
    create or replace function documents_in_requests_search_vector() returns trigger language plpgsql as $$
    begin
      update signing_requests r set ${vectors('r')}
       where r.id in (select signing_request_id from signing_request_documents where document_id = new.id);
      return null;
    end $$`);
}

export async function up(knex: Knex) {
  await knex.raw('alter table signing_requests add column if not exists name_search_vector tsvector');
  await knex.raw(
    `comment on column signing_requests.name_search_vector is 'the words of the title and of its documents'' names, for search (set by triggers): finds the requests ranked for relevance by name'`,
  );
  await knex.raw(`
    create or replace function signing_request_name_search_vector(request_id text, title text) returns tsvector
    language sql stable parallel safe
    as $$
      select to_tsvector('simple'::regconfig, signet_search_words(title)) ||
             to_tsvector('simple'::regconfig, signet_search_words(signing_request_documents_names(request_id)))
    $$`);
  await replaceTriggerFunctions(knex, true);
  // Rows written from now on have it from the triggers; the rest, a batch at a time in primary-key order.
  for (let last = ''; ;) {
    const ids: string[] = await knex('signing_requests').where('id', '>', last).orderBy('id').limit(BATCH).pluck('id');
    if (ids.length === 0) break;
    await knex.raw(
      'update signing_requests set name_search_vector = signing_request_name_search_vector(id, title) where id = any(?) and name_search_vector is null',
      [ids],
    );
    last = ids[ids.length - 1];
  }
  // An index left invalid by an interrupted CREATE INDEX CONCURRENTLY is dropped and built again.
  const { rows } = await knex.raw('select indisvalid as valid from pg_index where indexrelid = to_regclass(?)', [INDEX]);
  if (rows.length > 0 && !rows[0].valid) await knex.raw(`drop index concurrently ${INDEX}`);
  await knex.raw(`create index concurrently if not exists ${INDEX} on signing_requests using gin (name_search_vector)`);
}

export async function down(knex: Knex) {
  await knex.raw(`drop index concurrently if exists ${INDEX}`);
  await replaceTriggerFunctions(knex, false);
  await knex.raw('drop function if exists signing_request_name_search_vector(text, text)');
  await knex.raw('alter table signing_requests drop column if exists name_search_vector');
}
