import http from 'node:http';
import Koa from 'koa';
import type { Client } from '@temporalio/client';
import type { Config } from './config';
import type { Db } from './db';
import type { EventLog } from './events/service';
import type { Logger } from './logger';
import { accountRoutes } from './accounts/routes';
import type { DashboardBackend } from './dashboard/backend';
import { dashboardRoutes } from './dashboard/routes';
import { createDashboardBackend } from './dashboard/setup';
import { documentRoutes } from './documents/routes';
import { docsRoutes } from './docs/routes';
import { mailDevRoutes } from './mail/devRoutes';
import type { SearchBackend } from './search/backend';
import { searchRoutes } from './search/routes';
import { signingRequestRoutes } from './signingRequests/routes';
import { bulkSendRoutes } from './bulkSends/routes';
import { signerPortalRoutes } from './signerPortal/routes';
import { webhookRoutes } from './webhooks/routes';
import type { Webhooks } from './webhooks/setup';
import { loadWebhookSecretKey } from './webhooks/secrets';
import { healthRoutes, type ReadinessChecks } from './health/routes';
import { type ApiKeyAuthenticator, uncachedAuthenticator } from './apiKeys/cache';
import { authenticate } from './apiKeys/authenticate';
import { memberRoutes } from './members/routes';
import { apiKeyRoutes } from './apiKeys/routes';
import { createRateLimiter } from './api/middleware/rateLimit';
import { uploadGate, uploadLimits, type UploadGate } from './api/middleware/uploadGate';
import { clientAddress } from './api/middleware/clientAddress';
import { readDeadline } from './api/middleware/readDeadline';
import { requestContext } from './api/middleware/requestContext';
import { canonicalPath } from './api/middleware/canonicalPath';
import { contentEncoding } from './api/middleware/contentEncoding';
import { strictTransportSecurity } from './api/middleware/strictTransportSecurity';
import { hashIdempotentBodies, idempotencyKeys } from './api/middleware/idempotency';
import { createRouter } from './api/router';
import { buildOpenApiDocument, createOpenApiRegistry } from './api/openapi';
import { createPdfInspector, type PdfInspector } from './pdf/inspect';
import { createPageRenderer, type PageRenderer } from './pdf/pageRenderer';
import { createTextTagFinder, type TextTagFinder } from './pdf/textTags';
import { templateRoutes } from './templates/routes';
import { consoleRoutes } from './console/routes';
import { verificationPageRoutes, verificationRoutes } from './verification/routes';
import { recordRequestDuration } from './metrics';

export interface AppDeps {
  config: Config;
  db: Db;
  /** Where the api's changes record their events: src/system.ts names its consumers. */
  events: EventLog;
  logger: Logger;
  readinessChecks: ReadinessChecks;
  temporal: Client;
  webhooks: Webhooks;
  search: SearchBackend;
  /** The dashboard's numbers; without one, the app aggregates over what search uses (dashboard/setup.ts). */
  dashboard?: DashboardBackend;
  /** How API keys are checked; without one, every request looks its key up in the database. */
  apiKeys?: ApiKeyAuthenticator;
  /** Checks uploaded PDFs; without one, the app gets its own pool, whose children start with its first upload. */
  pdf?: PdfInspector;
  /** Finds text tags in PDFs; without one, the app gets its own pool, whose children start with its first search. */
  textTags?: TextTagFinder;
  /** Renders pages; without one, the app gets its own pool, whose children start with its first page. */
  pages?: PageRenderer;
  /** The one gate of large bodies, REST API and console together; without one, the app gets its own of MAX_CONCURRENT_UPLOADS slots. */
  uploads?: UploadGate;
  /** The gate of public verification's large bodies; without one, the app gets its own of MAX_CONCURRENT_VERIFY_UPLOADS slots. */
  verifyUploads?: UploadGate;
  /** The clock of Idempotency-Keys' leases and expiry; tests move it. */
  now?: () => Date;
}

