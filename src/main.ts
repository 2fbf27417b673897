import { loadConfig } from './config';
import { createLogger, logDestinationFor } from './logger';
import { startBanner } from './startBanner';
import { startSystem, type RunningSystem } from './system';

// `npm start`: api + worker in one process, on the embedded defaults for whatever is not configured.
const config = loadConfig();
const logger = createLogger(config.LOG_LEVEL, logDestinationFor(config.NODE_ENV));
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
    const { url, temporalUiUrl, metricsUrl } = running;
    process.stdout.write(`${startBanner({ url, temporalUiUrl, metricsUrl, embeddedDatabase: running.database.embedded }, config)}\n`);
  },
  (error) => {
    logger.fatal({ err: error }, 'Signet failed to start');
    process.exit(1);
  },
);
