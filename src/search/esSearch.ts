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

/** Every word and phrase must match in some field; the last word typed matches as a prefix. */
function textClauses({ words, phrases, prefix }: SearchText) {
  return [
    ...words.map((word) => ({ multi_match: { query: word, fields: FIELDS, operator: 'and' } })),
    ...phrases.map((phrase) => ({ multi_match: { query: phrase.join(' '), fields: FIELDS, type: 'phrase' } })),
    ...(prefix ? [prefixInAnyField(prefix)] : []),
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

/**
 * What the highlighter marks in one field: the query's words, phrases and prefix, as a query of that field
 * alone. Given the whole query, the highlighter would go through every field's clauses for each field of
 * each hit (a third of a search's time at 100,000 documents). The prefix is a wildcard: the highlighter
 * does not look into index_prefixes, and expands it per hit; in a PDF's text it matches whole, as it
 * does in the query.
 */
function highlightIn(field: string, { words, phrases, prefix }: SearchText) {
  const wordOrPrefix =
    prefix === null ? [] : field === 'text' ? [{ match: { text: prefix } }] : [{ wildcard: { [field]: { value: `${prefix.replace(/[\\*?]/g, '\\$&')}*` } } }];
  return {
    bool: {
      should: [
        ...words.map((word) => ({ match: { [field]: word } })),
        ...phrases.map((phrase) => ({ match_phrase: { [field]: phrase.join(' ') } })),
        ...wordOrPrefix,
      ],
    },
  };
}

const highlight = (text: SearchText) => ({
  pre_tags: ['<mark>'],
  post_tags: ['</mark>'],
  fields: Object.fromEntries(
    FIELD_NAMES.map((name) => [
      name,
      {
        ...(['message', 'text'].includes(name) ? { fragment_size: 120, number_of_fragments: 2 } : { number_of_fragments: 0 }),
        highlight_query: highlightIn(name, text),
      },
    ]),
  ),
});

export async function searchElasticsearch(client: Client, prefix: string, accountId: string, query: SearchQuery): Promise<SearchPage> {
  const types = typesOf(query);
  if (types.length === 0) return { hits: [], hasMore: false, total: 0, totalIsExact: true };
  const relevance = query.sort === 'relevance';
  const order = query.sort === 'createdAt' ? 'asc' : 'desc';
  const response = await client.search(
    {
      index: types.map((type) => aliasOf(prefix, type)),
      query: { bool: { must: query.text ? textClauses(query.text) : [], filter: filters(accountId, query) } },
      // Ties by relevance (typed words score alike across thousands of matches) are sorted on the creation
      // time, then the id: any second key costs Elasticsearch its early stop on the best scores, and a
      // date, read for most matches, costs it less than the id (a typed word at 100,000 documents: 16
      // ms against 24). The id alone then breaks the ties left, so that a cursor skips none.
      sort: relevance ? [{ _score: 'desc' }, { createdAt: 'desc' }, { id: 'desc' }] : [{ createdAt: order }, { id: order }],
      search_after: !query.cursor
        ? undefined
        : query.cursor.sort === 'relevance'
          ? [query.cursor.value, query.cursor.createdAt, query.cursor.id]
          : [query.cursor.value, query.cursor.id],
      size: query.limit + 1,
      track_total_hits: TOTAL_COUNTED_UP_TO,
      _source: false,
      highlight: query.text ? highlight(query.text) : undefined,
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
    createdAt: Number(hit.sort![relevance ? 1 : 0]),
    highlight: Object.fromEntries(Object.entries(hit.highlight ?? {}).map(([field, fragments]) => [field, fragments.join(' … ')])),
  }));
  const total = typeof response.hits.total === 'number' ? { value: response.hits.total, relation: 'eq' } : response.hits.total;
  return { hits, hasMore: response.hits.hits.length > query.limit, total: total?.value ?? 0, totalIsExact: total?.relation !== 'gte' };
}
