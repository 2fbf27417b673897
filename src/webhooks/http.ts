import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isAllowListed, isPublicAddress, type AllowList } from './addressPolicy';
import { webhookLookup } from './dnsLookup';

const RESPONSE_SNIPPET_BYTES = 1024;
export const USER_AGENT = `Signet-Webhooks/${require('../../package.json').version}`;

export interface PostResult {
  /** null when no response came (timeout, refused, blocked address). */
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  error: string | null;
  /** From Retry-After on a 429 or 503. */
  retryAfterMs: number | null;
}

type Agents = { http: http.Agent; https: https.Agent };

/**
 * POSTs webhook bodies through agents that refuse non-public addresses after DNS resolution, on the
 * address actually connected to (request-filtering-agent), unless the host is allow-listed.
 * Redirects are never followed: a 3xx is an answer like any other non-2xx. Public hosts are looked up
 * by `lookup` (webhookLookup: never on the thread pool); allow-listed ones as the system does (the
 * operator's own names, /etc/hosts among them).
 */
export async function createWebhookPoster(allowList: AllowList, timeoutMs: number, lookup: LookupFunction = webhookLookup()) {
  // request-filtering-agent is an ES module; this CommonJS project loads it with import().
  const { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } = await import('request-filtering-agent');
  const publicOnly: Agents = { http: new RequestFilteringHttpAgent({ keepAlive: true }), https: new RequestFilteringHttpsAgent({ keepAlive: true }) };
  const allowed: Agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  function post(urlText: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    const url = new URL(urlText);
    const allowListed = isAllowListed(url, allowList);
    const agents = allowListed ? allowed : publicOnly;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise<PostResult>((resolve) => {
      const failed = (error: Error) => resolve({ statusCode: null, latencyMs: elapsed(), responseBody: null, error: describe(error), retryAfterMs: null });
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        {
          method: 'POST',
          agent: url.protocol === 'https:' ? agents.https : agents.http,
          ...(allowListed ? {} : { lookup }),
          headers: { 'Content-Type': 'application/json', 'User-Agent': USER_AGENT, 'Content-Length': Buffer.byteLength(body), ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const answered = () => {
            const status = response.statusCode ?? 0;
            resolve({
              statusCode: status,
              latencyMs: elapsed(),
              // PostgreSQL's text holds no NUL: a receiver answering one must not stall its queue.
              responseBody: Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES).toString('utf8').replaceAll('\0', '\uFFFD'),
              error: null,
              retryAfterMs: status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : null,
            });
          };
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            size += chunk.length;
            // The log keeps this much: read no further, and close the connection rather than drain the rest.
            if (size >= RESPONSE_SNIPPET_BYTES) {
              answered();
              request.destroy();
            }
          });
          response.on('end', answered);
          response.on('error', failed);
        },
      );
      // A deadline for the whole exchange, not an idle timeout: a receiver trickling bytes still times out.
      const deadline = setTimeout(() => request.destroy(new Error(`no complete response within ${timeoutMs / 1000} s`)), timeoutMs);
      request.on('close', () => clearTimeout(deadline));
      request.on('error', failed);
      // A second check on the address actually connected to, stricter than the agent's about IPv6
      // forms that embed an IPv4 address.
      if (!allowListed) {
        request.on('socket', (socket) =>
          socket.once('connect', () => {
            if (!isPublicAddress(socket.remoteAddress ?? '')) request.destroy(new Error(`DNS lookup ${socket.remoteAddress} is not allowed`));
          }),
        );
      }
      request.end(body);
    });
  }

  function close() {
    for (const agent of [...Object.values(publicOnly), ...Object.values(allowed)]) agent.destroy();
  }

  return { post, close };
}

export type WebhookPoster = Awaited<ReturnType<typeof createWebhookPoster>>;

function describe(error: Error & { code?: string }) {
  if (/is not allowed/.test(error.message)) return `blocked: the address is not public (${error.message.replace(/^DNS lookup /, '')})`;
  return error.code ? `${error.code}: ${error.message}` : error.message;
}

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}
