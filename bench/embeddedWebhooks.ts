// Webhooks on the embedded default (issue #26, item 3): `npm start` with nothing configured (PGlite and
// the Temporal dev server it starts), a burst delivered to a receiver here while a CPU-bound process per
// core keeps the machine busy. Part of `BENCH_ONLY=webhooks npm run bench`; alone: `npx tsx bench/embeddedWebhooks.ts`.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createAccount } from '../src/accounts/service';
import { createApiKey } from '../src/apiKeys/service';
import { openDatabase } from '../src/db';
import { unitOfWork } from '../src/db/unitOfWork';
import { createEventLog } from '../src/events/service';
import { createWebhookDispatcher } from '../src/webhooks/dispatcher';
import { cores } from './cpu';
import { eachLimited } from './signing';
import { parseAllowList } from '../src/webhooks/addressPolicy';
import { createWebhookPoster } from '../src/webhooks/http';
import { signatureHeaders } from '../src/webhooks/signature';
import { generateWebhookSecret } from '../src/webhooks/secrets';
import { startReceiver } from './webhooks';
import { NODE_FLAGS, START_ENV } from './startCommand';

const REPO = path.resolve(__dirname, '..');

export interface EmbeddedBurst {
  events: number;
  delivered: number;
  /** From the last 201 (or the commit) to the last arrival. */
  drainSeconds: number;
  /** Deliveries a second from the first creation (or the commit) to the last arrival. */
  perSecond: number;
}

export interface EmbeddedWebhookResult {
  busy: boolean;
  burners: number;
  loadAverage: number;
  /** Documents created through the api, CONCURRENCY at a time, and their document.created deliveries. */
  created: EmbeddedBurst & { createdPerSecond: number };
  /** Events committed in one transaction through the event log, timed from the commit. */
  atOnce: EmbeddedBurst;
  /** The plain loop POSTing as many bodies with the same client, on the same busy machine. */
  plainPerSecond: number;
}

