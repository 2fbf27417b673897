import fs from 'node:fs';
import type { Server } from 'node:http';
import { Connection } from '@temporalio/client';
import { createApp } from './api/app';
import { loadConfig } from './config';
import { migrateLatest, openDatabase } from './db';
import { createLogger } from './logger';
import { createElasticsearchClient } from './search/elasticsearch';
import { startTemporalDevServer } from './temporal/devServer';
import { installTemporalRuntime } from './temporal/runtime';
import { createWorker } from './temporal/worker';

// `npm start`: api + worker in one process, on the embedded defaults for whatever is not configured.
const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL);
// Everything started is stopped in reverse order on exit, the Temporal dev server child included.
const stops: (() => Promise<unknown>)[] = [];

async function shutdown(reason: string, exitCode: number) {
  logger.info({ reason }, 'shutting down');
  for (const stop of stops.reverse()) await stop().catch((error) => logger.error({ err: error }, 'error while stopping'));
  process.exit(exitCode);
}

async function main() {
  fs.mkdirSync(config.dataDir, { recursive: true });
  process.once('SIGINT', () => void shutdown('SIGINT', 0));
  process.once('SIGTERM', () => void shutdown('SIGTERM', 0));

  const database = await openDatabase(config);
  stops.push(() => database.close());
  await migrateLatest(database.knex);

  let temporalAddress = config.TEMPORAL_ADDRESS;
  let temporalUi = 'the Temporal UI of your cluster';
  if (!temporalAddress) {
    const devServer = await startTemporalDevServer({
      cliPath: config.TEMPORAL_CLI_PATH,
      dataDir: config.dataDir,
      port: config.TEMPORAL_PORT,
      uiPort: config.TEMPORAL_UI_PORT,
      logger,
    });
    stops.push(() => devServer.stop());
    temporalAddress = devServer.address;
    temporalUi = devServer.uiUrl;
  }
  const temporal = await Connection.connect({ address: temporalAddress });
  stops.push(() => temporal.close());

  if (config.runWorker) {
    installTemporalRuntime(logger);
    const { worker, connection } = await createWorker({
      address: temporalAddress,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      deps: { db: database.knex },
    });
    const running = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await running;
      await connection.close();
    });
  }

  if (config.runApi) {
    const search = config.ELASTICSEARCH_URL ? createElasticsearchClient(config.ELASTICSEARCH_URL) : undefined;
    const app = createApp({
      config,
      db: database.knex,
      logger,
      readinessChecks: {
        database: () => database.knex.raw('select 1'),
        temporal: () => temporal.workflowService.getSystemInfo({}),
        ...(search ? { search: () => search.ping() } : {}),
      },
    });
    const server: Server = await new Promise((resolve) => {
      const listening = app.listen(config.PORT, config.HOST, () => resolve(listening));
    });
    stops.push(() => new Promise((resolve) => server.close(resolve)));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const base = config.PUBLIC_URL ?? `http://localhost:${port}`;
    process.stdout.write(
      [
        '',
        `Signet is running.`,
        `  API          ${base}/api/v1`,
        `  Docs         ${base}/docs`,
        `  Temporal UI  ${temporalUi}`,
        `  Database     ${database.embedded ? `embedded PGlite in ${config.dataDir}` : 'DATABASE_URL'}`,
        `  Create an account:  npx signet account create --email you@example.com --plan business`,
        '',
      ].join('\n') + '\n',
    );
  }
}

main().catch((error) => {
  logger.fatal({ err: error }, 'Signet failed to start');
  void shutdown('failed to start', 1);
});
