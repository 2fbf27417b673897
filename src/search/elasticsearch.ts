import { Client } from '@elastic/elasticsearch';

/** A client for ELASTICSEARCH_URL with short timeouts: a search outage must answer fast, never hang. */
export function createElasticsearchClient(url: string) {
  return new Client({ node: url, requestTimeout: 5000, maxRetries: 1 });
}
