import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Client } from '@temporalio/client';
// The one place infrastructure names what lies above it, and by type only: the route kit's bag of
// dependencies lists the resources' services that system.ts builds and every routes.ts receives.
import type { Config } from '../config';
import type { Db } from '../db';
import type { EventLog } from '../events/service';
import type { DashboardBackend } from '../dashboard/backend';
import type { PdfInspector } from '../pdf/inspect';
import type { PageRenderer } from '../pdf/pageRenderer';
import type { TextTagFinder } from '../pdf/textTags';
import type { SearchBackend } from '../search/backend';
import type { Webhooks } from '../webhooks/setup';
import type { RateLimit } from './middleware/rateLimit';

/** What every resource's route file is given. */
export interface RouteDeps {
  router: Router;
  db: Db;
  /** Records events in the transaction of their change, and hands them to their consumers (src/events/service.ts). */
  events: EventLog;
  config: Config;
  rateLimit: RateLimit;
  openapi: OpenAPIRegistry;
  temporal: Client;
  webhooks: Webhooks;
  /** Search: Elasticsearch, or PostgreSQL without it. */
  search: SearchBackend;
  /** The dashboard's aggregations, over what search uses. */
  dashboard: DashboardBackend;
  /** The process's one upload gate (uploadGate.ts), shared by every route that reads a large body: REST API and console. */
  uploadGate: Middleware;
  /** Checks uploaded PDFs in a pool of child processes. */
  pdf: PdfInspector;
  /** Finds text tags such as {{signature:tenant}} in PDFs, in a pool of child processes. */
  textTags: TextTagFinder;
  /** Renders pages of PDFs for the console and template previews, in a pool of child processes. */
  pages: PageRenderer;
}
