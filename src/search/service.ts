import type { Db } from '../db';
import { presentDocument } from '../documents/presenter';
import { getDocuments } from '../documents/service';
import { presentSigningRequest } from '../signingRequests/presenter';
import { findSigningRequests } from '../signingRequests/store';
import { presentTemplate } from '../templates/presenter';
import { findTemplates } from '../templates/store';
import type { SearchBackend, SearchHitRef } from './backend';
import { encodeCursor, type SearchCursor } from './cursor';
import type { SearchQuery, SearchType } from './schema';

/**
 * One page of search hits, each shown as its resource is in PostgreSQL now (the source of truth): a hit the
 * index still has for a resource deleted a moment ago is left out. The account filter comes from the key.
 */
export async function searchAccount({ db, search }: { db: Db; search: SearchBackend }, accountId: string, query: SearchQuery) {
  const page = await search.search(accountId, query);
  const ids = (type: SearchType) => page.hits.filter((hit) => hit.type === type).map((hit) => hit.id);
  const [documents, requests, templates] = await Promise.all([
    getDocuments(db, accountId, ids('document')),
    findSigningRequests(db, accountId, ids('signing_request')),
    findTemplates(db, accountId, ids('template')),
  ]);
  const shown = new Map<string, object>([
    ...documents.map((document) => [document.id, presentDocument(document)] as const),
    ...requests.map((record) => [record.request.id, presentSigningRequest(record)] as const),
    ...templates.map((template) => [template.id, presentTemplate(template)] as const),
  ]);
  const data = page.hits.flatMap((hit) => {
    const resource = shown.get(hit.id);
    return resource ? [{ type: hit.type, ...resource, score: hit.score, highlight: hit.highlight }] : [];
  });
  const last: SearchHitRef | undefined = page.hits[page.hits.length - 1];
  const cursor: SearchCursor | undefined = !(page.hasMore && last)
    ? undefined
    : query.sort === 'relevance'
      ? { sort: query.sort, value: last.sortValue, id: last.id, createdAt: last.createdAt }
      : { sort: query.sort, value: last.sortValue, id: last.id };
  const nextCursor = cursor ? encodeCursor(cursor) : null;
  return { data, pagination: { limit: query.limit, hasMore: page.hasMore, nextCursor }, total: page.total, totalIsExact: page.totalIsExact };
}
