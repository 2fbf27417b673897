import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import { createApp } from './app';
import { removeLeftoverFiles, uploadDirOf } from './api/receivedFile';
import { listen } from './api/server';
import { healthRoutes } from './health/routes';
import { cachedAuthenticator, uncachedAuthenticator } from './apiKeys/cache';
import { checkProductionSettings, type Config } from './config';
import { sealSettingsProblems } from './signingRequests/sealing';
import { migrateLatest, openDatabase, type Database } from './db';
import { withAdvisoryLock } from './db/advisoryLock';
import { createEventLog, type EventLog } from './events/service';
import type { Logger } from './logger';
import { startMetricsServer } from './metrics';
import { createMailTransport } from './mail';
import { createPdfInspector } from './pdf/inspect';
import { createPdfTextExtractor } from './pdf/text';
import { createPageRenderer } from './pdf/pageRenderer';
import { createTextTagFinder } from './pdf/textTags';
import type { SearchBackend } from './search/backend';
import { createSearchBackend } from './search/setup';
import { createSearchWake } from './search/wake';
import { createDashboardBackend } from './dashboard/setup';
import { scheduleArchiveRenewal, startSearchIndexer, startSweeper } from './temporal/client';
import { startTemporalDevServer } from './temporal/devServer';
import { installTemporalRuntime } from './worker/runtime';
import { prepareSearchAttributes } from './temporal/searchAttributes';
import { createWorker } from './worker/worker';
import { setUpWebhooks, type Webhooks } from './webhooks/setup';
import { createWebhookDispatcher } from './webhooks/dispatcher';
import { countWebhookBacklog } from './webhooks/store';

export interface RunningSystem {
  /** Base URL of the api, when it runs in this process. */
  url?: string;
  temporalUiUrl?: string;
  /** This process's Prometheus /metrics, unless METRICS_PORT=off. */
  metricsUrl?: string;
  database: Database;
  /** Where changes record their events, with their consumers. */
  events: EventLog;
  temporal: Connection;
  client: Client;
  webhooks: Webhooks;
  /** Search and dashboard aggregations: Elasticsearch, or PostgreSQL without ELASTICSEARCH_URL. */
  search: SearchBackend;
  config: Config;
  stop(): Promise<void>;
}

/**
 * Starts what `config` asks for — api, worker, or both — on the configured services, and on the
 * embedded defaults for whatever is not configured. Everything started is stopped in reverse order.
 */
