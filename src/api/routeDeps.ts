import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db';
import type { EventLog } from '../events/service';
import type { PdfInspector } from '../pdf/inspect';
import type { PageRenderer } from '../pdf/pageRenderer';
import type { TextTagFinder } from '../pdf/textTags';
import type { RateLimit } from './middleware/rateLimit';

/**
 * What every resource's route file is given: the route kit and the services below the api. A resource
 * above it (search, the dashboard, webhooks) adds its own to the type of its routes' deps.
 */
export interface RouteDeps {
  router: Router;
  db: Db;
  /** Records events in the transaction of their change, and hands them to their consumers (src/events/service.ts). */
  events: EventLog;
  config: Config;
  rateLimit: RateLimit;
  openapi: OpenAPIRegistry;
  /** Idempotency-Key on the API's POSTs, run by the route kit after the scope check (middleware/idempotency.ts). */
  idempotency: Middleware;
  temporal: Client;
  /** The process's one upload gate (uploadGate.ts), shared by every route that reads a large body: REST API and console. */
  uploadGate: Middleware;
  /** Checks uploaded PDFs in a pool of child processes. */
  pdf: PdfInspector;
  /** Finds text tags such as {{signature:tenant}} in PDFs, in a pool of child processes. */
  textTags: TextTagFinder;
  /** Renders pages of PDFs for the console and template previews, in a pool of child processes. */
  pages: PageRenderer;
}
