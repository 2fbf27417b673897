import http from 'node:http';
import net from 'node:net';
import type { Middleware } from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Config } from './config';
import type { Logger } from './logger';
import type { SealService } from './domain/signingRequests';
import type { AttemptOutcome } from './domain/webhooks';

// Prometheus metrics, one registry per process. Every metric is listed in docs/operations.md ("Metrics").
const registry = new Registry();

export const httpRequestDuration = new Histogram({
  name: 'signet_http_request_duration_seconds',
  help: 'Time from receiving an HTTP request to its answer, by route template and status.',
  labelNames: ['route', 'status'] as const,
  registers: [registry],
});

export type WebhookDeliveryOutcome = AttemptOutcome;

const webhookDeliveries = new Counter({
  name: 'signet_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const countWebhookDelivery = (outcome: WebhookDeliveryOutcome) => webhookDeliveries.inc({ outcome });

export type SigningRequestOutcome = 'completed' | 'declined' | 'cancelled' | 'expired';

const signingRequests = new Counter({
  name: 'signet_signing_requests_total',
  help: 'Signing requests that reached a final status, by status.',
  labelNames: ['status'] as const,
  registers: [registry],
});

/** For `.then()` after a transition's transaction: counts the request once the change has committed. */
export const countSigningRequestEnd = (status: SigningRequestOutcome) => (ended: boolean) => {
  if (ended) signingRequests.inc({ status });
  return ended;
};

const sealServiceFailures = new Counter({
  name: 'signet_seal_service_failures_total',
  help: 'Seals that failed for a timestamp authority or revocation responder (retried by the workflow), by service.',
  labelNames: ['service'] as const,
  registers: [registry],
});

export const countSealServiceFailure = (service: SealService) => sealServiceFailures.inc({ service });

/** Times every request, labelled with the route template (never the raw path, whose ids would be endless labels). */
export function recordRequestDuration(): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } finally {
      httpRequestDuration.observe({ route: routeOf(ctx), status }, (performance.now() - started) / 1000);
    }
  };
}

type RouteLayer = { path: string | RegExp; methods: string[] };

// @koa/router lists on ctx.matched the layers whose path matched; it runs the first one with the method.
function routeOf(ctx: { method: string; matched?: RouteLayer[] }) {
  const layer = ctx.matched?.find((candidate) => candidate.methods.includes(ctx.method));
  return layer ? String(layer.path) : 'unmatched';
}

const BACKLOG_QUERY_TIMEOUT_MS = 1_000;

// Counted at scrape time, by the webhooks' own count (src/system.ts hands it in). A failed count keeps
// the last value: a slow database must not take the other metrics down with it.
function webhookBacklog(count: (timeoutMs: number) => Promise<number>, logger: Logger) {
  const own = new Registry();
  new Gauge({
    name: 'signet_webhook_backlog',
    help: 'Webhook deliveries queued to be sent or retried (as backlog in GET /webhooks/:id; a ping in flight is not).',
    registers: [own],
    async collect() {
      try {
        this.set(await count(BACKLOG_QUERY_TIMEOUT_MS));
      } catch (error) {
        logger.debug({ err: error }, 'webhook backlog not counted');
      }
    },
  });
  return own;
}

const TEMPORAL_SCRAPE_TIMEOUT_MS = 2_000;

// The Temporal SDK's worker metrics, served by its runtime on loopback (src/worker/runtime.ts).
async function temporalMetrics(url: string, logger: Logger) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(TEMPORAL_SCRAPE_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`status ${response.status}`);
    return await response.text();
  } catch (error) {
    logger.debug({ err: error }, 'temporal worker metrics not scraped');
    return '';
  }
}

let defaultMetricsCollected = false;

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves GET /metrics on METRICS_HOST:METRICS_PORT, a server of its own (node:http, not the api's app),
 * so metrics never reach the public port. Undefined with METRICS_PORT=off.
 */
export async function startMetricsServer(
  config: Pick<Config, 'METRICS_PORT' | 'METRICS_HOST'>,
  logger: Logger,
  { countWebhookBacklog, temporalMetricsUrl }: { countWebhookBacklog?: (timeoutMs: number) => Promise<number>; temporalMetricsUrl?: string } = {},
): Promise<MetricsServer | undefined> {
  const { METRICS_PORT: listenPort, METRICS_HOST: host } = config;
  if (listenPort === 'off') return undefined;
  if (!defaultMetricsCollected) collectDefaultMetrics({ register: registry, prefix: 'signet_' });
  defaultMetricsCollected = true;
  const metrics = countWebhookBacklog ? Registry.merge([registry, webhookBacklog(countWebhookBacklog, logger)]) : registry;
  const scrape = async () => (await metrics.metrics()) + (temporalMetricsUrl ? await temporalMetrics(temporalMetricsUrl, logger) : '');

  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    scrape().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.contentType }).end(text),
      (error) => {
        logger.error({ err: error }, 'metrics scrape failed');
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => server.listen(listenPort, host, resolve).once('error', reject));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://${net.isIPv6(host) ? `[${host}]` : host}:${port}/metrics`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // Prometheus keeps its connection open between scrapes
      }),
  };
}
