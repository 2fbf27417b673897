import type { Knex } from 'knex';

// Search finds a signing request by the names and the text of all its documents. A generated column
// reads its own row only, so signing_requests.search_vector becomes a column that triggers keep:
// computed when a request is made or its title, message or signers change, again when documents join
// it (signing_request_documents), and again when one of its documents is renamed or its text arrives
// (the worker extracts it after upload, often after the request was made). Searches read one GIN
// index as before; the join is paid on those writes, not per row searched.
//
// The names weigh as much as the title (A, as a document's own name does), the text least (D). Each of
// n documents gives its first REQUEST_TEXT_CHARS / n characters of text: the vector stays within
// PostgreSQL's 1 MB for a tsvector with 20 documents of 200,000 characters, and every document has its
// share. Elasticsearch's copy of a request holds the same (src/search/esDocuments.ts).
//
// The existing rows are filled in batches of their own transactions, so that no long transaction holds
// every request; each step can run again after a failure.
export const config = { transaction: false };

const REQUEST_TEXT_CHARS = 200_000;
const BATCH = 1000;

export async function up(knex: Knex) {
  await knex.transaction(async (trx) => {
    // The words of a request's documents, also what search marks in a hit (src/search/postgres.ts).
    await trx.raw(`
      create or replace function signing_request_documents_names(request_id text) returns text
      language sql stable parallel safe
      as $$
        select string_agg(d.file_name, ' ' order by rd.position)
          from signing_request_documents rd join documents d on d.id = rd.document_id
         where rd.signing_request_id = request_id
      $$`);
    await trx.raw(`
      create or replace function signing_request_documents_text(request_id text) returns text
      language sql stable parallel safe
      as $$
        select string_agg(left(d.body_text, share.chars), ' ' order by rd.position)
          from signing_request_documents rd
          join documents d on d.id = rd.document_id
         cross join (select (${REQUEST_TEXT_CHARS} / greatest(count(*), 1))::int as chars from signing_request_documents where signing_request_id = request_id) share
         where rd.signing_request_id = request_id
      $$`);
    await trx.raw(`
      create or replace function signing_request_search_vector(request_id text, title text, signer_text text, message text) returns tsvector
      language sql stable parallel safe
      as $$
        select setweight(to_tsvector('simple'::regconfig, signet_search_words(title)), 'A') ||
               setweight(to_tsvector('simple'::regconfig, signet_search_words(signer_text)), 'B') ||
               setweight(to_tsvector('simple'::regconfig, signet_search_words(message)), 'C') ||
               setweight(to_tsvector('simple'::regconfig, signet_search_words(signing_request_documents_names(request_id))), 'A') ||
               setweight(to_tsvector('simple'::regconfig, signet_search_words(signing_request_documents_text(request_id))), 'D')
      $$`);
    await trx.raw('alter table signing_requests alter column search_vector drop expression if exists');
    await trx.raw(
      `comment on column signing_requests.search_vector is 'the words of the title (A), signers (B), message (C) and of its documents: names (A) and text (D); kept by triggers'`,
    );

    await trx.raw(`
      create or replace function signing_requests_search_vector() returns trigger language plpgsql as $$
      begin
        new.search_vector := signing_request_search_vector(new.id, new.title, new.signer_text, new.message);
        return new;
      end $$`);
    await trx.raw('drop trigger if exists signing_requests_search_vector on signing_requests');
    await trx.raw(`
      create trigger signing_requests_search_vector before insert or update of title, message, signer_text on signing_requests
      for each row execute function signing_requests_search_vector()`);

    // A request's documents are inserted after it, in one statement. Their rows are locked first: text
    // stored meanwhile by the worker is then either read here or stored after this commits, when the
    // documents trigger below sees this request.
    await trx.raw(`
      create or replace function signing_request_documents_added() returns trigger language plpgsql as $$
      begin
        perform 1 from documents where id in (select document_id from added) order by id for share;
        update signing_requests r set search_vector = signing_request_search_vector(r.id, r.title, r.signer_text, r.message)
         where r.id in (select signing_request_id from added);
        return null;
      end $$`);
    await trx.raw('drop trigger if exists signing_request_documents_added on signing_request_documents');
    await trx.raw(`
      create trigger signing_request_documents_added after insert on signing_request_documents
      referencing new table as added for each statement execute function signing_request_documents_added()`);

    await trx.raw(`
      create or replace function documents_in_requests_search_vector() returns trigger language plpgsql as $$
      begin
        update signing_requests r set search_vector = signing_request_search_vector(r.id, r.title, r.signer_text, r.message)
         where r.id in (select signing_request_id from signing_request_documents where document_id = new.id);
        return null;
      end $$`);
    await trx.raw('drop trigger if exists documents_in_requests_search_vector on documents');
    await trx.raw(`
      create trigger documents_in_requests_search_vector after update of file_name, body_text on documents
      for each row when (old.file_name is distinct from new.file_name or old.body_text is distinct from new.body_text)
      execute function documents_in_requests_search_vector()`);
  });

  // Requests made from now on have it from the triggers; the rest, a batch at a time in primary-key order.
  for (let last = ''; ;) {
    const ids: string[] = await knex('signing_requests').where('id', '>', last).orderBy('id').limit(BATCH).pluck('id');
    if (ids.length === 0) break;
    await knex.raw('update signing_requests set search_vector = signing_request_search_vector(id, title, signer_text, message) where id = any(?)', [ids]);
    last = ids[ids.length - 1];
  }
}

export async function down(knex: Knex) {
  await knex.transaction(async (trx) => {
    await trx.raw('drop trigger if exists documents_in_requests_search_vector on documents');
    await trx.raw('drop function if exists documents_in_requests_search_vector()');
    await trx.raw('drop trigger if exists signing_request_documents_added on signing_request_documents');
    await trx.raw('drop function if exists signing_request_documents_added()');
    await trx.raw('drop trigger if exists signing_requests_search_vector on signing_requests');
    await trx.raw('drop function if exists signing_requests_search_vector()');
    await trx.raw('drop function if exists signing_request_search_vector(text, text, text, text)');
    await trx.raw('drop function if exists signing_request_documents_text(text)');
    await trx.raw('drop function if exists signing_request_documents_names(text)');
    await trx.raw('drop index if exists signing_requests_search_index');
    await trx.raw('alter table signing_requests drop column search_vector');
    await trx.raw(`
      alter table signing_requests add column search_vector tsvector generated always as (
        setweight(to_tsvector('simple'::regconfig, signet_search_words(title)), 'A') ||
        setweight(to_tsvector('simple'::regconfig, signet_search_words(signer_text)), 'B') ||
        setweight(to_tsvector('simple'::regconfig, signet_search_words(message)), 'C')
      ) stored`);
    await trx.raw('create index signing_requests_search_index on signing_requests using gin (search_vector)');
  });
}
