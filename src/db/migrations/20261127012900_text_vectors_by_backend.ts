import type { Knex } from 'knex';

// With Elasticsearch as the search backend nothing reads the words PostgreSQL computes from a document's
// text (search_vector and its GIN index, about a third of the CPU a text costs). A flag now says whether
// search_vector holds them: the worker stores a text with it false under Elasticsearch, and the PostgreSQL
// backend's indexer sets it true again for texts stored so (vectorizeStoredTexts in src/documents/service.ts).
// A request's vector holds the text of its documents whose flag is true, and follows the flag.
//
// A generated column's expression cannot be altered, and adding the column again would rewrite the table,
// every text's words included, under a lock. So search_vector becomes a column a trigger keeps, as
// signing_requests' did in 20261126151000: dropping the expression keeps the stored values, which stay
// right since the flag is true for every existing row. The partial index is built CONCURRENTLY, hence no
// transaction around the migration; each step can run again after a failure.
export const config = { transaction: false };

const INDEX = 'documents_text_not_in_vector_index';
/** What each request's documents give of their text, as in 20261126151000. */
const REQUEST_TEXT_CHARS = 200_000;

/** The words of a document's name (A) and of its text (D), as 20261121001100 weighed them. */
const nameWords = (column: string) => `setweight(to_tsvector('simple'::regconfig, signet_search_words(${column})), 'A')`;
const textWords = (column: string) => `setweight(to_tsvector('simple'::regconfig, signet_search_words(${column})), 'D')`;

/** signing_request_documents_text of 20261126151000, over the documents that `which` lets in. */
const requestDocumentsText = (which: string) => `
  create or replace function signing_request_documents_text(request_id text) returns text
  language sql stable parallel safe
  as $$
    select string_agg(left(d.body_text, share.chars), ' ' order by rd.position)
      from signing_request_documents rd
      join documents d on d.id = rd.document_id
     cross join (select (${REQUEST_TEXT_CHARS} / greatest(count(*), 1))::int as chars from signing_request_documents where signing_request_id = request_id) share
     where rd.signing_request_id = request_id${which}
  $$`;

/** The trigger of 20261126151000 that recomputes the requests holding a document, on the changes `when` names. */
const documentsInRequestsTrigger = (columns: string, when: string) => `
  create trigger documents_in_requests_search_vector after update of ${columns} on documents
  for each row when (${when})
  execute function documents_in_requests_search_vector()`;

export async function up(knex: Knex) {
  await knex.transaction(async (trx) => {
    await trx.raw('alter table documents add column if not exists body_text_in_vector boolean not null default true');
    await trx.raw(
      `comment on column documents.body_text_in_vector is 'whether search_vector holds the words of body_text (false when stored under Elasticsearch, which does not read them)'`,
    );
    await trx.raw('alter table documents alter column search_vector drop expression if exists');
    await trx.raw(
      `comment on column documents.search_vector is 'the words of file_name (A) and, when body_text_in_vector, of body_text (D), for search; set by a trigger'`,
    );
    await trx.raw(`
      create or replace function documents_search_vector() returns trigger language plpgsql as $$
      begin
        new.search_vector := ${nameWords('new.file_name')} ||
          case when new.body_text_in_vector then ${textWords('new.body_text')} else ''::tsvector end;
        return new;
      end $$`);
    await trx.raw('drop trigger if exists documents_search_vector on documents');
    await trx.raw(`
      create trigger documents_search_vector before insert or update of file_name, body_text, body_text_in_vector on documents
      for each row execute function documents_search_vector()`);

    // A request's vector holds the text its documents' vectors hold, and follows a document's flag.
    await trx.raw(requestDocumentsText(' and d.body_text_in_vector'));
    await trx.raw('drop trigger if exists documents_in_requests_search_vector on documents');
    await trx.raw(
      documentsInRequestsTrigger(
        'file_name, body_text, body_text_in_vector',
        `old.file_name is distinct from new.file_name or old.body_text_in_vector is distinct from new.body_text_in_vector
         or (new.body_text_in_vector and old.body_text is distinct from new.body_text)`,
      ),
    );
  });
  // The texts the PostgreSQL backend has to bring into search_vector: none, or every one stored under Elasticsearch.
  const { rows } = await knex.raw('select indisvalid as valid from pg_index where indexrelid = to_regclass(?)', [INDEX]);
  if (rows.length > 0 && !rows[0].valid) await knex.raw(`drop index concurrently ${INDEX}`);
  await knex.raw(`create index concurrently if not exists ${INDEX} on documents (id) where body_text_in_vector = false`);
}

export async function down(knex: Knex) {
  await knex.raw(`drop index concurrently if exists ${INDEX}`);
  await knex.transaction(async (trx) => {
    await trx.raw('drop trigger if exists documents_in_requests_search_vector on documents');
    await trx.raw(
      documentsInRequestsTrigger('file_name, body_text', 'old.file_name is distinct from new.file_name or old.body_text is distinct from new.body_text'),
    );
    await trx.raw(requestDocumentsText(''));
    // The requests holding a text stored without its words get them back, as do the documents below.
    await trx.raw(`
      update signing_requests set search_vector = signing_request_search_vector(id, title, signer_text, message)
       where id in (select rd.signing_request_id from signing_request_documents rd join documents d on d.id = rd.document_id where not d.body_text_in_vector)`);
    await trx.raw('drop trigger if exists documents_search_vector on documents');
    await trx.raw('drop function if exists documents_search_vector()');
    await trx.raw('drop index if exists documents_search_index');
    await trx.raw('alter table documents drop column search_vector');
    await trx.raw(
      `alter table documents add column search_vector tsvector generated always as (${nameWords('file_name')} || ${textWords('body_text')}) stored`,
    );
    await trx.raw('create index documents_search_index on documents using gin (search_vector)');
    await trx.raw('alter table documents drop column body_text_in_vector');
  });
}
