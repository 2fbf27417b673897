import type { Client } from '@elastic/elasticsearch';
import type { SearchHitRef, SearchPage } from './backend';
import { SEARCH_REQUEST_OPTIONS } from './elasticsearch';
import { aliasOf } from './esIndices';
import { typesOf } from './postgres';
import type { SearchQuery, SearchType } from './schema';
import type { SearchText } from './text';

// The same weights as the tsvector columns: names and titles first, then signers, then the rest.
const FIELDS = ['fileName^3', 'title^3', 'name^3', 'signers^2', 'message', 'text'];
const FIELD_NAMES = FIELDS.map((field) => field.split('^')[0]);

/** Every word and phrase must match in some field; the last word typed matches as a prefix. */
function textClauses({ words, phrases, prefix }: SearchText) {
  return [
    ...words.map((word) => ({ multi_match: { query: word, fields: FIELDS, operator: 'and' } })),
    ...phrases.map((phrase) => ({ multi_match: { query: phrase.join(' '), fields: FIELDS, type: 'phrase' } })),
    ...(prefix
      ? [
          {
            bool: {
              should: FIELDS.map((field) => {
                const [name, boost] = field.split('^');
                return { prefix: { [name]: { value: prefix, boost: Number(boost ?? 1) } } };
              }),
              minimum_should_match: 1,
            },
          },
        ]
      : []),
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
  if (types.length === 0) return { hits: [], hasMore: false, total: 0 };
  const relevance = query.sort === 'relevance';
  const order = query.sort === 'createdAt' ? 'asc' : 'desc';
  const response = await client.search(
    {
      index: types.map((type) => aliasOf(prefix, type)),
      query: { bool: { must: query.text ? textClauses(query.text) : [], filter: filters(accountId, query) } },
      sort: relevance ? [{ _score: 'desc' }, { id: 'desc' }] : [{ createdAt: order }, { id: order }],
      search_after: query.cursor ? [query.cursor.value, query.cursor.id] : undefined,
      size: query.limit + 1,
      track_total_hits: true,
      _source: false,
      highlight: query.text ? highlight : undefined,
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
  const total = typeof response.hits.total === 'number' ? response.hits.total : (response.hits.total?.value ?? 0);
  return { hits, hasMore: response.hits.hits.length > query.limit, total };
}
