import type { Knex } from 'knex';

// Relevance on PostgreSQL ranks a bounded set of candidates (src/search/postgres.ts), among them the newest
// documents whose file name holds every word of the query. search_vector cannot find those quickly (its GIN
// index knows words, not their weights), so the file name gets a small tsvector and a GIN index of its own.
//
// Without a long lock on a large table: the column is added empty (no table rewrite, unlike a generated
// column), a trigger fills it for every insert and rename from then on, the existing rows are filled in
// batches of their own transactions, and the index is built CONCURRENTLY. Hence no transaction around the
// migration; each step can run again after a failure.
export const config = { transaction: false };

const BATCH = 1000;
const INDEX = 'documents_name_search_index';

export async function up(knex: Knex) {
  await knex.raw('alter table documents add column if not exists name_search_vector tsvector');
  await knex.raw(
    `comment on column documents.name_search_vector is 'the words of file_name, for search (set by a trigger): finds the documents ranked for relevance by name'`,
  );
  await knex.raw(`
    create or replace function documents_name_search_vector() returns trigger language plpgsql as $$
    begin
      new.name_search_vector := to_tsvector('simple'::regconfig, signet_search_words(new.file_name));
      return new;
    end $$`);
  await knex.raw('drop trigger if exists documents_name_search_vector on documents');
  await knex.raw(
    'create trigger documents_name_search_vector before insert or update of file_name on documents for each row execute function documents_name_search_vector()',
  );
  // Rows written from now on have it from the trigger; the rest, a batch at a time in primary-key order.
  for (let last = ''; ;) {
    const ids: string[] = await knex('documents').where('id', '>', last).orderBy('id').limit(BATCH).pluck('id');
    if (ids.length === 0) break;
    await knex.raw(
      `update documents set name_search_vector = to_tsvector('simple'::regconfig, signet_search_words(file_name)) where id = any(?) and name_search_vector is null`,
      [ids],
    );
    last = ids[ids.length - 1];
  }
  // An index left invalid by an interrupted CREATE INDEX CONCURRENTLY is dropped and built again.
  const { rows } = await knex.raw('select indisvalid as valid from pg_index where indexrelid = to_regclass(?)', [INDEX]);
  if (rows.length > 0 && !rows[0].valid) await knex.raw(`drop index concurrently ${INDEX}`);
  await knex.raw(`create index concurrently if not exists ${INDEX} on documents using gin (name_search_vector)`);
}

export async function down(knex: Knex) {
  await knex.raw(`drop index concurrently if exists ${INDEX}`);
  await knex.raw('drop trigger if exists documents_name_search_vector on documents');
  await knex.raw('drop function if exists documents_name_search_vector()');
  await knex.raw('alter table documents drop column if exists name_search_vector');
}
