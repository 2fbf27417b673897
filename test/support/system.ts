import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startSystem, type RunningSystem } from '../../src/system';
import { createAccount } from '../../src/accounts/service';
import type { Plan } from '../../src/domain/plans';
import { createApiKey } from '../../src/apiKeys/service';
import { createElasticsearchClient } from '../../src/search/elasticsearch';
import { archiveRenewalScheduleId, searchIndexerWorkflowId, sweeperWorkflowId, sweepNow } from '../../src/temporal/client';
import { client } from './http';

// Integration tests run twice: against the real PostgreSQL server (SIGNET_TEST_DB=postgres, DATABASE_URL)
// and against the embedded PGlite (SIGNET_TEST_DB=pglite). Both use the Temporal server at TEMPORAL_ADDRESS
// that `npm test` starts. With none of the services (no TEMPORAL_ADDRESS, no ELASTICSEARCH_URL), a PGlite
// run's system starts a Temporal dev server of its own and searches with PostgreSQL, as `npm start` does.
export const databaseKind = process.env.SIGNET_TEST_DB ?? 'postgres';

export function testConfig(overrides: Record<string, string> = {}): Config {
  if (!process.env.TEMPORAL_ADDRESS && databaseKind !== 'pglite')
    throw new Error('TEMPORAL_ADDRESS is not set: run the tests with `npm test`, which starts the services, or with SIGNET_TEST_DB=pglite.');
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    METRICS_PORT: '0', // several systems run on one machine at once
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'signet-test-')),
    // A task queue of its own, so workflows left on the shared Temporal server by another run never reach this worker.
    TEMPORAL_TASK_QUEUE: `signet-test-${databaseKind}-${process.pid}`,
    // Webhook receivers run on 127.0.0.1; retries come after milliseconds and seconds, not hours.
    WEBHOOK_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    WEBHOOK_RETRY_SCALE: '0.001',
    WEBHOOK_TIMEOUT_MS: '1000',
    // Every test signs up from 127.0.0.1: the limit itself is tested on an app of its own (consolePasswordReset.test.ts).
    CONSOLE_SIGNUPS_PER_HOUR: '100000',
    // The same for public verification: its limit is tested on an app of its own (verification.test.ts).
    VERIFY_REQUESTS_PER_HOUR: '100000',
    // And for upload slots, which a client address holds one at a time and waits for a bounded time: tested
    // on apps of their own (slowUploads.test.ts), from addresses of their own.
    MAX_UPLOADS_PER_CLIENT_ADDRESS: '1000',
    UPLOAD_SLOT_WAIT_MS: '600000',
    // The index is a copy of one database: the shared PostgreSQL database has one prefix for every run on it,
    // each run's fresh PGlite database a prefix of its own.
    ELASTICSEARCH_INDEX_PREFIX: databaseKind === 'pglite' ? `signet-test-pglite-${process.pid}-` : 'signet-test-postgres-',
    ...overrides,
  };
  if (databaseKind === 'pglite') delete env.DATABASE_URL;
  else if (!env.DATABASE_URL) throw new Error('DATABASE_URL is not set for SIGNET_TEST_DB=postgres.');
  delete env.PUBLIC_URL;
  return loadConfig(env);
}

let shared: Promise<RunningSystem> | undefined;

/** One running api + worker for the whole integration run (fresh accounts per test keep tests apart). */
export function sharedSystem(): Promise<RunningSystem> {
  shared ??= startSystem(testConfig(), createLogger(process.env.LOG_LEVEL ?? 'silent'));
  return shared;
}

/**
 * In a describe: start the shared system before its tests, with the time a first start may take on a
 * loaded machine (the run's first file to need it waits for it). Not at a file's top level: there a hook
 * is a root hook, run for every file of the run.
 */
export function useSharedSystem() {
  before(async function () {
    this.timeout(120_000);
    await sharedSystem();
  });
}

export async function stopSharedSystem() {
  if (!shared) return;
  const system = await shared;
  shared = undefined;
  // A PGlite run's indices copy a database that ends with the run.
  await stopLeavingNothing(system, { indices: databaseKind === 'pglite' });
}

/**
 * Stops a system of a test's own and removes what would outlive it on the shared services: its sweeper
 * and its search indexer (which run on a task queue no worker serves after it), and its indices.
 */
export async function stopLeavingNothing(system: RunningSystem | undefined, { indices = true } = {}) {
  if (!system) return;
  const queue = system.config.TEMPORAL_TASK_QUEUE;
  for (const workflowId of [sweeperWorkflowId(queue), searchIndexerWorkflowId(queue)])
    await system.client.workflow
      .getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
  await system.client.schedule
    .getHandle(archiveRenewalScheduleId(queue))
    .delete()
    .catch(() => undefined);
  await system.stop();
  if (indices && system.config.ELASTICSEARCH_URL) {
    const elastic = createElasticsearchClient(system.config.ELASTICSEARCH_URL);
    await elastic.indices.delete({ index: `${system.config.ELASTICSEARCH_INDEX_PREFIX}*` }).catch(() => undefined);
    await elastic.close();
  }
}

/**
 * Has the sweeper of `system`'s task queue sweep now, and waits for what it did. It starts the sweeper
 * if none runs: a system of a test's own, stopped, takes the shared task queue's sweeper with it.
 */
export function runSweeper(system: RunningSystem) {
  return sweepNow(system.client, system.config.TEMPORAL_TASK_QUEUE);
}

/** A fresh account with an API key, and a request function bound to that key. */
export async function createTestAccount(plan: Plan = 'business') {
  const system = await sharedSystem();
  const db = system.database.knex;
  const account = await createAccount(db, { email: `owner-${Math.random().toString(36).slice(2)}@example.com`, plan });
  const { secret, apiKey } = await createApiKey(db, account.id);
  return { account, apiKey: secret, apiKeyId: apiKey.id, request: client(system.url!, secret), db, system };
}