const CONCURRENCY = 16;
const WARM_UP = 50;
const free = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** One CPU-bound process per core, each ending on its own after `ms` at most. */
function startBurners(count: number, ms: number): ChildProcess[] {
  return Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${ms}; while (Date.now() < end) {}`], { stdio: 'ignore' }),
  );
}

async function stopAll(children: ChildProcess[]) {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

/**
 * Starts the service on the embedded default in a temporary DATA_DIR, subscribes a webhook of a business
 * account to document.created, and times a burst created through the api (`created` documents) and one
 * committed at once (`atOnce` events), with the machine kept busy by a burner per core when `busy`.
 */
export async function embeddedWebhookBench(options: {
  created: number;
  atOnce: number;
  busy: boolean;
  deadlineMs: number;
  log: (message: string) => void;
}): Promise<EmbeddedWebhookResult> {
  const { log } = options;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-embedded-'));
  const children: ChildProcess[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  try {
    const [port, temporalPort, uiPort] = [await free(), await free(), await free()];
    const env: NodeJS.ProcessEnv = { ...START_ENV, PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH };
    const logFile = path.join(dataDir, 'service.log');
    const out = fs.openSync(logFile, 'a');
    const service = spawn(process.execPath, [...NODE_FLAGS, 'src/main.ts'], {
      cwd: REPO,
      env: {
        ...env,
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        TEMPORAL_PORT: String(temporalPort),
        TEMPORAL_UI_PORT: String(uiPort),
        METRICS_PORT: '0',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_MULTIPLIER: '1000000',
        WEBHOOK_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      },
      stdio: ['ignore', out, out],
    });
    fs.closeSync(out);
    children.push(service);
    const url = `http://127.0.0.1:${port}`;
    log(`embedded default: starting the service in ${dataDir} (PGlite, Temporal dev server on ${temporalPort})`);
    const readyBy = Date.now() + 180_000;
    while (
      !(await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (service.exitCode !== null) throw new Error(`the service exited:\n${fs.readFileSync(logFile, 'utf8').slice(-4000)}`);
      if (Date.now() > readyBy) throw new Error(`the service was not ready after 180 s; see ${logFile}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    // The bench's own connection to the service's PGlite (its socket in DATA_DIR) and dev server.
    const database = await openDatabase({ DATABASE_POOL_MAX: 4, dataDir });
    closers.push(() => database.close());
    const db = database.knex;
    const connection = await Connection.connect({ address: `127.0.0.1:${temporalPort}` });
    closers.push(() => connection.close());
    const client = new Client({ connection });
    const account = await createAccount(db, { email: `embedded-${Date.now()}@example.com`, plan: 'business' });
    const { secret } = await createApiKey(db, account.id);
    const headers = { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' };
    const receiver = await startReceiver(1000);
    closers.push(() => receiver.close());
    const created = await fetch(`${url}/api/v1/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `${receiver.base}/ok/embedded`, events: ['document.created'] }),
    });
    if (created.status !== 201) throw new Error(`creating the webhook: HTTP ${created.status} ${await created.text()}`);

    const createDocuments = async (count: number, prefix: string) => {
      let last = 0;
      await eachLimited(Array.from({ length: count }), CONCURRENCY, async (_, i) => {
        const response = await fetch(`${url}/api/v1/documents`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ fileName: `${prefix}-${i}.pdf`, fileSize: 1000 }),
        });
        if (response.status !== 201) throw new Error(`creating a document: HTTP ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
        last = Date.now();
      });
      return last;
    };
    const waitForArrivals = async (total: number) => {
      const deadline = Date.now() + options.deadlineMs;
      while (receiver.arrivals.size < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      return Math.max(...receiver.arrivals.values());
    };

    // Warm-up on a quiet machine: the first workflow, the JIT, the connections.
    log(`embedded default: warm-up, ${WARM_UP} documents`);
    await createDocuments(WARM_UP, 'warm');
    await waitForArrivals(WARM_UP);

    const burners = options.busy ? cores() : 0;
    if (burners) children.push(...startBurners(burners, options.deadlineMs * 3));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const loadAverage = os.loadavg()[0];

    log(`embedded default: ${options.created} documents created through the api, ${CONCURRENCY} at a time${burners ? `, beside ${burners} CPU burners` : ''}`);
    let before = receiver.arrivals.size;
    const start = Date.now();
    const lastCreated = await createDocuments(options.created, 'burst');
    const lastArrival = await waitForArrivals(before + options.created);
    // A burst's numbers: how long its deliveries took after `drainFrom`, and their rate since `since`.
    const drained = (events: number, arrivedBefore: number, drainFrom: number, last: number, since: number) => {
      const delivered = receiver.arrivals.size - arrivedBefore;
      return { events, delivered, drainSeconds: (last - drainFrom) / 1000, perSecond: delivered / ((last - since) / 1000) };
    };
    const createdResult = {
      ...drained(options.created, before, lastCreated, lastArrival, start),
      createdPerSecond: options.created / ((lastCreated - start) / 1000),
    };

    log(`embedded default: ${options.atOnce} events committed at once`);
    const events = createEventLog([createWebhookDispatcher({ client, taskQueue: 'signet', db, retryScale: 1 })]);
    before = receiver.arrivals.size;
    await unitOfWork(db, async (trx) => {
      for (let i = 0; i < options.atOnce; i++)
        await events.record(trx, account.id, 'document.created', { documentId: `doc_bench_${i}`, fileName: `bench-${i}.pdf`, fileSize: 1234 });
    });
    const committed = Date.now();
    const atOnceLast = await waitForArrivals(before + options.atOnce);
    const atOnce = drained(options.atOnce, before, committed, atOnceLast, committed);

    // The plain loop: as many bodies POSTed with the same client, on the same busy machine.
    const poster = await createWebhookPoster(parseAllowList(['127.0.0.1']), 15_000);
    const plainSecret = generateWebhookSecret();
    const plainStart = performance.now();
    await eachLimited(Array.from({ length: options.atOnce }), CONCURRENCY, async (_, i) => {
      const body = JSON.stringify({
        id: `plain-${i}`,
        type: 'document.created',
        timestamp: new Date().toISOString(),
        data: { documentId: `doc_bench_${i}`, fileName: `bench-${i}.pdf`, fileSize: 1234 },
      });
      await poster.post(`${receiver.base}/ok/plain`, body, signatureHeaders([plainSecret], `plain-${i}`, body));
    });
    const plain = { perSecond: options.atOnce / ((performance.now() - plainStart) / 1000) };
    poster.close();
    await stopAll(children.splice(1));
    return { busy: options.busy, burners, loadAverage, created: createdResult, atOnce, plainPerSecond: plain.perSecond };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await stopAll(children);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const log = (message: string) => console.error(`[embedded] ${message}`);
  void (async () => {
    const result = await embeddedWebhookBench({
      created: Number(process.env.CREATED ?? 300),
      atOnce: Number(process.env.AT_ONCE ?? 1000),
      busy: process.env.BUSY !== '0',
      deadlineMs: 120_000,
      log,
    });
    console.log(JSON.stringify(result, null, 2));
  })();
}
