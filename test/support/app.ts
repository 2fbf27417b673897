import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app';
import { uploadGate } from '../../src/api/middleware/uploadGate';
import { createLogger } from '../../src/logger';
import { sharedSystem, testConfig } from './system';

/**
 * The API (createApp) on the shared system's services with these settings, listening on a port the OS
 * picks. `uploads` is its upload gate's count of slots taken and requests waiting, for a test to wait on.
 */
export async function startApp(settings: Record<string, string> = {}) {
  const system = await sharedSystem();
  const config = testConfig(settings);
  const uploads = uploadGate(config.MAX_CONCURRENT_UPLOADS);
  const app = createApp({
    config,
    db: system.database.knex,
    logger: createLogger('silent'),
    readinessChecks: {},
    temporal: system.client,
    webhooks: system.webhooks,
    search: system.search,
    uploads,
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}`, uploads: uploads.slots, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
