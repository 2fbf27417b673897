import type { Client } from '@elastic/elasticsearch';
import type { EventCursor } from './eventCursor';
import type { SearchQuery, SearchType } from './schema';

/** A resource the index holds: a document or a signing request. */
export interface ResourceRef {
  type: SearchType;
  id: string;
  /** A document whose name or text may have changed: the requests that hold it carry them, and are indexed again too. */
  holders?: boolean;
}

export interface SearchHitRef extends ResourceRef {
  /** Relevance when sorted by it, else null. */
  score: number | null;
  /** What the page is sorted on (score, or creation time in epoch ms): the cursor carries it. */
  sortValue: number;
  /** Creation time in epoch ms: by relevance, ties are sorted on it, then on the id. */
  createdAt: number;
  highlight: Record<string, string>;
}

export interface SearchPage {
  hits: SearchHitRef[];
  hasMore: boolean;
  /** Hits over all pages, counted up to TOTAL_COUNTED_UP_TO (exact when totalIsExact). */
  total: number;
  totalIsExact: boolean;
}

/**
 * Search: Elasticsearch when ELASTICSEARCH_URL is set, PostgreSQL full-text search otherwise. Both answer the same API with the same semantics (one contract test suite).
 */
export interface SearchBackend {
  readonly kind: 'postgres' | 'elasticsearch';
  search(accountId: string, query: SearchQuery): Promise<SearchPage>;
  /** Elasticsearch's client and index prefix, for read models that aggregate over the same indices (the dashboard). */
  elasticsearch?: { client: Client; prefix: string };
  /** Where the indexer is in the events (Elasticsearch); PostgreSQL, its own index, follows none. */
  events?: Pick<EventCursor, 'next' | 'advance'>;
  /**
   * Brings the index in step with PostgreSQL for these resources; PostgreSQL is its own index. Answers
   * once a search finds them (Elasticsearch's next refresh, up to 1 s), unless `searchable` is false:
   * then once they are written, and the refresh makes them searchable as soon.
   */
  index(refs: ResourceRef[], options?: { searchable?: boolean }): Promise<void>;
  /** Answers when the backend does (the readiness check). */
  health(): Promise<unknown>;
  close(): Promise<void>;
}
