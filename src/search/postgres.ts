import type { Knex } from 'knex';
import type { Db } from '../db';
import { documentStatuses } from '../documents/schema';
import { requestStatuses } from '../domain/signingRequests';
import type { SearchBackend, SearchHitRef, SearchPage } from './backend';
import { TOTAL_COUNTED_UP_TO, type SearchQuery, type SearchType } from './schema';
import type { SearchText } from './text';

const HEADLINE_OPTIONS = 'StartSel=<mark>, StopSel=</mark>, MaxFragments=2, MaxWords=18, MinWords=6, FragmentDelimiter=" … "';
/** ts_headline re-reads the text it marks: the start of a long PDF is enough for a snippet. */
const HEADLINE_CHARS = 100_000;

const lexeme = (word: string) => `'${word.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/**
 * q as a tsquery: every word and phrase (<->) must match, and the last word typed as a prefix (:*) where
 * `prefixIn` allows (the weights of names, titles, signers and messages), else whole: a PDF's text (weight
 * D) matches whole words only, as on Elasticsearch. Without `prefixIn` the prefix matches anywhere.
 */
export function toTsquery({ words, phrases, prefix }: SearchText, prefixIn = ''): string {
  const typed = (value: string) => (prefixIn ? `(${lexeme(value)}:*${prefixIn} | ${lexeme(value)})` : `${lexeme(value)}:*`);
  return [...words.map(lexeme), ...phrases.map((phrase) => `(${phrase.map(lexeme).join(' <-> ')})`), ...(prefix ? [typed(prefix)] : [])].join(' & ');
}

/** The weights of each type's search_vector where a prefix matches (a template's is its name alone, unweighted). */
const PREFIX_WEIGHTS: Record<SearchType, string> = { document: 'ABC', signing_request: 'ABC', template: '' };

/**
 * Sorted by relevance, each type ranks at most this many of its matches, the newest, and as many of the newest
 * whose name or title holds every word: ts_rank reads a match's whole tsvector, and a common word is in
 * most of an account's documents. Pages by relevance end with these candidates; sorted by date, every match.
 */
export const RANKED_UP_TO = 1000;

export const searchTables: Record<SearchType, string> = { document: 'documents', signing_request: 'signing_requests', template: 'templates' };

/** Which tables a query can match: the type asked for, and what the status and signer filters allow. */
export function typesOf(query: SearchQuery): SearchType[] {
  return (['document', 'signing_request', 'template'] as const).filter((type) => {
    if (query.type && query.type !== type) return false;
    if (type === 'template') return !query.signerEmail && !query.status;
    if (type === 'document') return !query.signerEmail && (!query.status || (documentStatuses as readonly string[]).includes(query.status));
    return !query.status || (requestStatuses as readonly string[]).includes(query.status);
  });
}

/** Which column holds the words, and the tsquery they must match; in search_vector, the phrases whose pairs of words word_pairs must hold. */
interface TextMatch {
  column: 'search_vector' | 'name_search_vector';
  tsquery: string;
  phrases?: string[][];
}

/**
 * Whether a row may hold the phrase: the GIN index of word_pairs finds the rows holding its pairs of words
 * (migration 20261129235900). The planner computes the pairs once, and drops the test when a phrase has
 * none (one word).
 */
export const mayHoldPhrase = (phrase: string[]): [string, string[]] => [
  '(signet_phrase_pairs(?) is null or word_pairs @@ signet_phrase_pairs(?))',
  [phrase.join(' '), phrase.join(' ')],
];

/** The rows of one table that the query matches (any columns still to choose). */
function matching(db: Db, accountId: string, query: SearchQuery, type: SearchType, text: TextMatch | null) {
  return db(searchTables[type])
    .where('account_id', accountId)
    .modify((builder) => {
      if (type !== 'signing_request') builder.whereNull('deleted_at');
      if (text) builder.whereRaw(`?? @@ to_tsquery('simple', ?)`, [text.column, text.tsquery]);
      for (const phrase of text?.phrases ?? []) builder.whereRaw(...mayHoldPhrase(phrase));
      if (query.status) builder.where('status', query.status);
      if (query.createdAfter) builder.where('created_at', '>=', query.createdAfter);
      if (query.createdBefore) builder.where('created_at', '<', query.createdBefore);
      if (query.signerEmail) {
        builder.whereIn('id', db('signers').select('signing_request_id').whereRaw('lower(email) = ?', [query.signerEmail.toLowerCase()]));
      }
    });
}

/** Matches in all of a type's words (search_vector), the last word typed a prefix where PREFIX_WEIGHTS says. */
function inAll(type: SearchType, text: SearchText | null | undefined): TextMatch | null {
  const tsquery = text ? toTsquery(text, PREFIX_WEIGHTS[type]) : '';
  // A template's vector is its name alone: it has no word_pairs.
  return tsquery ? { column: 'search_vector', tsquery, phrases: type === 'template' ? [] : text?.phrases } : null;
}

/** Sorted by relevance with a "quoted phrase": each type's matches are found whole, once (see hitsOf). */
const hasPhrase = (query: SearchQuery) => query.sort === 'relevance' && (query.text?.phrases.length ?? 0) > 0;
const phraseMatches = (type: SearchType) => `${type}_matches`;

/** Matches in the name or title alone: documents have a tsvector of their file name, signing requests one of their title and documents' names. */
function inName(type: SearchType, text: SearchText): TextMatch | null {
  if (type === 'document' || type === 'signing_request') return { column: 'name_search_vector', tsquery: toTsquery(text) };
  return null; // a template's words are its name
}

/**
 * A page's candidates. Sorted by relevance: the newest RANKED_UP_TO matches and the newest RANKED_UP_TO
 * matches by name or title, ranked with ts_rank (names and titles weigh most). Sorted by date: every match.
 */
function hitsOf(db: Db, accountId: string, query: SearchQuery, type: SearchType) {
  const words = inAll(type, query.text);
  const typed = db.raw('? as type', [type]);
  if (!(words && query.text && query.sort === 'relevance')) {
    return matching(db, accountId, query, type, words).select(typed, 'id', db.raw('null::real as score'), 'created_at');
  }
  const newestFirst = [
    { column: 'created_at', order: 'desc' },
    { column: 'id', order: 'desc' },
  ];
  // Each candidate carries its words from the scan that found it, to be ranked once the legs have ended:
  // ranking inside a leg could be done before its sort and limit, for every match; ranking afterwards by
  // primary key was a lookup per candidate, half of a search for a typed word at 100,000 documents.
  const newest = (text: TextMatch) =>
    matching(db, accountId, query, type, text).select('id', 'created_at', 'search_vector').orderBy(newestFirst).limit(RANKED_UP_TO);
  // PostgreSQL estimates a phrase (<->) as common as its words, so it would walk the creation-time index
  // through most of the table to find a rare phrase's newest matches: they are found whole first, each
  // noted whether its name or title holds the phrase too (phraseMatches, which searchPostgres defines, once
  // for the count too), then sorted, and only the newest read again for their words.
  const newestOf = ({ byName }: { byName: boolean }) =>
    db
      .select('newest.id', 'newest.created_at', 'ranked.search_vector')
      .from(
        db
          .select('*')
          .from(phraseMatches(type))
          .modify((builder) => byName && builder.where('in_name', true))
          .orderBy(newestFirst)
          .limit(RANKED_UP_TO)
          .as('newest'),
      )
      .join(`${searchTables[type]} as ranked`, 'ranked.id', 'newest.id');
  const byName = inName(type, query.text);
  const legs = hasPhrase(query)
    ? [newestOf({ byName: false }), ...(byName ? [newestOf({ byName: true })] : [])]
    : [newest(words), ...(byName ? [newest(byName)] : [])];
  const candidates = db.select('*').distinctOn('id').from(db.unionAll(legs, true).as('legs')).orderBy('id');
  const score = db.raw(`ts_rank(search_vector, to_tsquery('simple', ?)) as score`, [words.tsquery]);
  return db.select(typed, 'id', score, 'created_at').from(candidates.as('candidates'));
}

function afterCursor(builder: Knex.QueryBuilder, query: SearchQuery) {
  const { cursor } = query;
  if (!cursor) return;
  if (cursor.sort === 'relevance')
    builder.whereRaw('(score, created_at, id collate "C") < (?::real, ?::timestamptz, ? collate "C")', [
      cursor.value,
      new Date(cursor.createdAt).toISOString(),
      cursor.id,
    ]);
  else
    builder.whereRaw(`(created_at, id collate "C") ${cursor.sort === 'createdAt' ? '>' : '<'} (?::timestamptz, ? collate "C")`, [
      new Date(cursor.value).toISOString(),
      cursor.id,
    ]);
}

interface HitRow {
  type: SearchType;
  id: string;
  score: number | null;
  created_at: Date;
  matched?: number | string;
}

/** orderOf, for the rows of the types' pages merged (ids are ASCII: JavaScript compares them as collate "C"). */
function inOrder(query: SearchQuery) {
  const byId = (a: HitRow, b: HitRow) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const byTime = (a: HitRow, b: HitRow) => a.created_at.getTime() - b.created_at.getTime() || byId(a, b);
  if (query.sort === 'createdAt') return byTime;
  if (query.sort === 'relevance') return (a: HitRow, b: HitRow) => (b.score ?? 0) - (a.score ?? 0) || byTime(b, a);
  return (a: HitRow, b: HitRow) => byTime(b, a);
}

function orderOf(builder: Knex.QueryBuilder, query: SearchQuery) {
  // Ties sorted as on Elasticsearch (esSearch.ts): the newest first, then by id.
  if (query.sort === 'relevance') builder.orderByRaw('score desc, created_at desc, id collate "C" desc');
  else builder.orderByRaw(query.sort === 'createdAt' ? 'created_at asc, id collate "C" asc' : 'created_at desc, id collate "C" desc');
}

async function highlights(db: Db, hits: SearchHitRef[], text: SearchText) {
  const ids = (type: SearchType) => hits.filter((hit) => hit.type === type).map((hit) => hit.id);
  // ts_headline reads no weights: a PDF's text gets the last word typed as a whole word, as it matched.
  const inText = toTsquery({ ...text, words: text.prefix ? [...text.words, text.prefix] : text.words, prefix: null });
  const anywhere = toTsquery(text);
  const headline = (expression: string, as: string, tsquery = anywhere) =>
    db.raw(`ts_headline('simple', signet_search_words(${expression}), to_tsquery('simple', ?), ?) as ${as}`, [tsquery, HEADLINE_OPTIONS]);
  const [documents, requests, templates] = await Promise.all([
    db('documents')
      .whereIn('id', ids('document'))
      .select('id', headline('file_name', 'file_name'), headline(`left(body_text, ${HEADLINE_CHARS})`, 'text', inText)),
    db('signing_requests')
      .whereIn('id', ids('signing_request'))
      .select(
        'id',
        headline('title', 'title'),
        headline('message', 'message'),
        headline('signer_text', 'signers'),
        headline('signing_request_documents_names(id)', 'file_name'),
        headline(`left(signing_request_documents_text(id), ${HEADLINE_CHARS})`, 'text', inText),
      ),
    db('templates').whereIn('id', ids('template')).select('id', headline('name', 'name')),
  ]);
  const marked = new Map<string, Record<string, string>>();
  for (const row of [...documents, ...requests, ...templates]) {
    const fields = Object.entries(row).filter(([name, value]) => name !== 'id' && typeof value === 'string' && value.includes('<mark>'));
    marked.set(row.id, Object.fromEntries(fields.map(([name, value]) => [name === 'file_name' ? 'fileName' : name, value as string])));
  }
  for (const hit of hits) hit.highlight = marked.get(hit.id) ?? {};
}

/**
 * Full-text search on the tsvector columns (GIN indexes), each table keyset-paginated, the pages merged.
 * Hits are counted in another query that stops past TOTAL_COUNTED_UP_TO; with a phrase, whose matches the
 * page queries find whole anyway, by the page queries themselves.
 */
export async function searchPostgres(db: Db, accountId: string, query: SearchQuery): Promise<SearchPage> {
  const types = typesOf(query);
  if (types.length === 0) return { hits: [], hasMore: false, total: 0, totalIsExact: true };
  const countAll = async (of = types) => {
    const matches = db.unionAll(
      of.map((type) => matching(db, accountId, query, type, inAll(type, query.text)).select(db.raw('1'))),
      true,
    );
    const [{ total }] = (await db.count({ total: '*' }).from(
      db
        .select(db.raw('1'))
        .from(matches.as('hits'))
        .limit(TOTAL_COUNTED_UP_TO + 1)
        .as('counted'),
    )) as { total: number | string }[];
    return Number(total);
  };
  // Each type's page is a query of its own, run at once with the others: a search waits for its slowest
  // type, not their sum. The pages are merged in their order (inOrder) and cut to one.
  const pageOf = (type: SearchType) => {
    const page = db
      .select('*')
      .from(hitsOf(db, accountId, query, type).as('hits'))
      .modify((builder) => afterCursor(builder, query))
      .modify((builder) => orderOf(builder, query))
      .limit(query.limit + 1);
    if (!hasPhrase(query)) return page;
    // A name holding the phrase is in the row's search_vector too: the rows read for the phrase tell it
    // (for documents, a third of the search, when a name index was read for it on its own).
    const byName = inName(type, query.text!);
    const inNameToo = byName ? db.raw(`?? @@ to_tsquery('simple', ?) as in_name`, [byName.column, byName.tsquery]) : db.raw('false as in_name');
    page.withMaterialized(phraseMatches(type), matching(db, accountId, query, type, inAll(type, query.text)).select('id', 'created_at', inNameToo));
    return page.select(db.raw('(select count(*) from (select 1 from ?? limit ?) as counted) as matched', [phraseMatches(type), TOTAL_COUNTED_UP_TO + 1]));
  };
  const [pages, counted] = await Promise.all([Promise.all(types.map(pageOf)), hasPhrase(query) ? null : countAll()]);
  const rows: HitRow[] = pages
    .flat()
    .sort(inOrder(query))
    .slice(0, query.limit + 1);
  const hits: SearchHitRef[] = rows.slice(0, query.limit).map((row) => ({
    type: row.type,
    id: row.id,
    score: query.sort === 'relevance' ? row.score : null,
    sortValue: query.sort === 'relevance' ? (row.score ?? 0) : row.created_at.getTime(),
    createdAt: row.created_at.getTime(),
    highlight: {},
  }));
  if (query.text && hits.length > 0) await highlights(db, hits, query.text);
  // With a phrase, a type's page carries its count; a type with no row past the cursor is counted on its own
  // (none without a cursor).
  const phraseCount = async (type: SearchType, page: HitRow[]) => (page.length > 0 ? Number(page[0].matched) : query.cursor ? countAll([type]) : 0);
  const total = counted ?? (await Promise.all(types.map((type, i) => phraseCount(type, pages[i])))).reduce((sum, count) => sum + count, 0);
  return { hits, hasMore: rows.length > query.limit, total: Math.min(total, TOTAL_COUNTED_UP_TO), totalIsExact: total <= TOTAL_COUNTED_UP_TO };
}

/** Search without Elasticsearch: PostgreSQL keeps the tsvector columns itself (generated columns and triggers), so there is nothing to index. */
export function createPostgresSearch(db: Db): SearchBackend {
  return {
    kind: 'postgres',
    search: (accountId, query) => searchPostgres(db, accountId, query),
    index: async () => undefined,
    health: () => db.raw('select 1'),
    close: async () => undefined,
  };
}
