import { createApp, type AppDeps } from './app';
import { loadConfig } from './config';
import { createLogger } from './logger';

/**
 * The address the checked-in document (docs/openapi.json), and so the SDK generated from it, names as the
 * server. A running instance serves the same document at /api/v1/openapi.json with its own PUBLIC_URL there.
 */
export const documentedServerUrl = 'http://localhost:3000';

/**
 * The OpenAPI document, built from the route declarations (src/api/route.ts) without a socket, a database,
 * Temporal or Elasticsearch: the app is assembled with inert services, which no route declaration touches.
 * For `npm run openapi` (scripts/openapi.ts) and the tests that read the document.
 */
export function openApiDocument(serverUrl = documentedServerUrl): Record<string, unknown> {
  const config = loadConfig({
    NODE_ENV: 'test',
    PUBLIC_URL: serverUrl,
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
  return createApp(deps).openApiDocument() as unknown as Record<string, unknown>;
}
