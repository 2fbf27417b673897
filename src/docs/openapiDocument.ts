import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppDeps } from '../app';
import { loadConfig } from '../config';
import { createLogger } from '../logger';

/**
 * The OpenAPI document the api serves at /api/v1/openapi.json, built without a database, Temporal or
 * Elasticsearch: the app is assembled with inert services (no route runs) and asked for it once on a
 * loopback port. For the SDK's generator (scripts/openapi.ts) and the tests that read the document.
 */
export async function openApiDocument(publicUrl = 'http://localhost:3000'): Promise<Record<string, unknown>> {
  const config = loadConfig({
    NODE_ENV: 'test',
    PUBLIC_URL: publicUrl,
    // Given, so that assembling the app reads no secret from (or writes one to) a data directory.
    SIGNING_TOKEN_SECRET: 'x'.repeat(32),
    WEBHOOK_SECRET_KEY: '0'.repeat(64),
    LOG_LEVEL: 'silent',
  });
  const inert = {} as never;
  const deps: AppDeps = {
    config,
    db: inert,
    events: inert,
    logger: createLogger('silent'),
    readinessChecks: inert,
    temporal: inert,
    webhooks: inert,
    search: inert,
    dashboard: inert,
    apiKeys: inert,
    pdf: inert,
    textTags: inert,
    pages: inert,
  };
  const server = http.createServer(createApp(deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
    if (!response.ok) throw new Error(`GET /api/v1/openapi.json answered ${response.status}`);
    return (await response.json()) as Record<string, unknown>;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
