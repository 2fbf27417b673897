import type { Config } from '../config';
import type { Db } from '../db';
import type { Logger } from '../logger';
import type { SearchBackend } from './backend';
import { createElasticsearchClient } from './elasticsearch';
import { createElasticsearchSearch } from './elasticsearchBackend';
import { createPostgresSearch } from './postgres';

/** Elasticsearch when ELASTICSEARCH_URL is set; PostgreSQL full-text search otherwise. */
export function createSearchBackend(config: Pick<Config, 'ELASTICSEARCH_URL' | 'ELASTICSEARCH_INDEX_PREFIX'>, db: Db, logger: Logger): SearchBackend {
  if (!config.ELASTICSEARCH_URL) return createPostgresSearch(db);
  return createElasticsearchSearch({ db, client: createElasticsearchClient(config.ELASTICSEARCH_URL), prefix: config.ELASTICSEARCH_INDEX_PREFIX, logger });
}
