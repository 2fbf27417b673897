import { Client, errors } from '@elastic/elasticsearch';
import { searchUnavailable } from '../errors';

/** A client for ELASTICSEARCH_URL with short timeouts: a search outage must answer fast, never hang. */
export function createElasticsearchClient(url: string) {
  return new Client({ node: url, requestTimeout: 5000, maxRetries: 1 });
}

/** What a search-time request may take before the api answers 503 instead. */
export const SEARCH_REQUEST_OPTIONS = { requestTimeout: 2000, maxRetries: 0 };

/** Elasticsearch not answering (down, overloaded, index not there yet) is a 503 for the caller, not a 500. */
export function isUnavailable(error: unknown) {
  if (error instanceof errors.ConnectionError || error instanceof errors.TimeoutError || error instanceof errors.NoLivingConnectionsError) return true;
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode ?? 0;
    return status >= 500 || status === 429 || (error.body as { error?: { type?: string } })?.error?.type === 'index_not_found_exception';
  }
  return false;
}

export async function unlessUnavailable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isUnavailable(error) ? searchUnavailable() : error;
  }
}
