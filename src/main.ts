import { loadConfig } from './config';
import { createLogger } from './logger';
import { startSystem, type RunningSystem } from './system';

// `npm start`: api + worker in one process, on the embedded defaults for whatever is not configured.
const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL);
let system: RunningSystem | undefined;

async function shutdown(signal: string) {
  logger.info({ signal }, 'shutting down');
  await system?.stop();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown('SIGINT'));
process.once('SIGTERM', () => void shutdown('SIGTERM'));

startSystem(config, logger).then(
  (running) => {
    system = running;
    if (!running.url) return;
    process.stdout.write(
      [
        '',
        'Signet is running.',
        `  API          ${running.url}/api/v1`,
        `  Docs         ${running.url}/docs`,
        `  Temporal UI  ${running.temporalUiUrl ?? 'the UI of your Temporal cluster (TEMPORAL_ADDRESS)'}`,
        `  Database     ${running.database.embedded ? `embedded PGlite in ${config.dataDir}` : 'DATABASE_URL'}`,
        `  Metrics      ${running.metricsUrl ?? 'off (METRICS_PORT=off)'}`,
        '  Create an account:  npx signet account create --email you@example.com --plan business',
        '',
      ].join('\n') + '\n',
    );
  },
  (error) => {
    logger.fatal({ err: error }, 'Signet failed to start');
    process.exit(1);
  },
);
