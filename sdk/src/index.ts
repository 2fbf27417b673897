import crypto from 'node:crypto';
import { createClient, type Client } from './generated/client';
import * as api from './generated/sdk.gen';
import type * as types from './generated/types.gen';

// The hand-written layer over the generated client (./generated, `npm run sdk:generate`): the key, retries
// that are safe because every POST carries an Idempotency-Key, errors as exceptions, and pagination.

export type * from './generated/types.gen';
export { api };
export { verifyWebhook } from 'signet/webhooks';

export interface SignetOptions {
  /** An API key, `sk_live_…`. */
  apiKey: string;
  /** Where Signet runs, e.g. `https://sign.example.com` (its API is under /api/v1). Default http://localhost:3000. */
  baseUrl?: string;
  /** Attempts after the first on a network error, a 429 or a 5xx; default 3. */
  maxRetries?: number;
  /** The first retry's wait, doubled on each (with jitter), unless the answer says Retry-After; default 500 ms. */
  retryDelayMs?: number;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/** An answer other than 2xx, as the API's Error body describes it. */
export class SignetError extends Error {
  constructor(
    /** The HTTP status; 0 when no answer came (the network). */
    readonly status: number,
    /** The API's error code: `validation_error`, `not_found`, `rate_limit_exceeded`, … */
    readonly code: string,
    message: string,
    readonly details: string[] = [],
    readonly requestId?: string,
  ) {
    super(details.length ? `${message} ${details.join('; ')}` : message);
    this.name = 'SignetError';
  }
}

type Result<T> = { data?: T; error?: unknown; response?: Response; request?: Request };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// A 409 with Retry-After is idempotency_in_progress: the same key's first request is still running.
const retriable = (response: Response) => response.status === 429 || response.status >= 500 || (response.status === 409 && response.headers.has('Retry-After'));

/** How long to wait before attempt `attempt` (1-based), Retry-After first. */
function delayBefore(attempt: number, baseMs: number, response?: Response) {
  const retryAfter = response?.headers.get('Retry-After');
  if (retryAfter) {
    const seconds = Number(retryAfter);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(retryAfter) - Date.now();
    if (ms >= 0) return Math.min(ms, 60_000);
  }
  return baseMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2);
}

/**
 * A fetch that retries a network error, a 429, a 5xx or a 409 with Retry-After with backoff. A POST gets an Idempotency-Key (one for
 * all its attempts) unless it has one: a retry of a request that did run is answered, not run again.
 */
export function retryingFetch(inner: typeof fetch, maxRetries: number, retryDelayMs: number): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    if (request.method === 'POST' && !request.headers.has('Idempotency-Key')) request.headers.set('Idempotency-Key', crypto.randomUUID());
    for (let attempt = 0; ; attempt += 1) {
      let response: Response | undefined;
      try {
        response = await inner(request.clone());
      } catch (error) {
        if (attempt >= maxRetries) throw error;
      }
      if (response && (!retriable(response) || attempt >= maxRetries)) return response;
      await response?.body?.cancel();
      await sleep(delayBefore(attempt + 1, retryDelayMs, response));
    }
  };
}

/** The data of a generated operation's result, or its error as a SignetError. */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  let result: Result<T>;
  try {
    result = await call;
  } catch (error) {
    throw new SignetError(0, 'network_error', error instanceof Error ? error.message : String(error));
  }
  if (result.error === undefined && result.response?.ok) return result.data as T;
  const status = result.response?.status ?? 0;
  const body = (typeof result.error === 'object' && result.error !== null ? result.error : {}) as Partial<types.Error>;
  if (status === 0 && result.error instanceof Error) throw new SignetError(0, 'network_error', result.error.message);
  throw new SignetError(
    status,
    body.error ?? `http_${status}`,
    body.message ?? (typeof result.error === 'string' && result.error ? result.error : `HTTP ${status}`),
    body.details ?? [],
    body.requestId,
  );
}

/** A page of a list endpoint, in the API's list envelope. */
interface Page<Item> {
  data: Item[];
  pagination: types.Pagination;
}

/** Every item of a list endpoint, page after page (following nextCursor), as an async iterator. */
export async function* paginate<Item, Query extends { cursor?: string; limit?: number }>(
  fetchPage: (query: Query) => Promise<Page<Item>>,
  query: Query = {} as Query,
): AsyncGenerator<Item> {
  let cursor = query.cursor;
  for (;;) {
    const page = await fetchPage({ ...query, ...(cursor ? { cursor } : {}) });
    yield* page.data;
    if (!page.pagination.hasMore || !page.pagination.nextCursor) return;
    cursor = page.pagination.nextCursor;
  }
}

type ListQuery<Data extends { query?: unknown }> = NonNullable<Data['query']>;
export type SigningRequestStatus = types.SigningRequest['status'];

/** The Signet API: `new Signet({ apiKey, baseUrl })`. */
export class Signet {
  /** The generated client for /api/v1, for any operation: `api.getAccount({ client: signet.client })`. */
  readonly client: Client;
  /** The generated client for the signer's side (/sign/{token}/…), which has no key. */
  readonly signerClient: Client;

