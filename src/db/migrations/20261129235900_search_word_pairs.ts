import type { Knex } from 'knex';

// A "quoted phrase" on PostgreSQL matched search_vector with <->, which its GIN index cannot answer: the
// index holds no positions, so every row holding the phrase's words was read and checked, the floor of a
// phrase search (the benchmark's phrases, in 1–8% of 100,000 documents, had their words in a third of them).
// Each row now also keeps the pairs of words next to each other in its search_vector, in word_pairs with a
// GIN index of its own: a phrase's pairs find its candidates, and search_vector's <-> still decides. The
// pairs come from search_vector itself, so they hold exactly the adjacent positions <-> reads (its caps of
// 256 positions per word and position 16,383 included): no row that matches is missed. A pair is kept as a
// 64-bit hash of "a b" in hex: words as long as 2,047 bytes make pairs longer than a lexeme may be, and
// 16,382 pairs of them more than a tsvector holds (1 MB); a hash shared by two pairs only adds a candidate.
//
// A trigger sets word_pairs after the triggers that set search_vector (BEFORE triggers fire in name
// order, and "…_search_vector_pairs" sorts after "…_search_vector"), on the changes that set it. As in
// 20261126155300, without a long lock: the column is added empty, existing rows filled in batches of
// their own transactions, the index built CONCURRENTLY; each step can run again after a failure.
export const config = { transaction: false };

const BATCH = 1000;
const TABLES = [
  // the columns whose change sets search_vector (documents_search_vector, signing_requests_search_vector;
  // a request's documents set it with an UPDATE of search_vector itself)
  { table: 'documents', columns: 'file_name, body_text, body_text_in_vector' },
  { table: 'signing_requests', columns: 'title, message, signer_text, search_vector' },
];

export async function up(knex: Knex) {
  await knex.raw(`
    create or replace function signet_word_pairs(words tsvector) returns tsvector
    language sql immutable parallel safe
    as $$
      with at as (select w.lexeme, p.position from unnest(words) w, unnest(w.positions) p(position))
      select coalesce(array_to_tsvector(array_agg(distinct to_hex(hashtextextended(a.lexeme || ' ' || b.lexeme, 0)))), ''::tsvector)
        from at a join at b on b.position = a.position + 1
    $$`);
  // The pairs a phrase needs, as a tsquery: the phrase's words are read by to_tsvector, as a row's are, so
  // each pair is one that word_pairs holds for a row the phrase matches. Null for a phrase of one word.
  await knex.raw(`
    create or replace function signet_phrase_pairs(phrase text) returns tsquery
    language sql immutable parallel safe
    as $$
      select string_agg(p.lexeme, ' & ')::tsquery
        from unnest(signet_word_pairs(to_tsvector('simple'::regconfig, signet_search_words(phrase)))) p
    $$`);
  await knex.raw(`
    create or replace function signet_search_vector_pairs() returns trigger language plpgsql as $$
    begin
      new.word_pairs := signet_word_pairs(new.search_vector);
      return new;
    end $$`);
  for (const { table, columns } of TABLES) {
    await knex.raw(`alter table ${table} add column if not exists word_pairs tsvector`);
    await knex.raw(
      `comment on column ${table}.word_pairs is 'the pairs of words next to each other in search_vector, each a hash of "a b" (set by a trigger): finds a phrase''s candidates'`,
    );
    await knex.raw(`do $$ begin
      alter table ${table} alter column word_pairs set compression lz4;
    exception when feature_not_supported then null;
    end $$`);
    await knex.raw(`drop trigger if exists ${table}_search_vector_pairs on ${table}`);
    await knex.raw(`
      create trigger ${table}_search_vector_pairs before insert or update of ${columns} on ${table}
      for each row execute function signet_search_vector_pairs()`);
    for (let last = ''; ;) {
      const ids: string[] = await knex(table).where('id', '>', last).orderBy('id').limit(BATCH).pluck('id');
      if (ids.length === 0) break;
      await knex.raw(`update ${table} set word_pairs = signet_word_pairs(search_vector) where id = any(?) and word_pairs is null`, [ids]);
      last = ids[ids.length - 1];
    }
    // An index left invalid by an interrupted CREATE INDEX CONCURRENTLY is dropped and built again.
    const index = `${table}_word_pairs_index`;
    const { rows } = await knex.raw('select indisvalid as valid from pg_index where indexrelid = to_regclass(?)', [index]);
    if (rows.length > 0 && !rows[0].valid) await knex.raw(`drop index concurrently ${index}`);
    await knex.raw(`create index concurrently if not exists ${index} on ${table} using gin (word_pairs)`);
  }
}

export async function down(knex: Knex) {
  for (const { table } of TABLES) {
    await knex.raw(`drop index concurrently if exists ${table}_word_pairs_index`);
    await knex.raw(`drop trigger if exists ${table}_search_vector_pairs on ${table}`);
    await knex.raw(`alter table ${table} drop column if exists word_pairs`);
  }
  await knex.raw('drop function if exists signet_search_vector_pairs()');
  await knex.raw('drop function if exists signet_phrase_pairs(text)');
  await knex.raw('drop function if exists signet_word_pairs(tsvector)');
}