export function createApp({
  config,
  db,
  events,
  logger,
  readinessChecks,
  temporal,
  webhooks,
  search,
  dashboard = createDashboardBackend(search, db),
  apiKeys = uncachedAuthenticator(db),
  pdf = createPdfInspector(config),
  textTags = createTextTagFinder(config),
  pages = createPageRenderer(config),
  uploads = uploadGate(config.MAX_CONCURRENT_UPLOADS, uploadLimits(config)),
  verifyUploads = uploadGate(config.MAX_CONCURRENT_VERIFY_UPLOADS, uploadLimits(config)),
  now,
}: AppDeps) {
  // X-Forwarded-For is believed only from the proxies named in TRUST_PROXY: the client's address goes
  // into the audit trail and the sealed certificate, so it is evidence, not a header anyone may set.
  const app = new Koa();
  const openapi = createOpenApiRegistry();
  // Every method Node accepts is one it knows, so a path without the method asked for is 405 with Allow, not 501.
  const api = createRouter({ prefix: '/api/v1', methods: http.METHODS });
  const rateLimit = createRateLimiter(db, config.RATE_LIMIT_MULTIPLIER);

  // The routes' own description, for this instance's address (PUBLIC_URL): docs/openapi.json is the same for
  // http://localhost:3000, built without serving (src/openapiDocument.ts).
  const openApiDocument = () => buildOpenApiDocument(openapi, config.publicUrl);
  let served: unknown;
  api.get('/openapi.json', (ctx) => {
    served ??= openApiDocument();
    ctx.body = served;
  });
  // Public, like the OpenAPI document: registered before the API key check.
  verificationRoutes({ router: api, openapi, db, config, rateLimit, uploadGate: verifyUploads, pdf });
  api.use(authenticate(apiKeys));
  const idempotency = idempotencyKeys({
    db,
    now,
    // Kept answers are secret at rest as webhook secrets are: by the same key (a key derived from it).
    secretKey: loadWebhookSecretKey(config.WEBHOOK_SECRET_KEY, config.dataDir),
    // The largest body a POST takes: a file as base64 in JSON, with its fields.
    maxBodyBytes: Math.ceil((config.MAX_UPLOAD_BYTES * 4) / 3) + 1024 * 1024,
  });
  const deps = {
    router: api,
    db,
    events,
    config,
    rateLimit,
    openapi,
    idempotency,
    temporal,
    webhooks,
    search,
    dashboard,
    pdf,
    textTags,
    pages,
    uploadGate: uploads,
  };
  accountRoutes(deps);
  apiKeyRoutes(deps);
  memberRoutes(deps);
  documentRoutes(deps);
  templateRoutes(deps);
  signingRequestRoutes(deps);
  bulkSendRoutes(deps);
  webhookRoutes(deps);
  searchRoutes(deps);
  dashboardRoutes(deps);
  const signerPortal = signerPortalRoutes({ db, events, temporal, openapi, config, logger, pdf, uploadGate: uploads });

  const health = healthRoutes(readinessChecks);
  const docs = docsRoutes();
  app.use(hashIdempotentBodies()); // before anything awaits, so that it sees every byte of a body (idempotency.ts)
  app.use(recordRequestDuration()); // outermost: it sees the status the error rendering chose
  app.use(requestContext(logger));
  app.use(strictTransportSecurity(config));
  app.use(canonicalPath()); // before any router: they and their guards see one spelling of a path
  app.use(contentEncoding()); // before any body parser
  app.use(readDeadline(config));
  if (config.trustedProxies.length) app.use(clientAddress(config.trustedProxies));
  // Errors outside the middleware chain, e.g. a socket that broke after the response was decided. A client
  // hanging up (ECONNRESET, EPIPE, an HTTP parse error at end of stream) is not our failure: info, not error.
  app.on('error', (error: Error & { code?: string }) => {
    const code = error?.code ?? '';
    if (code === 'ECONNRESET' || code === 'EPIPE' || code.startsWith('HPE_') || error?.message === 'aborted') {
      logger.info({ code, reason: error.message }, 'client connection closed early');
    } else {
      logger.error({ err: error }, 'unhandled server error');
    }
  });
  // /api/… is the current version: the same handlers as /api/v1/….
  app.use(async (ctx, next) => {
    if (ctx.path === '/api' || (ctx.path.startsWith('/api/') && !ctx.path.startsWith('/api/v1/') && ctx.path !== '/api/v1')) {
      ctx.path = `/api/v1${ctx.path.slice('/api'.length)}`;
    }
    await next();
  });
  // Each router passed costs a match over all its paths: the API's requests, most of them, go to its router
  // first, and no other request goes through it. Only paths under its prefix can match it, and no other
  // router has one there, so this changes no answer; allowedMethods stays last, after every router.
  const apiRoutes = api.routes() as Koa.Middleware;
  app.use((ctx, next) => (ctx.path.startsWith('/api/v1') ? apiRoutes(ctx, next) : next()));
  app.use(health.routes());
  app.use(docs.routes());
  app.use(signerPortal.routes());
  app.use(verificationPageRoutes().routes());
  app.use(consoleRoutes(deps).routes()); // the REST API's dependencies, the same upload gate among them
  if (config.NODE_ENV !== 'production') app.use(mailDevRoutes(db)); // loopback clients only
  app.use(api.allowedMethods({ throw: false }));
  return Object.assign(app, { openApiDocument });
}