  constructor(options: SignetOptions) {
    if (!options.apiKey) throw new TypeError('Signet: apiKey is required');
    const origin = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '').replace(/\/api(\/v1)?$/, '');
    const fetch = retryingFetch(options.fetch ?? globalThis.fetch, options.maxRetries ?? 3, options.retryDelayMs ?? 500);
    this.client = createClient({ baseUrl: `${origin}/api/v1`, auth: options.apiKey, fetch });
    this.signerClient = createClient({ baseUrl: origin, fetch });
  }

  private get c() {
    return { client: this.client };
  }

  readonly account = {
    get: () => unwrap(api.getAccount(this.c)),
  };

  readonly documents = {
    /** Upload a PDF: one request (the file base64 in JSON), safe to retry. */
    upload: (file: Uint8Array, fileName: string) => {
      // The generator types a base64 string (contentEncoding) as a Blob; the API takes the string.
      const content = Buffer.from(file).toString('base64') as unknown as Blob;
      return unwrap(api.createDocument({ ...this.c, body: { fileName, fileSize: file.byteLength, content } }));
    },
    get: (id: string) => unwrap(api.getDocument({ ...this.c, path: { id } })),
    list: (query?: ListQuery<types.ListDocumentsData>) => unwrap(api.listDocuments({ ...this.c, query })),
    /** Every document, newest first, fetched a page at a time. */
    iterate: (query?: ListQuery<types.ListDocumentsData>) => paginate((q) => this.documents.list(q), query),
    rename: (id: string, fileName: string) => unwrap(api.renameDocument({ ...this.c, path: { id }, body: { fileName } })),
    delete: (id: string) => unwrap(api.deleteDocument({ ...this.c, path: { id } })),
    /** The original PDF's bytes. */
    download: async (id: string) => bytes(await unwrap(api.downloadDocumentFile({ ...this.c, path: { id }, parseAs: 'arrayBuffer' }))),
  };

  readonly signingRequests = {
    /** Send documents to signers: `create({ document_id, title, signers: [{ name, email }] })`. */
    create: (body: types.SigningRequestCreateWritable) => unwrap(api.createSigningRequest({ ...this.c, body })),
    get: (id: string) => unwrap(api.getSigningRequest({ ...this.c, path: { id } })),
    list: (query?: ListQuery<types.ListSigningRequestsData>) => unwrap(api.listSigningRequests({ ...this.c, query })),
    iterate: (query?: ListQuery<types.ListSigningRequestsData>) => paginate((q) => this.signingRequests.list(q), query),
    cancel: (id: string, reason?: string) => unwrap(api.cancelSigningRequest({ ...this.c, path: { id }, body: reason ? { reason } : {} })),
    remind: (id: string) => unwrap(api.remindSigners({ ...this.c, path: { id } })),
    auditTrail: (id: string) => unwrap(api.getAuditTrail({ ...this.c, path: { id } })),
    signingLink: (id: string, signerId: string) => unwrap(api.createSigningLink({ ...this.c, path: { id, signerId } })),
    /** The sealed PDF (a ZIP of every sealed PDF when the request has several documents), once completed. */
    download: async (id: string) => {
      const response = await unwrap(api.downloadSealedDocument({ ...this.c, path: { id }, parseAs: 'arrayBuffer' }));
      return bytes(response);
    },
    /**
     * Polls the request until it has its outcome (completed, declined, cancelled, expired) and its sealed
     * PDF is ready, calling `onProgress` with each state; a SignetError `timeout` after `timeoutMs`.
     */
    waitForOutcome: async (
      id: string,
      {
        timeoutMs = 10 * 60_000,
        intervalMs = 1000,
        onProgress,
      }: { timeoutMs?: number; intervalMs?: number; onProgress?: (request: types.SigningRequest) => void } = {},
    ) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const request = await this.signingRequests.get(id);
        onProgress?.(request);
        if (request.progress.stage === 'finished') return request;
        if (Date.now() + intervalMs > deadline) throw new SignetError(0, 'timeout', `signing request ${id} is still ${request.status} after ${timeoutMs} ms`);
        await sleep(intervalMs);
      }
    },
  };

  readonly webhooks = {
    create: (body: types.WebhookCreate) => unwrap(api.createWebhook({ ...this.c, body })),
    list: (query?: ListQuery<types.ListWebhooksData>) => unwrap(api.listWebhooks({ ...this.c, query })),
    iterate: (query?: ListQuery<types.ListWebhooksData>) => paginate((q) => this.webhooks.list(q), query),
    delete: (id: string) => unwrap(api.deleteWebhook({ ...this.c, path: { id } })),
  };

  /** Is this PDF one Signet sealed, unchanged? (No API key needed; the file is not stored.) */
  verify = (file: Uint8Array) => unwrap(api.verifyPdf({ ...this.c, body: new Blob([Uint8Array.from(file)]) }));

  /** The signer's side, by the token of their link (`…/sign/<token>`): what the signing page does. */
  readonly signer = {
    view: (token: string) => unwrap(api.getSigningPage({ client: this.signerClient, path: { token } })),
    sign: (token: string, body: types.Sign) => unwrap(api.sign({ client: this.signerClient, path: { token }, body })),
    decline: (token: string, reason: string) => unwrap(api.declineToSign({ client: this.signerClient, path: { token }, body: { reason } })),
  };
}

const bytes = (data: unknown) => new Uint8Array(data as ArrayBuffer);
