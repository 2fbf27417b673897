import type { Client } from '@elastic/elasticsearch';
import type { SearchHitRef, SearchPage } from './backend';
import { SEARCH_REQUEST_OPTIONS } from './elasticsearch';
import { aliasOf } from './esIndices';
import { typesOf } from './postgres';
import { TOTAL_COUNTED_UP_TO, type SearchQuery, type SearchType } from './schema';
import type { SearchText } from './text';

// The same weights as the tsvector columns: names and titles first, then signers, then the rest.
const FIELDS = ['fileName^3', 'title^3', 'name^3', 'signers^2', 'message', 'text'];
const boosted = FIELDS.map((field) => ({ name: field.split('^')[0], boost: Number(field.split('^')[1] ?? 1) }));
const FIELD_NAMES = boosted.map(({ name }) => name);

/** The fields whose words match the last word typed as a prefix; in a PDF's text (`text`) it matches whole. */
const PREFIXED = boosted.filter(({ name }) => name !== 'text');
// Scored as a prefix query is (constant, the field's boost): a name that starts with the word still ranks first.
const wholeInText = (word: string) => ({ constant_score: { filter: { match: { text: { query: word, operator: 'and' } } }, boost: 1 } });

/** The prefix in any field but the text (one term of the field's index_prefixes, 2–5 letters, else the words starting with it), or the whole word in the text. */
const prefixInAnyField = (prefix: string) => ({
  bool: { should: [...PREFIXED.map(({ name, boost }) => ({ prefix: { [name]: { value: prefix, boost } } })), wholeInText(prefix)], minimum_should_match: 1 },
});

/** The same words for the highlighter, which does not look into index_prefixes: a wildcard expands them per hit. */
const wordsStartingWith = (prefix: string) => ({
  bool: {
    should: [...PREFIXED.map(({ name }) => ({ wildcard: { [name]: { value: `${prefix.replace(/[\\*?]/g, '\\$&')}*` } } })), wholeInText(prefix)],
    minimum_should_match: 1,
  },
});

/** Every word and phrase must match in some field; the last word typed matches as a prefix. */
function textClauses({ words, phrases, prefix }: SearchText, prefixMatch: (prefix: string) => object) {
  return [
    ...words.map((word) => ({ multi_match: { query: word, fields: FIELDS, operator: 'and' } })),
    ...phrases.map((phrase) => ({ multi_match: { query: phrase.join(' '), fields: FIELDS, type: 'phrase' } })),
    ...(prefix ? [prefixMatch(prefix)] : []),
  ];
}

function filters(accountId: string, query: SearchQuery) {
  return [
    { term: { accountId } },
    ...(query.status ? [{ term: { status: query.status } }] : []),
    ...(query.createdAfter || query.createdBefore
      ? [{ range: { createdAt: { gte: query.createdAfter?.toISOString(), lt: query.createdBefore?.toISOString() } } }]
      : []),
    ...(query.signerEmail ? [{ nested: { path: 'signerStates', query: { term: { 'signerStates.email': query.signerEmail.toLowerCase() } } } }] : []),
  ];
}

const highlight = {
  pre_tags: ['<mark>'],
  post_tags: ['</mark>'],
  fields: Object.fromEntries(
    FIELD_NAMES.map((name) => [name, ['message', 'text'].includes(name) ? { fragment_size: 120, number_of_fragments: 2 } : { number_of_fragments: 0 }]),
  ),
};

export async function searchElasticsearch(client: Client, prefix: string, accountId: string, query: SearchQuery): Promise<SearchPage> {
  const types = typesOf(query);
  if (types.length === 0) return { hits: [], hasMore: false, total: 0, totalIsExact: true };
  const relevance = query.sort === 'relevance';
  const order = query.sort === 'createdAt' ? 'asc' : 'desc';
  const response = await client.search(
    {
      index: types.map((type) => aliasOf(prefix, type)),
      query: { bool: { must: query.text ? textClauses(query.text, prefixInAnyField) : [], filter: filters(accountId, query) } },
      sort: relevance ? [{ _score: 'desc' }, { id: 'desc' }] : [{ createdAt: order }, { id: order }],
      search_after: query.cursor ? [query.cursor.value, query.cursor.id] : undefined,
      size: query.limit + 1,
      track_total_hits: TOTAL_COUNTED_UP_TO,
      _source: false,
      highlight: query.text ? { ...highlight, highlight_query: { bool: { must: textClauses(query.text, wordsStartingWith) } } } : undefined,
    } as never,
    SEARCH_REQUEST_OPTIONS,
  );
  const aliasTypes = new Map(types.map((type) => [aliasOf(prefix, type), type]));
  const typeOfIndex = (index: string): SearchType => [...aliasTypes].find(([alias]) => index.startsWith(`${alias}-`) || index === alias)?.[1] ?? types[0];
  const hits: SearchHitRef[] = response.hits.hits.slice(0, query.limit).map((hit) => ({
    type: typeOfIndex(hit._index),
    id: hit._id!,
    score: relevance ? (hit._score ?? 0) : null,
    sortValue: Number(hit.sort![0]),
    highlight: Object.fromEntries(Object.entries(hit.highlight ?? {}).map(([field, fragments]) => [field, fragments.join(' … ')])),
  }));
  const total = typeof response.hits.total === 'number' ? { value: response.hits.total, relation: 'eq' } : response.hits.total;
  return { hits, hasMore: response.hits.hits.length > query.limit, total: total?.value ?? 0, totalIsExact: total?.relation !== 'gte' };
}
