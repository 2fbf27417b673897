import { Client, errors } from '@elastic/elasticsearch';
import { searchUnavailable } from '../errors';

/**
 * An index write (a _bulk that waits for the refresh that makes it searchable) on a busy machine can take
 * longer than 5 s, and giving up does not stop it: Elasticsearch indexes it anyway, and the client's
 * retry and then the activity's would send it again, more work for a machine already behind. So
 * background requests wait up to 20 s (within the indexer's heartbeat timeout of 30 s).
 */
const BACKGROUND_TIMEOUT_MS = 20_000;

/**
 * A client for ELASTICSEARCH_URL. What the api asks (search, dashboard, health) carries
 * SEARCH_REQUEST_OPTIONS: a search outage must answer fast, never hang. The client's own timeout is for
 * background work, and is also its connections' (undici's headers and body timeouts): a request can ask
 * for less than it, never more.
 */
export function createElasticsearchClient(url: string) {
  return new Client({ node: url, requestTimeout: BACKGROUND_TIMEOUT_MS, maxRetries: 1 });
}

/** What a search-time request may take before the api answers 503 instead. */
export const SEARCH_REQUEST_OPTIONS = { requestTimeout: 2000, maxRetries: 0 };

/** An index write is sent once: the indexer's activity retries one that failed. */
export const WRITE_REQUEST_OPTIONS = { maxRetries: 0 };

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
