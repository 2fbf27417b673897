import type { AddressInfo } from 'node:net';
import { createApp, type AppDeps } from '../../src/app';
import { uploadGate, uploadLimits } from '../../src/api/middleware/uploadGate';
import type { Config } from '../../src/config';
import { createLogger, type Logger } from '../../src/logger';
import { sharedSystem, testConfig } from './system';

export interface TestAppOptions {
  /** Where its log lines go; silent without one. */
  logger?: Logger;
  /** Set config.publicUrl to the URL it listens on, for links in mails and redirects a test follows. */
  publicUrlIsUrl?: boolean;
  /** Deps to use instead of the shared system's or the app's own (its PDF pools, another search backend, a moved clock). */
  deps?: Partial<Pick<AppDeps, 'pdf' | 'pages' | 'search' | 'now'>>;
}

/** The API (createApp) on the shared system's services, with this config (or testConfig of these settings). */
export async function testApp(settings: Record<string, string> | Config = {}, options: TestAppOptions = {}) {
  const system = await sharedSystem();
  const config = isConfig(settings) ? settings : testConfig(settings);
  const uploads = uploadGate(config.MAX_CONCURRENT_UPLOADS, uploadLimits(config));
  const verifyUploads = uploadGate(config.MAX_CONCURRENT_VERIFY_UPLOADS, uploadLimits(config));
  const app = createApp({
    config,
    db: system.database.knex,
    events: system.events,
    logger: options.logger ?? createLogger('silent'),
    readinessChecks: {},
    temporal: system.client,
    webhooks: system.webhooks,
    search: system.search,
    uploads,
    verifyUploads,
    ...options.deps,
  });
  return { app, config, uploads, verifyUploads };
}

/**
 * testApp listening on a port the OS picks. `uploads` is its upload gate's count of slots taken and
 * requests waiting, for a test to wait on.
 */
export async function startApp(settings: Record<string, string> | Config = {}, options: TestAppOptions = {}) {
  const { app, config, uploads, verifyUploads } = await testApp(settings, options);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  if (options.publicUrlIsUrl) config.publicUrl = url;
  return { port, url, uploads: uploads.slots, verifyUploads: verifyUploads.slots, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const isConfig = (settings: Record<string, string> | Config): settings is Config => typeof settings.MAX_CONCURRENT_UPLOADS === 'number';