export async function startSystem(config: Config, logger: Logger): Promise<RunningSystem> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step().catch((error) => logger.error({ err: error }, 'error while stopping'));
  };
  try {
    checkProductionSettings(config);
    if (config.runWorker) {
      const problems = await sealSettingsProblems(config);
      if (problems.length) throw new Error(`Invalid seal configuration:\n  ${problems.join('\n  ')}`);
    }
    fs.mkdirSync(config.dataDir, { recursive: true });
    const database = await openDatabase(config);
    stops.push(() => database.close());
    await migrateLatest(database.knex, logger);

    const { temporalAddress, temporalUiUrl } = await temporalServer(config, logger, stops);
    const temporal = await Connection.connect({ address: temporalAddress });
    stops.push(() => temporal.close());
    const client = new Client({ connection: temporal, namespace: config.TEMPORAL_NAMESPACE });
    // Every process checks (the api starts workflows that carry them); processes take turns adding them.
    await withAdvisoryLock(database.knex, 'temporal search attributes', logger, () => prepareSearchAttributes(temporal, config.TEMPORAL_NAMESPACE, logger));
    // Who consumes an event, in the transaction that records it: the webhook dispatcher queues its
    // deliveries and, once it commits, wakes those webhooks' queues; the search wake tells this process's
    // indexer, if idle, to look at once (search follows the events table by cursor: src/search/eventCursor.ts).
    const webhookDispatcher = createWebhookDispatcher({
      client,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      db: database.knex,
      retryScale: config.WEBHOOK_RETRY_SCALE,
      onError: (error, webhooks) => logger.warn({ err: error, webhooks }, 'waking webhook queues failed; the sweeper will'),
    });
    const searchWake = createSearchWake();
    const events = createEventLog([webhookDispatcher, searchWake]);
    const webhooks = await setUpWebhooks(config);
    stops.push(async () => webhooks.poster.close());
    const search = createSearchBackend(config, database.knex, logger);
    stops.push(() => search.close());
    // The dashboard reads beside search: over Elasticsearch's indices when search uses them.
    const dashboard = createDashboardBackend(search, database.knex);

    // Whether the api of this process, once it serves, is taking a burst: the worker's text of uploads gives way to it.
    let apiBusy = () => false;
    let temporalMetricsUrl: string | undefined;
    if (config.runWorker) {
      temporalMetricsUrl = await installTemporalRuntime(logger, { metrics: config.METRICS_PORT !== 'off' });
      // The worker extracts the text of uploaded PDFs for search, in its own pool of child processes; a
      // large one comes in a file of the upload directory.
      const uploadDir = uploadDirOf(config.dataDir);
      void removeLeftoverFiles(uploadDir); // those of a worker killed mid-extraction
      const pdfText = createPdfTextExtractor(config, uploadDir);
      stops.push(() => pdfText.close());
      const { worker, connection } = await createWorker({
        address: temporalAddress,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        deps: {
          db: database.knex,
          events,
          config,
          mail: createMailTransport(config, database.knex),
          delivery: { db: database.knex, secretKey: webhooks.secretKey, poster: webhooks.poster },
          search,
          pdfText,
          logger,
          searchWake,
          apiBusy: () => apiBusy(),
        },
      });
      const running = worker.run();
      stops.push(async () => {
        worker.shutdown();
        await running;
        await connection.close();
      });
      await startSweeper(client, config.TEMPORAL_TASK_QUEUE);
      await scheduleArchiveRenewal(client, config.TEMPORAL_TASK_QUEUE);
      // On either backend: besides Elasticsearch's index, it keeps the text of new PDFs coming.
      await startSearchIndexer(client, config.TEMPORAL_TASK_QUEUE);
    }

    const metrics = await startMetricsServer(config, logger, {
      countWebhookBacklog: (timeoutMs) => countWebhookBacklog(database.knex, timeoutMs),
      temporalMetricsUrl,
    });
    if (metrics) stops.push(() => metrics.close());

    const readinessChecks = {
      database: () => database.knex.raw('select 1'),
      temporal: () => temporal.workflowService.getSystemInfo({}),
      ...(search.kind === 'elasticsearch' ? { search: () => search.health() } : {}),
    };
    // The api checks uploaded PDFs in a pool of child processes, closed after the server has drained.
    const pdf = createPdfInspector(config);
    stops.push(() => pdf.close());
    const textTags = createTextTagFinder(config);
    stops.push(() => textTags.close());
    const pages = createPageRenderer(config);
    stops.push(() => pages.close());
    // Listen first: with PORT=0 the address is known only now, and links and the OpenAPI servers read it.
    // Until the app is built, every request is answered 503 at once rather than left waiting.
    const server = await listen(config.PORT, config.HOST, (_req, res) => {
      res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Retry-After': '1' });
      res.end(JSON.stringify({ error: 'server_busy', message: 'Signet is starting; try again in a moment.' }));
    });
    // Stopping waits for the requests under way (DRAIN_MS at most) before the pools and the database close.
    stops.push(() => server.close());
    let url: string | undefined;
    if (config.runApi) {
      url = config.PUBLIC_URL ?? `http://localhost:${(server.address() as AddressInfo).port}`;
      config.publicUrl = url;
      apiBusy = server.busy; // a worker alone answers only its health checks, and never gives way
      // See src/apiKeys/cache.ts for why the embedded database gets no cache.
      const apiKeys = database.embedded ? uncachedAuthenticator(database.knex) : await cachedAuthenticator(database.knex, logger);
      stops.push(() => apiKeys.close());
      server.handle(
        createApp({
          apiKeys,
          config,
          db: database.knex,
          events,
          logger,
          temporal: client,
          webhooks,
          search,
          dashboard,
          readinessChecks,
          pdf,
          textTags,
          pages,
        }).callback(),
      );
    } else {
      // A worker alone serves only /healthz and /readyz, for its container's health check.
      const healthOnly = new Koa();
      healthOnly.use(healthRoutes(readinessChecks).routes());
      server.handle(healthOnly.callback());
    }
    return { url, temporalUiUrl, metricsUrl: metrics?.url, database, events, temporal, client, webhooks, search, config, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The configured Temporal server, or the embedded dev server started (and stopped with the rest) when there is none. */
async function temporalServer(config: Config, logger: Logger, stops: (() => Promise<unknown>)[]) {
  if (config.TEMPORAL_ADDRESS) return { temporalAddress: config.TEMPORAL_ADDRESS, temporalUiUrl: undefined };
  const devServer = await startTemporalDevServer({
    cliPath: config.TEMPORAL_CLI_PATH,
    dataDir: config.dataDir,
    port: config.TEMPORAL_PORT,
    uiPort: config.TEMPORAL_UI_PORT,
    logger,
  });
  stops.push(() => devServer.stop());
  return { temporalAddress: devServer.address, temporalUiUrl: devServer.uiUrl };
}
