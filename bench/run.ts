// `npm run bench`: throughput of the api against a bare Koa app, the rate limiter's own cost, and
// the memory of the api + worker process, on the real PostgreSQL and Temporal. Prints a markdown
// report and writes it to bench/results.md. Missed goals are reported, never a failing exit code.
// BENCH_ONLY=read,signing runs only those groups of scenarios (see GROUPS) and only prints its report.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Context } from 'koa';
import type { Client } from '@temporalio/client';
import autocannon from 'autocannon';
import { createAccount } from '../src/accounts/service';
import { createApiKey } from '../src/apiKeys/service';
import { createRateLimiter } from '../src/api/middleware/rateLimit';
import { migrateLatest, openDatabase, type Db } from '../src/db';
import { cores, cpuMeter, pidListeningOn } from './cpu';
import { hostileUploads, sampleFamilyMemory } from './hostilePdfs';
import { PACKET_DOCUMENTS, PACKET_SIGNERS, packetsAlone } from './packets';
import { makeBigPdf, makeUploadPdf, multipartBody } from './pdf';
import { median, percentile, type Stats } from './stats';
import {
  connectTemporal,
  ECHO_TASK_QUEUE,
  echoUpdates,
  EMPTY_WORKFLOW_TIMEOUT,
  endToEnd,
  makeSmallPdf,
  prepareEndToEnd,
  rawStarts,
  terminateWorkflows,
  type StartSample,
} from './signing';
import { webhookBench, type Round, type WebhookBenchResult } from './webhooks';
import { embeddedWebhookBench, type EmbeddedWebhookResult } from './embeddedWebhooks';
import { searchBench } from './search';
import { START_COMMAND } from './startCommand';
import { cleanUp, cleanups, servicesEnv, startServer } from './processes';
import {
  countTexts,
  createCost,
  drainTexts,
  steadyCost,
  sustainableRate,
  textSearchLag,
  type CreateCost,
  type SteadyCost,
  type TextDrain,
  type TextLag,
} from './textSearch';

const REPO = path.resolve(__dirname, '..');
const CONNECTIONS = 32;
const WARMUP_SECONDS = 2;
/** The service's index prefix: the tests' database, one database, one index prefix. */
const INDEX_PREFIX = 'signet-test-postgres-';
const SECONDS = 8;
const ROUNDS = 3;
const LIMITER_CALLS = 2000;
const UPLOADS = 10;
const UPLOAD_BYTES = 25 * 1024 * 1024; // the service's default MAX_UPLOAD_BYTES
const RATE_LIMIT_MULTIPLIER = 1_000_000; // the hourly limits would stop (c) after 1000 requests
const SIGNING_CONNECTIONS = 16; // POST /signatures, and as many workflow starts in flight for its baseline
const E2E_REQUESTS = 200;
const E2E_CONCURRENCY = 8;
const E2E_WARM_UP = 2 * E2E_CONCURRENCY; // untimed signs (and echo updates) first
const E2E_DEADLINE_MS = 120_000;
const E2E_ALONE_REQUESTS = 40; // signed one at a time, against (f) one at a time
const PACKET_REQUESTS = 20; // of each kind (3 documents and 3 signers; 1 and 1), one at a time, interleaved
const PACKET_WARM_UP = 3; // untimed ones of each kind first
const GOALS = {
  readOfQuery: 0.5, // (b) req/s against (a1), the bare app making one query
  readP99Ms: 25,
  signOfUpdate: 3, // one at a time, sign → HTTP 200 p99 against (f), a raw update round trip
  signOfCpuFloor: 3, // 8 at a time, sign → HTTP 200 p99 against the CPU floor: the same work on the same cores
  completedP99Ms: 500, // last sign → signing_request.completed
  packetCompletedOfSingle: 1.5, // one at a time, 3 documents and 3 signers: last sign → completed p99 against 1 and 1
  packetSealOfSingle: 3, // one at a time, sealing 3 documents (the completeRequest activity) p99 against sealing 1
  peakRssMb: 400,
  uploadRssMb: 200, // ten concurrent 25 MB uploads: growth of the api
  uploadFamilyRssMb: 500, // the same, the api with its PDF processes
  uploadOfCreate: 0.5, // (c2) req/s against (c)
  foundByTextMs: 5000, // an upload at (c2)'s rate, from its 201 to being found by its text
  hostileHealthzMs: 100, // slowest /healthz while a hostile PDF is uploaded
  hostileGrowthMb: 300, // growth of service + children RSS meanwhile
  hostileAnswerSeconds: 15,
  webhookOfPlain: 0.3, // deliveries/s of a burst against the plain loop POSTing the same bodies
  webhookBurstLagP99Ms: 2000,
  webhookPacedLagP99Ms: 100,
  webhookBesideDownOfPaced: 1.5, // a healthy endpoint's paced lag p99 beside a failing one, against alone ("within noise")
  embeddedDrainSeconds: 3, // embedded default, busy machine: last document created through the api → last delivery
  embeddedOfPlain: 0.3, // embedded default, busy machine: a burst committed at once against the plain loop
};
const TEXT_DRAIN_DEADLINE_MS = 10 * 60_000;
const TEXT_LAG_SECONDS = 15;
const UPLOAD_COST_SECONDS = 5; // uploads at (c2)'s rate, then creates at (c)'s, no searches: the CPU of each
/** (c)'s body: a document created without its PDF. */
const metadataOnly = { body: JSON.stringify({ fileName: 'bench.pdf', fileSize: 1234 }), contentType: 'application/json' };
const STEADY_SECONDS = 20; // uploads at a steady rate, then their texts: the CPU of an upload with its text
const SUSTAINED_SECONDS = 20; // uploads at the rate that CPU allows, tracers among them
// Of that rate: at 100% of the cores any hiccup is never caught up (a queue at full utilisation grows
// without bound), so a load the cores carry is measured with the headroom any capacity plan keeps.
const SUSTAINED_SHARE = 0.8;
const WEBHOOK_EVENTS = 1000;
const WEBHOOK_FAN_OUT_ENDPOINTS = 10;
const WEBHOOK_FAN_OUT_EVENTS = 200; // per endpoint
const WEBHOOK_DOWN_PENDING = 1000;
const WEBHOOK_PACED_EVENTS = 200;
const WEBHOOK_PACED_RATE = 10; // events per second, well below what the pipeline sustains
const WEBHOOK_CONCURRENCY = 16;
const WEBHOOK_DEADLINE_MS = 180_000;
const EMBEDDED_CREATED = 300; // documents created through the api on the embedded default
const EMBEDDED_AT_ONCE = 1000; // events committed at once there
// Each run its own: a worker left over from an earlier run (or another run beside it) would take its tasks.
const TASK_QUEUE = `signet-bench-${randomUUID().slice(0, 8)}`;

/**
 * The scenarios, in groups that BENCH_ONLY (comma-separated) can pick; all when it is unset:
 * memory (the uploads, peak RSS), read ((a) (a1) (a2) (b)), write ((c) and (c2), the PDF upload), hostile
 * (hostile PDFs: /healthz and memory while each is refused), limiter, signing ((d) (e), (f) and the
 * end-to-end signs), webhooks, search.
 */
const GROUPS = ['memory', 'read', 'write', 'hostile', 'limiter', 'signing', 'webhooks', 'search'] as const;
type Group = (typeof GROUPS)[number];

function selectedGroups(): Set<Group> {
  const names = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) return new Set(GROUPS);
  const unknown = names.filter((name) => !(GROUPS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: no group ${unknown.join(', ')}; the groups are ${GROUPS.join(', ')}`);
  return new Set(names as Group[]);
}

// ---------------------------------------------------------------- cleanup
// Everything started is undone in reverse order, on success, on error and on Ctrl-C alike.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`[bench] ${signal}: cleaning up`);
    void cleanUp('bench').finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- small helpers
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message: string) => console.error(`[bench] ${message}`);

/** `bash <script> <args>`, stdout captured, stderr passed through so provisioning progress shows. */
function bash(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', args, { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`bash ${args.join(' ')} exited with ${code}`))));
  });
}

/** Uses DATABASE_URL and TEMPORAL_ADDRESS from the environment, or starts the test services (and stops them at the end). */
async function services(): Promise<Record<string, string | undefined>> {
  const { DATABASE_URL, TEMPORAL_ADDRESS, ELASTICSEARCH_URL } = process.env;
  if (DATABASE_URL && TEMPORAL_ADDRESS) return { DATABASE_URL, TEMPORAL_ADDRESS, ELASTICSEARCH_URL };
  log('DATABASE_URL/TEMPORAL_ADDRESS not set: starting the services with scripts/services.sh up');
  cleanups.push(() => bash(['scripts/services.sh', 'down']));
  await bash(['scripts/services.sh', 'up']);
  log('waiting 20 s: a freshly started Elasticsearch keeps a core busy for a while after it answers');
  await sleep(20_000);
  return servicesEnv();
}

// BENCH_PROFILE_DIR=<dir>: each server writes a V8 CPU profile there when it stops (open it in Chrome's DevTools).
const profileFlags = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
// The bench is one client address standing in for many: its concurrent uploads may hold every slot, and wait for one.
const oneClientManyUploads = { MAX_UPLOADS_PER_CLIENT_ADDRESS: '1000', UPLOAD_SLOT_WAIT_MS: '180000' };

/** VmRSS or VmHWM (peak RSS) of a process, in MB. */
function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) / 1024;
}

/**
 * Peak RSS of a process, per phase and over its whole life. Writing 5 to /proc/<pid>/clear_refs
 * (Linux ≥ 4.0) resets VmHWM to the current RSS, so the next reading is the peak of what followed;
 * the peaks read before each reset are kept for the whole-run figure.
 */
class PeakRss {
  private earlier = 0;
  resettable = true;
  constructor(private readonly pid: number) {}
  /** Peak since the last reset (or since the process started). */
  sinceReset() {
    return memoryMb(this.pid, 'VmHWM');
  }
  reset() {
    this.earlier = Math.max(this.earlier, this.sinceReset());
    try {
      fs.writeFileSync(`/proc/${this.pid}/clear_refs`, '5');
    } catch {
      this.resettable = false; // e.g. no permission: the readings then all run from process start
    }
  }
  wholeRun() {
    return Math.max(this.earlier, this.sinceReset());
  }
}

// ---------------------------------------------------------------- HTTP scenarios
interface Scenario {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The status every response must have; anything else is reported as an error. */
  status: number;
  connections?: number;
}
interface Sample {
  rps: number;
  p50: number;
  p99: number;
  bad: number;
}

/**
 * One autocannon run. Latency percentiles are computed here from every response's own time: autocannon's
 * histogram keeps whole milliseconds, too coarse for the bare server.
 */
function runAutocannon(scenario: Scenario, seconds: number): Promise<Sample> {
  const latencies: number[] = [];
  let bad = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: scenario.url,
        method: scenario.method ?? 'GET',
        headers: scenario.headers,
        body: scenario.body,
        connections: scenario.connections ?? CONNECTIONS,
        duration: seconds,
      },
      (error, result) => {
        if (error) return reject(error);
        latencies.sort((x, y) => x - y);
        resolve({ rps: latencies.length / result.duration, p50: percentile(latencies, 50), p99: percentile(latencies, 99), bad: bad + result.errors });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status === scenario.status) latencies.push(ms);
      else bad++;
    });
  });
}

// ---------------------------------------------------------------- rate limiter cost
/**
 * The limiter middleware of the api (createRateLimiter: one RateLimiterPostgres upsert per request)
 * timed on its own against PostgreSQL: one call at a time (its bare cost, a round trip and a row
 * update), then CONNECTIONS at a time on the same account (as in (c): one row, so the updates queue
 * on its row lock and on the pool).
 */
async function limiterCost(db: Db, accountId: string) {
  const middleware = createRateLimiter(db, RATE_LIMIT_MULTIPLIER)('POST /documents');
  const ctx = { state: { account: { id: accountId, plan: 'business' } }, set: () => undefined } as unknown as Context;
  const timeOne = async () => {
    const started = process.hrtime.bigint();
    await middleware(ctx, async () => undefined);
    return Number(process.hrtime.bigint() - started) / 1000; // µs
  };
  const timeMany = async (calls: number, concurrency: number) => {
    const times: number[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = 0; i < calls / concurrency; i++) times.push(await timeOne());
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    times.sort((x, y) => x - y);
    return { p50: percentile(times, 50), p99: percentile(times, 99), perSecond: times.length / seconds };
  };
  await timeMany(200, 1); // warm-up: connections, prepared statement
  return { sequential: await timeMany(LIMITER_CALLS, 1), concurrent: await timeMany(LIMITER_CALLS, CONNECTIONS) };
}

// ---------------------------------------------------------------- uploads
/**
 * UPLOADS concurrent multipart uploads of one big PDF, with the service's RSS before and at its peak
 * during them. VmRSS is also sampled every 10 ms, in case VmHWM cannot be reset.
 */
async function uploadMemory(baseUrl: string, headers: Record<string, string>, pid: number, peaks: PeakRss) {
  const pdf = new Blob([new Uint8Array(await makeBigPdf(UPLOAD_BYTES))], { type: 'application/pdf' });
  const before = memoryMb(pid, 'VmRSS');
  peaks.reset();
  const family = sampleFamilyMemory(pid); // the service and its PDF processes
  let sampled = before;
  const sampler = setInterval(() => {
    if (fs.existsSync(`/proc/${pid}`)) sampled = Math.max(sampled, memoryMb(pid, 'VmRSS')); // (gone: the uploads fail and say so)
  }, 10);
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: UPLOADS }, async (_, i) => {
      const form = new FormData();
      form.append('file', pdf, `bench-${i}.pdf`);
      const response = await fetch(`${baseUrl}/api/v1/documents`, { method: 'POST', headers, body: form, signal: AbortSignal.timeout(180_000) });
      await response.arrayBuffer();
      return response.status;
    }),
  ).finally(() => {
    clearInterval(sampler);
    family.stop();
  });
  const seconds = (performance.now() - started) / 1000;
  const peak = Math.max(sampled, peaks.resettable ? peaks.sinceReset() : 0);
  await sleep(2000);
  return { bytes: pdf.size, before, peak, after: memoryMb(pid, 'VmRSS'), seconds, statuses, familyBefore: family.start, familyPeak: family.peak() };
}

// ---------------------------------------------------------------- main
async function main() {
  const only = selectedGroups();
  const full = only.size === GROUPS.length;
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0];
  const serviceEnv = await services();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-bench-'));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // A business account and key of our own; deleting the account at the end removes its documents,
  // files and events (ON DELETE CASCADE), and its rate-limit rows are removed by key.
  const database = await openDatabase({ DATABASE_URL: serviceEnv.DATABASE_URL, DATABASE_POOL_MAX: 10, dataDir: tmp });
  cleanups.push(() => database.close());
  const db = database.knex;
  await migrateLatest(db);
  const account = await createAccount(db, { email: `bench-${Date.now()}@example.com`, plan: 'business', name: 'Signet benchmark' });
  cleanups.push(async () => {
    await db('rate_limits').where('key', 'like', `%${account.id}`).del();
    // Its signing requests first: their signing_request_documents hold its documents (no cascade there).
    await db('signing_requests').where({ account_id: account.id }).del();
    await db('accounts').where({ id: account.id }).del();
  });
  const { secret } = await createApiKey(db, account.id);
  const auth = { Authorization: `Bearer ${secret}` };

  log(
    `scenarios: ${[...only].join(', ')}${full ? '' : ' (BENCH_ONLY)'}; starting ${only.has('read') || only.has('write') ? 'the bare Koa server and ' : ''}the service (api + worker)`,
  );
  const bare =
    only.has('read') || only.has('write')
      ? await startServer({
          name: 'bare',
          script: 'bench/bareServer.ts',
          env: { ...process.env, DATABASE_URL: serviceEnv.DATABASE_URL, ...oneClientManyUploads },
          readyPath: '/',
          logDir: tmp,
          flags: profileFlags,
        })
      : null;
  const service = await startServer({
    name: 'service',
    script: 'src/main.ts',
    env: {
      ...process.env,
      ...oneClientManyUploads,
      ...serviceEnv,
      HOST: '127.0.0.1',
      DATA_DIR: tmp,
      LOG_LEVEL: 'warn',
      SIGNET_PROCESSES: 'api,worker',
      RATE_LIMIT_MULTIPLIER: String(RATE_LIMIT_MULTIPLIER),
      TEMPORAL_TASK_QUEUE: TASK_QUEUE,
      WEBHOOK_ALLOW_PRIVATE_HOSTS: '127.0.0.1', // the bench's receiver
      ELASTICSEARCH_INDEX_PREFIX: INDEX_PREFIX,
    },
    readyPath: '/healthz', // listen() comes after the database, migrations, Temporal and the worker are up
    logDir: tmp,
    flags: profileFlags,
  });
  const peaks = new PeakRss(service.pid);
  await sleep(1000); // let startup's allocations settle
  const rssAfterStartup = memoryMb(service.pid, 'VmRSS');
  const peakOfStartup = peaks.sinceReset();

  // The uploads go first, on the freshly started process: after the load runs, V8's grown heap and
  // malloc's arenas already hold enough free memory to absorb much of them, and the same uploads
  // then show a far smaller increase (about half, on this machine) than they cost a fresh process.
  let uploads: Awaited<ReturnType<typeof uploadMemory>> | null = null;
  if (only.has('memory')) {
    log(`${UPLOADS} concurrent uploads of a ${UPLOAD_BYTES / 2 ** 20} MiB PDF`);
    uploads = await uploadMemory(service.url, auth, service.pid, peaks);
  }

  const scenarios: Scenario[] = [];
  if (bare && only.has('read')) {
    const created = await fetch(`${service.url}/api/v1/documents`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ fileName: 'bench.pdf', fileSize: 1234 }),
    });
    if (created.status !== 201) throw new Error(`creating the benchmark document: HTTP ${created.status} ${await created.text()}`);
    const documentId = ((await created.json()) as { id: string }).id;
    scenarios.push(
      { name: '(a) bare Koa, GET /', url: `${bare.url}/`, status: 200 },
      // Between (a) and (b): the same bare app making one database round trip (a plain pg pool, a
      // trivial query), and the service's own middleware (request id, logger, routers) without one.
      { name: '(a1) bare Koa + one PostgreSQL query, GET /db', url: `${bare.url}/db`, status: 200 },
      { name: '(a2) the service, GET /healthz (no database)', url: `${service.url}/healthz`, status: 200 },
      { name: '(b) GET /api/v1/documents/:id', url: `${service.url}/api/v1/documents/${documentId}`, headers: auth, status: 200 },
    );
  }
  const uploadPdf = only.has('write') ? await makeUploadPdf() : null;
  if (uploadPdf && bare) {
    const upload = multipartBody(uploadPdf, 'bench-upload.pdf');
    /** A create, answered 201: `body` sent as `contentType`. */
    const creating = (name: string, url: string, body: { body: string | Buffer; contentType: string }, headers = {}): Scenario => ({
      name,
      url,
      method: 'POST',
      headers: { ...headers, 'Content-Type': body.contentType },
      body: body.body,
      status: 201,
    });
    scenarios.push(
      // (c2) against (c) on the bare app: the work neither can do without, and nothing else (bareServer.ts).
      creating('(a3) bare Koa + one insert, POST /create (the JSON of (c))', `${bare.url}/create`, metadataOnly),
      creating(
        "(a4) bare Koa, POST /upload (the multipart of (c2): hashed, checked in the api's PDF processes, one insert with its bytes)",
        `${bare.url}/upload`,
        upload,
      ),
      creating('(c) POST /api/v1/documents (metadata only)', `${service.url}/api/v1/documents`, metadataOnly, auth),
      creating(
        `(c2) POST /api/v1/documents, a ${(uploadPdf.length / 1000).toFixed(0)} KB 5-page PDF as multipart`,
        `${service.url}/api/v1/documents`,
        upload,
        auth,
      ),
    );
  }
  // Rounds interleave the scenarios (a b c, a b c, …) so that slow drift in a noisy machine's
  // background load spreads over all three instead of landing on one.
  peaks.reset();
  if (scenarios.length > 0) log(`warm-up: ${WARMUP_SECONDS} s per scenario`);
  for (const scenario of scenarios) await runAutocannon(scenario, WARMUP_SECONDS);
  const samples = new Map(scenarios.map((scenario) => [scenario, [] as Sample[]]));
  // How far the search index is behind the events when a round of creates ends: whatever it has not
  // indexed yet, the rounds after pay for.
  const indexBehind = new Map<string, number[]>();
  const eventsNotIndexed = async () =>
    Number(
      (
        await db.raw(
          `select count(*) as behind from events, search_event_cursors cursor
            where cursor.prefix = ? and (events.xid, events.id) > (cursor.xid, cursor.event_id)`,
          [INDEX_PREFIX],
        )
      ).rows[0].behind,
    );
  for (let round = 1; round <= ROUNDS && scenarios.length > 0; round++) {
    for (const scenario of scenarios) {
      log(`round ${round}/${ROUNDS}: ${scenario.name}, ${SECONDS} s at ${CONNECTIONS} connections`);
      samples.get(scenario)!.push(await runAutocannon(scenario, SECONDS));
      if (serviceEnv.ELASTICSEARCH_URL && /^\(c2?\) /.test(scenario.name)) {
        const label = scenario.name.split(' ')[0];
        indexBehind.set(label, [...(indexBehind.get(label) ?? []), await eventsNotIndexed()]);
      }
    }
  }
  const peakOfLoad = peaks.sinceReset();
  const wholeRunPeak = peaks.wholeRun();

  // The worker extracts the uploads' text after they commit, in the background: the scenarios after this
  // one get a quiet service only once it has caught up. Then the CPU per upload; uploads at (c2)'s rate,
  // and how soon each is found by its text; the CPU of an upload with its text at a steady rate; and the
  // found-by-text time again at the rate that CPU allows.
  let textDrain: (TextDrain & { extractedDuringRounds: number }) | null = null;
  let textLag: TextLag | null = null;
  let upload: CreateCost | null = null;
  let create: CreateCost | null = null;
  let steady: SteadyCost | null = null;
  let sustained: TextLag | null = null;
  if (uploadPdf) {
    const { extracted, waiting } = await countTexts(db, account.id);
    log(`waiting for the worker to extract the text of ${waiting} uploads (${extracted} extracted during the rounds)`);
    const servers = cpuMeter({
      service: { alone: service.pid },
      'its PDF processes': { childrenOf: service.pid }, // the api's checks of uploads, the worker's text extraction
      PostgreSQL: pidListeningOn(Number(new URL(serviceEnv.DATABASE_URL!).port || 5432)),
      ...(serviceEnv.ELASTICSEARCH_URL ? { Elasticsearch: pidListeningOn(Number(new URL(serviceEnv.ELASTICSEARCH_URL).port || 9200)) } : {}),
    });
    // With the bench's own CPU (autocannon, the polls): it shares the cores with the servers.
    const drainCpu = () => {
      const own = process.cpuUsage();
      return { ...servers(), bench: (own.user + own.system) / 1000 };
    };
    textDrain = { ...(await drainTexts(db, account.id, TEXT_DRAIN_DEADLINE_MS, drainCpu)), extractedDuringRounds: extracted };
    const rateOf = (prefix: string) => median(samples.get(scenarios.find((scenario) => scenario.name.startsWith(prefix))!)!.map((sample) => sample.rps));
    const c2Rate = rateOf('(c2)');
    const backlog = async () => (await countTexts(db, account.id)).waiting;
    const lagOptions = { baseUrl: service.url, auth, db, uploadPdf, connections: CONNECTIONS, waiting: backlog };
    log(`CPU per upload: uploads at (c2)'s rate, ${c2Rate.toFixed(0)}/s for ${UPLOAD_COST_SECONDS} s`);
    const costOptions = { ...lagOptions, seconds: UPLOAD_COST_SECONDS, db, accountId: account.id, cpu: drainCpu, cpuPerText: textDrain.cpuPerText };
    const pacedUpload = multipartBody(uploadPdf, 'bench-paced.pdf');
    upload = await createCost({ ...costOptions, body: pacedUpload, rate: c2Rate });
    await drainTexts(db, account.id, TEXT_DRAIN_DEADLINE_MS, drainCpu);
    // The same for (c), whose ratio to (c2) is that of their CPU: on a saturated machine each takes its share.
    log(`CPU per metadata-only create: creates at (c)'s rate, ${rateOf('(c)').toFixed(0)}/s for ${UPLOAD_COST_SECONDS} s`);
    create = await createCost({ ...costOptions, body: metadataOnly, rate: rateOf('(c)') });
    log(`uploads at (c2)'s rate, ${c2Rate.toFixed(0)}/s for ${TEXT_LAG_SECONDS} s, each tracer among them searched for until found`);
    textLag = await textSearchLag({ ...lagOptions, rate: Math.round(c2Rate), seconds: TEXT_LAG_SECONDS });
    await drainTexts(db, account.id, TEXT_DRAIN_DEADLINE_MS, drainCpu);
    // A catch-up's CPU per text, added to an upload's, puts the sustainable rate too high: at a steady rate
    // each text costs more. Uploads at half that estimate, where the text surely keeps up, measure it.
    const steadyRate = Math.round(sustainableRate(upload.cpuPerCreate, textDrain.cpuPerText) / 2);
    log(`CPU per upload with its text: uploads at ${steadyRate}/s for ${STEADY_SECONDS} s, until their texts are extracted`);
    steady = await steadyCost({
      ...costOptions,
      body: pacedUpload,
      rate: steadyRate,
      seconds: STEADY_SECONDS,
      deadlineMs: TEXT_DRAIN_DEADLINE_MS,
    });
    const rate = Math.floor(SUSTAINED_SHARE * sustainableRate(steady.cpuPerUpload));
    log(`uploads at ${SUSTAINED_SHARE * 100}% of the sustainable rate, ${rate}/s for ${SUSTAINED_SECONDS} s, each tracer among them searched for until found`);
    sustained = await textSearchLag({ ...lagOptions, rate, seconds: SUSTAINED_SECONDS });
    await drainTexts(db, account.id, TEXT_DRAIN_DEADLINE_MS, drainCpu);
  }

  let hostile: Awaited<ReturnType<typeof hostileUploads>> | null = null;
  let familyAtRest = 0;
  if (only.has('hostile')) {
    familyAtRest = sampleFamilyMemory(service.pid).start;
    hostile = await hostileUploads({ baseUrl: service.url, auth, pid: service.pid, log });
  }

  let limiter: Awaited<ReturnType<typeof limiterCost>> | null = null;
  if (only.has('limiter')) {
    log(`rate limiter: ${LIMITER_CALLS} consume() calls, sequential then ${CONNECTIONS} at a time`);
    limiter = await limiterCost(db, account.id);
  }

  // ---------------------------------------------------------------- signing requests
  // After the other scenarios: the workflows these start keep the worker busy for a while after.
  async function signingScenarios({ client }: { client: Client }, namespace: string) {
    const signerEmail = `signer-${account.id}@signet-bench.invalid`;
    // Before the account goes: its requests' workflows are stopped (else a later worker on the same task
    // queue would run them against deleted rows), and the e-mails they sent (mail_outbox has no account).
    cleanups.push(async () => {
      const ids: string[] = await db('signing_requests').where({ account_id: account.id }).pluck('id');
      const terminated = await terminateWorkflows(client, ids);
      const mails = await db('mail_outbox').where('to_address', 'like', `%${signerEmail}%`).orWhere('to_address', 'like', `%${account.email}%`).del();
      log(`cleanup: ${ids.length} signing requests, ${terminated} workflows terminated, ${mails} e-mails removed`);
    });
    const smallPdf = await makeSmallPdf();
    const agreement = await fetch(`${service.url}/api/v1/documents`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ fileName: 'bench-agreement.pdf', fileSize: smallPdf.length, content: smallPdf.toString('base64') }),
    });
    if (agreement.status !== 201) throw new Error(`creating the signing document: HTTP ${agreement.status} ${await agreement.text()}`);
    const agreementId = ((await agreement.json()) as { id: string }).id;
    const signatures: Scenario = {
      name: '(d) POST /api/v1/signatures (1 signer)',
      url: `${service.url}/api/v1/signatures`,
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ document_id: agreementId, title: 'Bench agreement', signers: [{ name: 'Bench Signer', email: signerEmail }] }),
      status: 201,
      connections: SIGNING_CONNECTIONS,
    };
    log(`warm-up: ${WARMUP_SECONDS} s of (d) and of (e)`);
    await runAutocannon(signatures, WARMUP_SECONDS);
    await rawStarts(client, SIGNING_CONNECTIONS, WARMUP_SECONDS);
    const signatureSamples: Sample[] = [];
    const startSamples: StartSample[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      log(`round ${round}/${ROUNDS}: ${signatures.name}, ${SECONDS} s at ${SIGNING_CONNECTIONS} connections`);
      signatureSamples.push(await runAutocannon(signatures, SECONDS));
      log(`round ${round}/${ROUNDS}: (e) Temporal client workflow.start of an empty workflow, ${SECONDS} s, ${SIGNING_CONNECTIONS} in flight`);
      startSamples.push(await rawStarts(client, SIGNING_CONNECTIONS, SECONDS));
    }
    const endToEndOptions = {
      baseUrl: service.url,
      client,
      auth,
      db,
      accountId: account.id,
      documentId: agreementId,
      signerEmail,
      count: E2E_REQUESTS,
      warmUp: E2E_WARM_UP,
      concurrency: E2E_CONCURRENCY,
      deadlineMs: E2E_DEADLINE_MS,
      log,
      cpu: cpuMeter({
        service: service.pid,
        'Temporal server': pidListeningOn(Number(serviceEnv.TEMPORAL_ADDRESS!.split(':').pop())),
        PostgreSQL: pidListeningOn(Number(new URL(serviceEnv.DATABASE_URL!).port || 5432)),
        ...(serviceEnv.ELASTICSEARCH_URL ? { Elasticsearch: pidListeningOn(Number(new URL(serviceEnv.ELASTICSEARCH_URL).port || 9200)) } : {}),
      }),
    };
    const prepared = await prepareEndToEnd(endToEndOptions);
    // Just before the signs, with the invitations drained: the same quiet server for both.
    const echo = await echoUpdates({
      address: serviceEnv.TEMPORAL_ADDRESS!,
      namespace,
      client,
      count: E2E_REQUESTS,
      warmUp: E2E_WARM_UP,
      concurrency: E2E_CONCURRENCY,
      deadlineMs: E2E_DEADLINE_MS,
      log,
    });
    const e2e = await endToEnd(endToEndOptions, prepared);
    // One at a time: the path's own latency, with no other request's work in the way (each sign once the
    // previous request has ended); and back to back (once the previous sign had its 200, its seal running).
    const alone = { ...endToEndOptions, count: E2E_ALONE_REQUESTS, warmUp: 2, concurrency: 1, oneRequestInFlight: true };
    const backToBack = { ...alone, oneRequestInFlight: false };
    const preparedAlone = await prepareEndToEnd(alone);
    const preparedBackToBack = await prepareEndToEnd(backToBack);
    const echoAlone = await echoUpdates({
      address: serviceEnv.TEMPORAL_ADDRESS!,
      namespace,
      client,
      count: E2E_ALONE_REQUESTS,
      warmUp: 2,
      concurrency: 1,
      deadlineMs: E2E_DEADLINE_MS,
      log,
      db, // and the baselines (f-local) and (f-regular), alternately with (f)
    });
    const e2eAlone = await endToEnd(alone, preparedAlone);
    const e2eBackToBack = await endToEnd(backToBack, preparedBackToBack);
    // Issue #27: several documents and signers against one and one, one at a time, interleaved.
    const packets = await packetsAlone({ ...endToEndOptions, count: PACKET_REQUESTS, warmUp: PACKET_WARM_UP });
    return { signatures, signatureSamples, startSamples, echo, e2e, echoAlone, e2eAlone, e2eBackToBack, packets };
  }

  const temporalNamespace = serviceEnv.TEMPORAL_NAMESPACE ?? 'default';
  const temporal = only.has('signing') || only.has('webhooks') ? await connectTemporal(serviceEnv.TEMPORAL_ADDRESS!, temporalNamespace) : null;
  if (temporal) cleanups.push(() => temporal.connection.close());
  const signing = only.has('signing') ? await signingScenarios(temporal!, temporalNamespace) : null;

  /** The round in the middle by `ratio`, with that ratio: medians that stay one real round's numbers. */
  function middleRound(rounds: Round[], ratio: (round: Round) => number) {
    const round = [...rounds].sort((x, y) => ratio(x) - ratio(y))[Math.floor(rounds.length / 2)];
    return { round, ratio: ratio(round) };
  }
  function webhookMedians(result: WebhookBenchResult) {
    const burst = middleRound(result.rounds, (round) => round.burst.perSecond / round.plain.perSecond);
    return {
      burst: {
        ...burst,
        stream: middleRound(result.rounds, (round) => round.stream.perSecond / round.plain.perSecond),
        sourceRatio: median(result.rounds.map((round) => round.source.perSecond / round.plain.perSecond)),
      },
      fanOut: middleRound(result.rounds, (round) => round.fanOut.perSecond / round.plainFanOut.perSecond),
      paced: result.paced,
      besideDown: result.besideDown,
    };
  }
  function webhookReport(result: WebhookBenchResult) {
    const { burst, fanOut, paced, besideDown } = webhookMedians(result);
    const each = (value: (round: Round) => number) => result.rounds.map((round) => value(round).toFixed(0)).join(' / ');
    const eachPercent = (part: (round: Round) => number, whole: (round: Round) => number) =>
      result.rounds.map((round) => percent(part(round), whole(round))).join(' / ');
    const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : 'n/a');
    const processes = Object.keys(burst.round.burst.cpu);
    const cpuRow = (name: string, cpu: Record<string, number>) =>
      `| ${name} | ${processes.map((key) => (cpu[key] ?? 0).toFixed(2)).join(' | ')} | ${Object.values(cpu)
        .reduce((sum, value) => sum + value, 0)
        .toFixed(2)} |`;
    const { round } = burst;
    return [
      '',
      `**Webhooks** (the service's worker delivering to a receiver in the bench process on loopback; lag = event row committed → receiver got it). ` +
        `After a warm-up, ${result.rounds.length} rounds, each with its baselines; a row shows the round in the middle by its ratio to the plain loop, and the deliveries/s of each round:`,
      '',
      '| webhook scenario | deliveries/s | each round | ratio to plain, each round | lag or latency p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|---:|---:|',
      `| burst: ${round.burst.delivered} of ${round.burst.events} events to one endpoint, committed at once, lag | ${round.burst.perSecond.toFixed(0)} | ${each((r) => r.burst.perSecond)} | ${eachPercent(
        (r) => r.burst.perSecond,
        (r) => r.plain.perSecond,
      )} | ${ms(round.burst.lag.p50)} | ${ms(round.burst.lag.p99)} | ${ms(round.burst.lag.max)} |`,
      `| fan-out: ${fanOut.round.fanOut.delivered} of ${fanOut.round.fanOut.events} events, ${fanOut.round.fanOut.endpoints} endpoints × ${WEBHOOK_FAN_OUT_EVENTS}, committed at once, lag | ${fanOut.round.fanOut.perSecond.toFixed(0)} | ${each((r) => r.fanOut.perSecond)} | ${eachPercent(
        (r) => r.fanOut.perSecond,
        (r) => r.plainFanOut.perSecond,
      )} | ${ms(fanOut.round.fanOut.lag.p50)} | ${ms(fanOut.round.fanOut.lag.p99)} | ${ms(fanOut.round.fanOut.lag.max)} |`,
      `| stream: ${round.stream.delivered} of ${round.stream.events} events to one endpoint, committed one by one ${WEBHOOK_CONCURRENCY} at a time by the bench on the same cores (${each((r) => r.stream.committedPerSecond)} committed/s), lag | ${round.stream.perSecond.toFixed(0)} | ${each((r) => r.stream.perSecond)} | ${eachPercent(
        (r) => r.stream.perSecond,
        (r) => r.plain.perSecond,
      )} | ${ms(round.stream.lag.p50)} | ${ms(round.stream.lag.p99)} | ${ms(round.stream.lag.max)} |`,
      `| paced: ${paced.delivered} of ${paced.events} events at ${WEBHOOK_PACED_RATE}/s, lag | ${WEBHOOK_PACED_RATE} (offered) | | | ${ms(paced.lag.p50)} | ${ms(paced.lag.p99)} | ${ms(paced.lag.max)} |`,
      `| paced beside a failing endpoint with ${besideDown.downPending} pending (503 after 1 s each), lag | ${WEBHOOK_PACED_RATE} (offered) | | | ${ms(besideDown.lag.p50)} | ${ms(besideDown.lag.p99)} | ${ms(besideDown.lag.max)} |`,
      `| baseline: plain loop POSTing the burst's ${round.burst.events} bodies, ${WEBHOOK_CONCURRENCY} at a time, same HTTP client, latency | ${round.plain.perSecond.toFixed(0)} | ${each((r) => r.plain.perSecond)} | | ${ms(round.plain.latency.p50)} | ${ms(round.plain.latency.p99)} | ${ms(round.plain.latency.max)} |`,
      `| baseline: the stream's source alone, ${round.burst.events} events no webhook subscribes to, committed one by one ${WEBHOOK_CONCURRENCY} at a time (events/s) | ${round.source.perSecond.toFixed(0)} | ${each((r) => r.source.perSecond)} | ${eachPercent(
        (r) => r.source.perSecond,
        (r) => r.plain.perSecond,
      )} | | | |`,
      `| baseline: plain loop POSTing the fan-out's bodies to ${fanOut.round.fanOut.endpoints} paths | ${fanOut.round.plainFanOut.perSecond.toFixed(0)} | ${each((r) => r.plainFanOut.perSecond)} | | | | |`,
      '',
      `Each endpoint is one webhookWorkflow that sends its due deliveries in batches, 16 at once; ${result.duplicates} attempts beyond one per delivery to the healthy endpoints; ` +
        `at most ${result.mostWorkflows} webhook workflows ran during the fan-outs.`,
      '',
      `CPU ms per delivery (per event for the source alone), by process, in the rounds shown; the bench process is the source of events, the receiver and the plain loop's client:`,
      '',
      `| scenario | ${processes.join(' | ')} | total |`,
      `|---|${processes.map(() => '---:|').join('')}---:|`,
      cpuRow('burst', round.burst.cpu),
      cpuRow('fan-out', fanOut.round.fanOut.cpu),
      cpuRow('stream', round.stream.cpu),
      cpuRow("the stream's source alone", round.source.cpu),
      cpuRow('plain loop', round.plain.cpu),
    ];
  }

  // ---------------------------------------------------------------- webhooks
  function embeddedReport(result: EmbeddedWebhookResult) {
    const { created, atOnce } = result;
    return [
      '',
      `**Webhooks on the embedded default** (\`npm start\` with nothing configured: PGlite and the Temporal dev server, a service of its own in a temporary DATA_DIR), ` +
        `beside ${result.burners} CPU-bound processes (one per core; load average ${result.loadAverage.toFixed(1)} at the start):`,
      '',
      '| scenario | deliveries/s | from the last creation (or the commit) to the last arrival, s | ratio to the plain loop |',
      '|---|---:|---:|---:|',
      `| ${created.delivered} of ${created.events} documents created through the api, 16 at a time (${created.createdPerSecond.toFixed(0)} created/s) | ${created.perSecond.toFixed(0)} | ${created.drainSeconds.toFixed(2)} | |`,
      `| burst: ${atOnce.delivered} of ${atOnce.events} events committed at once | ${atOnce.perSecond.toFixed(0)} | ${atOnce.drainSeconds.toFixed(2)} | ${percent(atOnce.perSecond, result.plainPerSecond)} |`,
      `| baseline: plain loop POSTing as many bodies, 16 at a time, same HTTP client, same busy machine | ${result.plainPerSecond.toFixed(0)} | | |`,
    ];
  }
  /** CPU per process: the bench's own (the source of events, the receiver, the plain loop) read apart from the service it started. */
  function webhookCpu() {
    const others = cpuMeter({
      service: service.pid,
      'Temporal server': pidListeningOn(Number(serviceEnv.TEMPORAL_ADDRESS!.split(':').pop())),
      PostgreSQL: pidListeningOn(Number(new URL(serviceEnv.DATABASE_URL!).port || 5432)),
      // The search indexer turns every event into Elasticsearch writes: on the same cores.
      ...(serviceEnv.ELASTICSEARCH_URL ? { Elasticsearch: pidListeningOn(Number(new URL(serviceEnv.ELASTICSEARCH_URL).port || 9200)) } : {}),
    });
    return () => {
      const own = process.cpuUsage();
      return { bench: (own.user + own.system) / 1000, ...others() };
    };
  }
  // Last: its events must not meet a webhook while the earlier scenarios create documents.
  const webhooks = only.has('webhooks')
    ? await webhookBench({
        db,
        client: temporal!.client,
        taskQueue: TASK_QUEUE,
        baseUrl: service.url,
        auth,
        accountId: account.id,
        events: WEBHOOK_EVENTS,
        fanOutEndpoints: WEBHOOK_FAN_OUT_ENDPOINTS,
        fanOutEvents: WEBHOOK_FAN_OUT_EVENTS,
        downPending: WEBHOOK_DOWN_PENDING,
        pacedEvents: WEBHOOK_PACED_EVENTS,
        pacedRate: WEBHOOK_PACED_RATE,
        concurrency: WEBHOOK_CONCURRENCY,
        rounds: ROUNDS,
        deadlineMs: WEBHOOK_DEADLINE_MS,
        cpu: webhookCpu(),
        log,
      })
    : null;

  // The embedded default (PGlite and the Temporal dev server, a service of its own), beside a CPU burner per core.
  const embedded = only.has('webhooks')
    ? await embeddedWebhookBench({ created: EMBEDDED_CREATED, atOnce: EMBEDDED_AT_ONCE, busy: true, deadlineMs: WEBHOOK_DEADLINE_MS, log })
    : null;

  // ---------------------------------------------------------------- search and dashboard (bench/search.ts)
  const search =
    only.has('search') && serviceEnv.ELASTICSEARCH_URL
      ? await searchBench({ databaseUrl: serviceEnv.DATABASE_URL!, elasticsearchUrl: serviceEnv.ELASTICSEARCH_URL, service: { url: service.url, auth }, log })
      : null;

  // ---------------------------------------------------------------- report
  const summarize = (name: string, runs: (Sample | StartSample)[]) => ({
    name,
    runs,
    rps: median(runs.map((s) => s.rps)),
    p50: median(runs.map((s) => s.p50)),
    p99: median(runs.map((s) => s.p99)),
    bad: runs.reduce((n, s) => n + s.bad, 0),
  });
  const rows = scenarios.map((scenario) => summarize(scenario.name, samples.get(scenario)!));
  const row = (label: string) => rows.find((candidate) => candidate.name.startsWith(`${label} `));
  const [a, a1, b] = [row('(a)'), row('(a1)'), row('(b)')];
  const d = signing && summarize(signing.signatures.name, signing.signatureSamples);
  const e = signing && summarize(`(e) Temporal client: start an empty workflow (${SIGNING_CONNECTIONS} in flight, no worker)`, signing.startSamples);
  const tableRows = [...rows, ...(d && e ? [d, e] : [])];
  const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : 'n/a');
  const spread = (stats: { n: number; p50: number; p99: number; max: number }) => `p50 ${ms(stats.p50)} ms, p99 ${ms(stats.p99)} ms, max ${ms(stats.max)} ms`;
  const mb = (value: number) => `${value.toFixed(0)} MB`;
  const percent = (part: number, whole: number) => `${((part / whole) * 100).toFixed(0)}%`;
  const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  // What each completed request cost in CPU, and the wait that alone imposes at a concurrency: with
  // `inFlight` requests in flight on a saturated machine, each spends at least this long on average
  // (Little's law), whatever the order of the work. The baseline that does the same work as the signs.
  const cpuTotal = (perRequest: Record<string, number>) => Object.values(perRequest).reduce((sum, used) => sum + used, 0);
  const cpuFloorMs = (perRequest: Record<string, number>, inFlight: number) => (inFlight * cpuTotal(perRequest)) / cores();
  const cpuLines = (perRequest: Record<string, number>, inFlight: number) => {
    const total = cpuTotal(perRequest);
    if (total === 0) return [];
    return [
      `- CPU per completed request, over the timed signs and their completions: ${Object.entries(perRequest)
        .map(([name, used]) => `${name} ${ms(used)} ms`)
        .join(', ')}; **${ms(total)} ms in all**. ` +
        `On ${cores()} cores that allows at most ${((cores() * 1000) / total).toFixed(1)} requests/s` +
        (inFlight > 1
          ? `, so with ${inFlight} in flight a request spends at least ${ms(cpuFloorMs(perRequest, inFlight))} ms from sign to completion on average (Little's law), whatever the order of the work.`
          : '.'),
    ];
  };
  const cpu = os.cpus();
  const databaseUrl = new URL(serviceEnv.DATABASE_URL!);
  // The service's error and fatal log lines (pino JSON), counted by message.
  const serviceErrors = new Map<string, number>();
  for (const line of fs
    .readFileSync(service.logFile, 'utf8')
    .split('\n')
    .filter((text) => /^\{.*"level":(50|60)\b/.test(text))) {
    const { msg, err } = JSON.parse(line) as { msg?: string; err?: { message?: string } };
    const message = [msg, err?.message].filter(Boolean).join(': ');
    serviceErrors.set(message, (serviceErrors.get(message) ?? 0) + 1);
  }

  const c = row('(c)');
  const c2 = row('(c2)');
  const [a3, a4] = [row('(a3)'), row('(a4)')];
  // At saturation a request takes 1000 / its req/s ms of the machine. What an upload takes more than a
  // create: in the service, and in the bare app doing only the work neither can do without. With a create
  // at (c)'s cost and an upload's extra no more than the bare app's, (c2) would reach uploadBound of (c).
  const machineMs = (rps: number) => 1000 / rps;
  const bareExtraMs = a3 && a4 ? machineMs(a4.rps) - machineMs(a3.rps) : undefined;
  const uploadBound = c && bareExtraMs !== undefined ? machineMs(c.rps) / (machineMs(c.rps) + bareExtraMs) : undefined;
  const boundLine = () =>
    c && c2 && a3 && a4 && bareExtraMs !== undefined && uploadBound !== undefined
      ? ` **The same work on the bare app** ((a3) and (a4): the body read, the PDF hashed and checked in the same PDF processes, one insert; no key, quota, event or transaction): ` +
        `(a4) ${a4.rps.toFixed(0)} req/s against (a3) ${a3.rps.toFixed(0)} req/s, ratio ${(a4.rps / a3.rps).toFixed(2)}. ` +
        `At saturation a request takes 1000 / its req/s ms of the machine: an upload takes ${bareExtraMs.toFixed(1)} ms more than a create on the bare app, ` +
        `${(machineMs(c2.rps) - machineMs(c.rps)).toFixed(1)} ms more in the service. **With a create at (c)'s ${machineMs(c.rps).toFixed(1)} ms and an upload's extra no more than the bare app's, ` +
        `(c2) would reach ${machineMs(c.rps).toFixed(1)} / (${machineMs(c.rps).toFixed(1)} + ${bareExtraMs.toFixed(1)}) = ${(uploadBound * 100).toFixed(0)}% of (c)**: the bound to read (c2)'s share against on this machine.`
      : '';
  const textCpu = cpuTotal(textDrain?.cpuPerText ?? {});
  const uploadCpu = cpuTotal(upload?.cpuPerCreate ?? {});
  const createCpu = cpuTotal(create?.cpuPerCreate ?? {});
  const steadyCpu = cpuTotal(steady?.cpuPerUpload ?? {});
  const perProcess = (perOne: Record<string, number>) =>
    Object.entries(perOne)
      .map(([name, used]) => `${name} ${used.toFixed(1)} ms`)
      .join(', ');
  // Flat: over the second half of the uploads the backlog grew by less than one second of uploads. Not from
  // the start: the uploads between their 201 and their text (rate × that time) fill it in the first seconds.
  const backlogFlat = (lag: TextLag) => lag.waitingAtEnd - lag.waitingAtHalf <= lag.rate;
  // Uploads at `label`'s rate with tracers among them: how soon each tracer was found by its text, and the backlog.
  const foundLine = (label: string, lag: TextLag) =>
    `uploads at ${label} (${lag.rate}/s asked, ${lag.uploaded.toFixed(0)}/s answered 201) for ${lag.seconds.toFixed(0)} s, ` +
    `with ${lag.found.n + lag.notFound} tracers among them (named bench-tracer.pdf, each a word of its own on its last page): from the 201 to the first GET /api/v1/search that finds it, ` +
    `**p50 ${ms(lag.found.p50)} ms, p99 ${ms(lag.found.p99)} ms** (max ${ms(lag.found.max)} ms)${lag.notFound > 0 ? `; ${lag.notFound} never found` : ''}; ` +
    `texts waiting ${lag.waitingAtStart} at the start, ${lag.waitingAtHalf} halfway, ${lag.waitingAtEnd} at the end of the uploads (${backlogFlat(lag) ? 'flat' : 'growing'}); ` +
    `the bench asked GET /api/v1/search ${lag.searchesPerSecond.toFixed(1)} times a second meanwhile.`;
  const uploadReport = (): string[] => [
    ...(c && c2 && uploadPdf
      ? [
          `**Uploads against metadata-only creates:** (c2) ${c2.rps.toFixed(0)} req/s against (c) ${c.rps.toFixed(0)} req/s: **ratio ${(c2.rps / c.rps).toFixed(2)}**; ` +
            `p99 ${c2.p99.toFixed(1)} ms against ${c.p99.toFixed(1)} ms. Each upload is parsed (structure, pages, SHA-256) by the api's pool of PDF processes before its 201; ` +
            `its text is extracted afterwards by the worker's pool.` +
            (textDrain
              ? ` The worker extracted the text of ${textDrain.extractedDuringRounds} uploads during the rounds, had ${textDrain.documents} left after the last one and took ${textDrain.seconds.toFixed(0)} s to catch up` +
                `${textDrain.left > 0 ? ` (${textDrain.left} still left when given up)` : ''}: **${textDrain.perSecond.toFixed(0)} texts/s against (c2)'s ${c2.rps.toFixed(0)} uploads/s**. ` +
                `CPU per text meanwhile: ${perProcess(textDrain.cpuPerText)} (${textCpu.toFixed(1)} ms in all: at most ${((cores() * 1000) / textCpu).toFixed(0)} texts/s on ${cores()} cores doing nothing else).`
              : '') +
            (textDrain && upload
              ? ` CPU per upload (uploads at (c2)'s rate for ${UPLOAD_COST_SECONDS} s, ${upload.created} answered 201, less the ${upload.textsMeanwhile} texts extracted meanwhile at the CPU per text above): ` +
                `${perProcess(upload.cpuPerCreate)} (${uploadCpu.toFixed(1)} ms in all: (c2)'s ${c2.rps.toFixed(0)} uploads/s alone take ${((c2.rps * uploadCpu) / 1000).toFixed(1)} of ${cores()} cores). ` +
                `With the CPU per text of that catch-up, uploads and their text would keep pace together up to ${cores() * 1000} / (${uploadCpu.toFixed(1)} + ${textCpu.toFixed(1)}) ms = ` +
                `${sustainableRate(upload.cpuPerCreate, textDrain.cpuPerText).toFixed(0)} uploads/s; but a catch-up writes its texts to the index a hundred at a time, and at a steady rate they go a few at a time, each costing more.`
              : '') +
            (steady
              ? ` CPU per upload with its text at a steady rate (uploads at half that rate for ${STEADY_SECONDS} s, ${steady.created} answered 201, and the CPU until their texts were extracted, ${steady.seconds.toFixed(0)} s in all): ` +
                `${perProcess(steady.cpuPerUpload)} (${steadyCpu.toFixed(1)} ms in all). **Uploads and their text keep pace together up to ${cores()} cores × 1000 ms / ${steadyCpu.toFixed(1)} ms = ` +
                `${sustainableRate(steady.cpuPerUpload).toFixed(0)} uploads/s**: the baseline for "text keeps pace with uploads" is that sustainable rate, not (c2)'s peak.`
              : '') +
            (create && upload
              ? ` CPU per metadata-only create (creates at (c)'s rate for ${UPLOAD_COST_SECONDS} s, ${create.created} answered 201): ${perProcess(create.cpuPerCreate)} ` +
                `(${createCpu.toFixed(1)} ms in all). With the cores saturated each scenario runs at cores / its CPU: **(c2) can reach (c)'s CPU / (c2)'s = ` +
                `${createCpu.toFixed(1)} / ${uploadCpu.toFixed(1)} = ${percent(createCpu, uploadCpu)} of (c)** (measured: ${percent(c2.rps, c.rps)}). ` +
                `Of the ${(uploadCpu - createCpu).toFixed(1)} ms an upload costs more than a create, ${((upload.cpuPerCreate['its PDF processes'] ?? 0) - (create.cpuPerCreate['its PDF processes'] ?? 0)).toFixed(1)} ms are the check of the PDF in the api's PDF processes ` +
                `and ${((upload.cpuPerCreate.service ?? 0) - (create.cpuPerCreate.service ?? 0)).toFixed(1)} ms the service's own (the multipart body, handing the PDF over and back, storing it).`
              : '') +
            boundLine(),
          ...(indexBehind.size > 0
            ? [
                '',
                `**The search index behind the creates:** events not yet indexed when each round ended, ` +
                  [...indexBehind].map(([label, behind]) => `${label} ${behind.join(' / ')}`).join(', ') +
                  ` (after ${SECONDS} s of creates; the indexer writes them without waiting for the refresh that makes them searchable, which comes every second).`,
              ]
            : []),
          ...(textLag
            ? [
                '',
                `**Found by its text** (search backend: ${serviceEnv.ELASTICSEARCH_URL ? 'Elasticsearch' : 'PostgreSQL'}): ${foundLine("(c2)'s rate", textLag)}` +
                  (sustained ? ` Then ${foundLine(`${SUSTAINED_SHARE * 100}% of the sustainable rate above`, sustained)}` : ''),
              ]
            : []),
          '',
        ]
      : []),
    ...(hostile
      ? [
          `**Hostile PDFs**, uploaded one at a time as multipart after the load (service + its PDF processes at ${mb(familyAtRest)} RSS before them); ` +
            `/healthz asked every 10 ms meanwhile, and the RSS of the service and its children sampled every 10 ms:`,
          '',
          '| PDF | size | answer | seconds | /healthz p50 ms | p99 ms | max ms | memory growth |',
          '|---|---:|---|---:|---:|---:|---:|---:|',
          ...hostile.map(
            (one) =>
              `| ${one.name} | ${(one.bytes / 1024).toFixed(0)} KB | ${one.status} ${one.problem} | ${one.seconds.toFixed(2)} | ${one.healthz.p50.toFixed(1)} | ${one.healthz.p99.toFixed(1)} | ${one.healthz.max.toFixed(1)} | +${mb(one.memoryGrowthMb)} |`,
          ),
          '',
        ]
      : []),
  ];

  const signPathLine = (run: NonNullable<typeof signing>['e2e']) =>
    `sent → the workflow task that accepts the update started ${spread(run.toAccepting)}; that task held by the worker ${spread(run.acceptingHeld)}; ` +
    `its completion → recordSignature completed (the activity, handed to the worker with that completion) ${spread(run.recording)}; ` +
    `→ the task that answers the update started ${spread(run.recordedToAnswering)}; that task held ${spread(run.answeringHeld)}; its completion → HTTP 200 ${spread(run.answeredToResponse)}`;
  // Alternately with (f): the same update to handlers that first commit one PostgreSQL transaction (bench/workflows/echo.ts).
  const aloneBaselineRows = () => {
    const baselines = signing?.echoAlone.baselines;
    if (!signing || !baselines) return [];
    const row = (name: string, latency: Stats) =>
      `| ${name} | ${latency.n} | ${ms(latency.p50)} | ${ms(latency.p99)} | ${ms(latency.max)} | ${(latency.p99 / signing.echoAlone.latency.p99).toFixed(2)} of (f) |`;
    return [
      row('(f-local) the same, its handler commits one PostgreSQL transaction in a local activity before the task that accepts it ends', baselines.local),
      row('(f-regular) the same, in a regular activity scheduled once the update is accepted into the history', baselines.regular),
    ];
  };
  const signingReport = (): string[] => {
    if (!signing || !d || !e) return [];
    const { echo, e2e } = signing;
    const ofEcho = (value: number) => `${(value / echo.latency.p99).toFixed(2)} of (f)`;
    const floor = cpuFloorMs(e2e.cpuPerRequest, E2E_CONCURRENCY);
    const ofFloor = (value: number) => (floor > 0 ? `${(value / floor).toFixed(2)} of the CPU floor` : 'n/a (no CPU readings)');
    return [
      `(d) and (e) run at ${SIGNING_CONNECTIONS} connections / starts in flight, after (a)–(c), interleaved with each other; (e) is the bench process calling client.workflow.start on the same Temporal server ` +
        `(task queue with no worker, no search attributes, execution timeout ${EMPTY_WORKFLOW_TIMEOUT}); (d) does that start too (with 3 search attributes), after its own PostgreSQL transaction, and its worker then runs each new workflow's first activities in the same process.`,
      '',
      `**Signing requests created per second vs raw workflow starts:** (d) ${d.rps.toFixed(0)} req/s against (e) ${e.rps.toFixed(0)} starts/s: **ratio ${(d.rps / e.rps).toFixed(2)}**; ` +
        `p50 ${d.p50.toFixed(1)} ms vs ${e.p50.toFixed(1)} ms, p99 ${d.p99.toFixed(1)} ms vs ${e.p99.toFixed(1)} ms.`,
      '',
      `**End to end, Sign → signing_request.completed** (${E2E_REQUESTS} requests of 1 signer, created and linked first, signed ${E2E_CONCURRENCY} at a time once every invitation had gone out ` +
        `and ${E2E_WARM_UP} more, untimed, had been signed and completed; ` +
        `the backlog of invitations left by (d) took ${e2e.drainSeconds.toFixed(1)} s to drain${e2e.pendingLeft > 0 ? `, ${e2e.pendingLeft} signers still not invited when given up` : ''}): ` +
        `**${e2e.completed} of ${e2e.sent} completed** within ${E2E_DEADLINE_MS / 1000} s (sign responses: ${[...e2e.signStatuses].map(([status, n]) => `${n} × ${status || 'error'}`).join(', ')}); ` +
        `sends took ${e2e.signsSeconds.toFixed(1)} s, the last completion came ${Number.isFinite(e2e.completionSeconds) ? e2e.completionSeconds.toFixed(1) : 'n/a'} s after the first send.`,
      '',
      `Against (f), its baseline measured just before the signs: ${E2E_REQUESTS} raw update round trips (after ${E2E_WARM_UP} untimed ones), ${E2E_CONCURRENCY} at a time, on the same Temporal server, each to its own running ` +
        `bench/workflows/echo.ts workflow, whose update handler answers at once (client.executeUpdate from the bench process; a worker in the bench process on a task queue of its own, ${ECHO_TASK_QUEUE}).`,
      '',
      `Against the CPU floor, the baseline that does the same work: ${E2E_CONCURRENCY} in flight × the CPU each completed request cost (service, Temporal server, PostgreSQL, Elasticsearch; ` +
        `read from /proc over the timed signs and their completions) / ${cores()} cores, the least time a request spends on average when the cores are the limit (Little's law). ` +
        `(f) does one workflow task's work, so at ${E2E_CONCURRENCY} in flight it measures a nearly idle machine.`,
      '',
      `| ${E2E_CONCURRENCY} at a time | n | mean ms | p50 ms | p99 ms | max ms | p99 against (f) | p99 against the CPU floor |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      `| (f) raw Temporal update round trip, handler answers at once (${echo.perSecond.toFixed(0)}/s) | ${echo.latency.n} | ${ms(echo.latency.mean)} | ${ms(echo.latency.p50)} | ${ms(echo.latency.p99)} | ${ms(echo.latency.max)} | 1.00 | |`,
      `| CPU floor: ${E2E_CONCURRENCY} × ${ms(cpuTotal(e2e.cpuPerRequest))} ms / ${cores()} cores | | ${ms(floor)} | | | | | 1.00 |`,
      `| sign sent → HTTP 200 | ${e2e.signResponse.n} | ${ms(e2e.signResponse.mean)} | ${ms(e2e.signResponse.p50)} | ${ms(e2e.signResponse.p99)} | ${ms(e2e.signResponse.max)} | ${ofEcho(e2e.signResponse.p99)} | ${ofFloor(e2e.signResponse.p99)} |`,
      `| sign sent → completed event's created_at | ${e2e.completion.n} | ${ms(e2e.completion.mean)} | ${ms(e2e.completion.p50)} | ${ms(e2e.completion.p99)} | ${ms(e2e.completion.max)} | ${ofEcho(e2e.completion.p99)} | ${ofFloor(e2e.completion.p99)} |`,
      '',
      ...(echo.bad > 0 ? [`**Warning:** ${echo.bad} of the (f) updates failed; its numbers are not trustworthy.`, ''] : []),
      `- sign sent → completed event's created_at: **${spread(e2e.completion)}** (seen by polling the events table every 50 ms: ${spread(e2e.observed)})`,
      `- sign sent → HTTP 200 (the api answers once Temporal returns the sign update's outcome): ${spread(e2e.signResponse)}; mean ${ms(e2e.signResponse.mean)} ms, ${ofFloor(e2e.signResponse.mean)}`,
      `- where the 200 goes (from each workflow's history; the update's outcome goes back with the completion of the workflow task that answers it): ${signPathLine(e2e)}.`,
      `- where the completion goes: sent → signers.signed_at ${spread(e2e.toSigned)}; signed_at → HTTP 200 ${spread(e2e.signedToResponse)}; ` +
        `signed_at → sealed_documents.created_at (completeRequest, an activity scheduled with the update's answer, loads and seals the PDF) ${spread(e2e.signedToSealed)}; sealed → completed event ${spread(e2e.sealedToCompleted)}.`,
      ...cpuLines(e2e.cpuPerRequest, E2E_CONCURRENCY),
      '',
      `**One at a time** (${E2E_ALONE_REQUESTS} requests of 1 signer, each signed once the previous request had ended: its seal, completed event and closing e-mails done, and 200 ms more; (f) likewise, one update at a time, just before, each followed by one of (f-local) and one of (f-regular)). Back to back: ${E2E_ALONE_REQUESTS} more, each signed once the previous sign had its 200, while that request's seal and closing e-mails ran:`,
      '',
      '| 1 at a time | n | p50 ms | p99 ms | max ms | p99 ratio |',
      '|---|---:|---:|---:|---:|---:|',
      `| (f) raw Temporal update round trip | ${signing.echoAlone.latency.n} | ${ms(signing.echoAlone.latency.p50)} | ${ms(signing.echoAlone.latency.p99)} | ${ms(signing.echoAlone.latency.max)} | 1.00 |`,
      ...aloneBaselineRows(),
      `| sign sent → HTTP 200 | ${signing.e2eAlone.signResponse.n} | ${ms(signing.e2eAlone.signResponse.p50)} | ${ms(signing.e2eAlone.signResponse.p99)} | ${ms(signing.e2eAlone.signResponse.max)} | ${(signing.e2eAlone.signResponse.p99 / signing.echoAlone.latency.p99).toFixed(2)} of (f) |`,
      `| sign sent → completed event's created_at | ${signing.e2eAlone.completion.n} | ${ms(signing.e2eAlone.completion.p50)} | ${ms(signing.e2eAlone.completion.p99)} | ${ms(signing.e2eAlone.completion.max)} | ${(signing.e2eAlone.completion.p99 / signing.echoAlone.latency.p99).toFixed(2)} of (f) |`,
      `| back to back: sign sent → HTTP 200 | ${signing.e2eBackToBack.signResponse.n} | ${ms(signing.e2eBackToBack.signResponse.p50)} | ${ms(signing.e2eBackToBack.signResponse.p99)} | ${ms(signing.e2eBackToBack.signResponse.max)} | ${(signing.e2eBackToBack.signResponse.p99 / signing.echoAlone.latency.p99).toFixed(2)} of (f) |`,
      '',
      `- one at a time, where the 200 goes: ${signPathLine(signing.e2eAlone)}.`,
      `- back to back, where the 200 goes: ${signPathLine(signing.e2eBackToBack)}.`,
      `- one at a time, where the completion goes: sent → signers.signed_at ${spread(signing.e2eAlone.toSigned)}; signed_at → sealed_documents.created_at ${spread(signing.e2eAlone.signedToSealed)}; sealed → completed event ${spread(signing.e2eAlone.sealedToCompleted)}.`,
      ...cpuLines(signing.e2eAlone.cpuPerRequest, 1),
      ...packetReport(),
    ];
  };
  // Issue #27: a request of several documents and signers against one of one and one, one at a time.
  const packetRatios = () => {
    const { single, packet } = signing!.packets;
    return { completion: packet.completion.p99 / single.completion.p99, seal: packet.seal.p99 / single.seal.p99 };
  };
  const packetReport = (): string[] => {
    if (!signing) return [];
    const { single, packet, failures, pdfBytes } = signing.packets;
    const ratios = packetRatios();
    const row = (name: string, one: Stats, many: Stats, ratio: number) =>
      `| ${name} | ${one.n} / ${many.n} | ${ms(one.p50)} / ${ms(many.p50)} | ${ms(one.p99)} / ${ms(many.p99)} | ${ms(one.max)} / ${ms(many.max)} | ${(many.p50 / one.p50).toFixed(2)} | **${ratio.toFixed(2)}** |`;
    const cpuRow = (name: string, perRequest: Record<string, number>) =>
      `| ${name} | ${Object.entries(perRequest)
        .map(([process, used]) => `${process} ${ms(used)}`)
        .join(', ')} | **${ms(cpuTotal(perRequest))}** |`;
    return [
      '',
      `**Several documents and signers, one at a time** (issue #27): ${PACKET_REQUESTS} requests of ${PACKET_DOCUMENTS} documents and ${PACKET_SIGNERS} signers (parallel order, no fields: each signs on the signatures page) ` +
        `and ${PACKET_REQUESTS} of 1 document and 1 signer, alternating, after ${PACKET_WARM_UP} untimed ones of each; every document a 5-page text PDF (${pdfBytes.map((bytes) => `${(bytes / 1000).toFixed(0)} KB`).join(', ')}; ` +
        `the single request has the first). The packet's first signers sign one after another, each after the previous 200; the timer starts as the last Sign is sent; ` +
        `the next request starts once this one's workflow has closed. Seal = the completeRequest activity's span in the workflow's history (ActivityTaskStarted → ActivityTaskCompleted: ` +
        `loads the request, seals each document in turn, completes it in one transaction).${failures.length > 0 ? ` **Failures:** ${failures.slice(0, 5).join('; ')}${failures.length > 5 ? ` (${failures.length} in all)` : ''}.` : ''}`,
      '',
      `| 1 at a time, 1 document + 1 signer / ${PACKET_DOCUMENTS} + ${PACKET_SIGNERS} | n | p50 ms | p99 ms | max ms | p50 ratio | p99 ratio |`,
      '|---|---:|---:|---:|---:|---:|---:|',
      row(`last sign sent → completed event's created_at`, single.completion, packet.completion, ratios.completion),
      row('seal: completeRequest activity, started → completed', single.seal, packet.seal, ratios.seal),
      row(
        'last signers.signed_at → last sealed_documents.created_at',
        single.signedToSealed,
        packet.signedToSealed,
        packet.signedToSealed.p99 / single.signedToSealed.p99,
      ),
      '',
      '| CPU ms per completed request, first Sign → workflow closed (closing mails included) | by process | in all |',
      '|---|---|---:|',
      cpuRow('1 document, 1 signer', single.cpuPerRequest),
      cpuRow(`${PACKET_DOCUMENTS} documents, ${PACKET_SIGNERS} signers`, packet.cpuPerRequest),
    ];
  };

  const report = [
    '# Signet benchmark',
    '',
    `${startedAt.toISOString()} · ${cpu.length} cores (${cpu[0]?.model.trim()}) · ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM · Node ${process.version} · ${os.type()} ${os.release()} · load average at start ${loadAtStart.toFixed(2)}`,
    ...(full ? [] : ['', `Only ${[...only].join(', ')} (BENCH_ONLY).`]),
    '',
    `${CONNECTIONS} connections; every scenario ${ROUNDS} × ${SECONDS} s after a ${WARMUP_SECONDS} s warm-up, rounds interleaved; medians of the ${ROUNDS} runs.`,
    `Both servers run as \`${START_COMMAND} …\`; the service is api + worker in one process on PostgreSQL ${databaseUrl.host}${databaseUrl.pathname} and Temporal ${serviceEnv.TEMPORAL_ADDRESS}, with RATE_LIMIT_MULTIPLIER=${RATE_LIMIT_MULTIPLIER} and LOG_LEVEL=warn.`,
    `Latencies are per request, measured by autocannon on the same ${cpu.length} cores as the servers (the load generator competes with them for CPU).`,
    '',
    ...(tableRows.length > 0
      ? [
          '| scenario | req/s | p50 ms | p99 ms | ratio to bare |',
          '|---|---:|---:|---:|---:|',
          ...tableRows.map(
            (row) => `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${a ? (row.rps / a.rps).toFixed(2) : ''} |`,
          ),
          '',
          `req/s of each round: ${tableRows.map((row) => `${row.name.split(' ')[0]} ${row.runs.map((s) => s.rps.toFixed(0)).join(' / ')}`).join('; ')}.`,
          '',
        ]
      : []),
    ...uploadReport(),
    ...signingReport(),
    ...tableRows
      .filter((row) => row.bad > 0)
      .map((row) => `**Warning:** ${row.name} had ${row.bad} responses with an unexpected status or connection errors; its numbers are not trustworthy.`),
    ...(webhooks ? webhookReport(webhooks) : []),
    ...(embedded ? embeddedReport(embedded) : []),
    ...(only.has('search') ? ['', search ? search.markdown : '**Search and dashboard:** not measured: ELASTICSEARCH_URL is not set.'] : []),
    ...(limiter
      ? [
          '',
          `**Rate limiter cost** (the api's own limiter middleware, createRateLimiter → RateLimiterPostgres.consume, one upsert per call, straight to PostgreSQL, ${LIMITER_CALLS} calls on one account): ` +
            `one at a time p50 ${limiter.sequential.p50.toFixed(0)} µs, p99 ${limiter.sequential.p99.toFixed(0)} µs (${limiter.sequential.perSecond.toFixed(0)}/s); ` +
            `${CONNECTIONS} at a time p50 ${limiter.concurrent.p50.toFixed(0)} µs, p99 ${limiter.concurrent.p99.toFixed(0)} µs (${limiter.concurrent.perSecond.toFixed(0)}/s, queued on the account's one row and the pool of 10). ` +
            `Every request to (c) pays this on top of its own work; (b) is not rate limited.`,
        ]
      : []),
    ...(uploads
      ? [
          '',
          `**Memory** of the service (api + worker in one process, pid ${service.pid}): RSS ${mb(rssAfterStartup)} once ready (peak ${mb(peakOfStartup)} during startup); ` +
            `peak RSS (VmHWM) during the load runs ${peaks.resettable ? mb(peakOfLoad) : 'n/a (VmHWM could not be reset)'}; **peak over the whole run ${mb(wholeRunPeak)}**.`,
          `**Uploads** (first thing after startup): ${UPLOADS} concurrent multipart uploads of a ${(uploads.bytes / 1e6).toFixed(1)} MB PDF took ${uploads.seconds.toFixed(1)} s ` +
            `(statuses: ${uploads.statuses.every((status) => status === 201) ? 'all 201' : uploads.statuses.join(', ')}); RSS ${mb(uploads.before)} before, peak ${mb(uploads.peak)} during: **+${mb(uploads.peak - uploads.before)}**; ${mb(uploads.after)} 2 s after. ` +
            `With its PDF processes (which parse the uploads): ${mb(uploads.familyBefore)} before, peak ${mb(uploads.familyPeak)} (+${mb(uploads.familyPeak - uploads.familyBefore)}).`,
        ]
      : []),
    ...(serviceErrors.size ? ['', `Errors logged by the service: ${[...serviceErrors].map(([message, count]) => `${count} × "${message}"`).join('; ')}.`] : []),
    '',
    `Goals (${os.cpus().length}-core machine; the goals are set for 2 cores):`,
    '',
    ...goalLines(),
    '',
  ].join('\n');

  function goalLines(): string[] {
    const lines: string[] = [];
    if (a && a1 && b) {
      lines.push(
        `- ${pass(b.rps / a1.rps >= GOALS.readOfQuery)} (b) ≥ ${GOALS.readOfQuery * 100}% of (a1) req/s: ${percent(b.rps, a1.rps)} ` +
          `((a1), one database round trip from the bare app, is ${percent(a1.rps, a.rps)} of (a); (b) is ${percent(b.rps, a.rps)} of (a))`,
        `- ${pass(b.p99 < GOALS.readP99Ms)} p99 of (b) < ${GOALS.readP99Ms} ms: ${b.p99.toFixed(1)} ms`,
      );
    }
    if (signing) {
      const { echo, e2e } = signing;
      const allSigned = e2e.signStatuses.get(200) === e2e.count;
      const floor = cpuFloorMs(e2e.cpuPerRequest, E2E_CONCURRENCY);
      lines.push(
        `- ${pass(allSigned && e2e.signResponse.p99 <= GOALS.signOfCpuFloor * floor)} ${E2E_CONCURRENCY} at a time, sign → HTTP 200 p99 ≤ ${GOALS.signOfCpuFloor} × the CPU floor: ${ms(e2e.signResponse.p99)} ms against ` +
          `${GOALS.signOfCpuFloor} × ${ms(floor)} ms = ${ms(GOALS.signOfCpuFloor * floor)} ms (${(e2e.signResponse.p99 / floor).toFixed(1)} ×; mean ${(e2e.signResponse.mean / floor).toFixed(1)} ×)${allSigned ? '' : ' (not every sign answered 200)'}; ` +
          `against (f), which does less work: ${(e2e.signResponse.p99 / echo.latency.p99).toFixed(1)} × its p99 of ${ms(echo.latency.p99)} ms`,
        `- ${pass(e2e.completed === e2e.count && e2e.completion.p99 < GOALS.completedP99Ms)} last sign → signing_request.completed p99 < ${GOALS.completedP99Ms} ms: ${ms(e2e.completion.p99)} ms` +
          `${e2e.completed === e2e.count ? '' : ` (only ${e2e.completed} of ${e2e.count} completed)`}`,
        `- ${pass(signing.e2eAlone.signResponse.p99 <= GOALS.signOfUpdate * signing.echoAlone.latency.p99)} one at a time, sign → HTTP 200 p99 ≤ ${GOALS.signOfUpdate} × (f)'s p99 one at a time: ` +
          `${ms(signing.e2eAlone.signResponse.p99)} ms against ${ms(GOALS.signOfUpdate * signing.echoAlone.latency.p99)} ms (${(signing.e2eAlone.signResponse.p99 / signing.echoAlone.latency.p99).toFixed(1)} ×)`,
        ...(signing.echoAlone.baselines
          ? [
              `- ${pass(signing.e2eAlone.signResponse.p99 <= GOALS.signOfUpdate * signing.echoAlone.baselines.regular.p99)} one at a time, sign → HTTP 200 p99 ≤ ${GOALS.signOfUpdate} × (f-regular)'s p99, the round trip that records its change durably as a sign must: ` +
                `${ms(signing.e2eAlone.signResponse.p99)} ms against ${ms(GOALS.signOfUpdate * signing.echoAlone.baselines.regular.p99)} ms (${(signing.e2eAlone.signResponse.p99 / signing.echoAlone.baselines.regular.p99).toFixed(1)} ×; p50 ${(signing.e2eAlone.signResponse.p50 / signing.echoAlone.baselines.regular.p50).toFixed(1)} ×)`,
            ]
          : []),
        `- ${pass(signing.e2eAlone.completed === signing.e2eAlone.count && signing.e2eAlone.completion.p99 < GOALS.completedP99Ms)} one at a time, last sign → signing_request.completed p99 < ${GOALS.completedP99Ms} ms: ${ms(signing.e2eAlone.completion.p99)} ms`,
      );
      const { single, packet, failures } = signing.packets;
      const allDone = failures.length === 0 && single.completed === PACKET_REQUESTS && packet.completed === PACKET_REQUESTS;
      const ratios = packetRatios();
      lines.push(
        `- ${pass(allDone && ratios.completion <= GOALS.packetCompletedOfSingle)} one at a time, ${PACKET_DOCUMENTS} documents and ${PACKET_SIGNERS} signers, last sign → signing_request.completed p99 ≤ ${GOALS.packetCompletedOfSingle} × 1 and 1: ` +
          `${ms(packet.completion.p99)} ms against ${ms(single.completion.p99)} ms (${ratios.completion.toFixed(2)} ×; p50 ${ms(packet.completion.p50)} against ${ms(single.completion.p50)} ms)${allDone ? '' : ' (not every request completed cleanly)'}`,
        `- ${pass(allDone && ratios.seal <= GOALS.packetSealOfSingle)} one at a time, sealing ${PACKET_DOCUMENTS} documents p99 ≤ ${GOALS.packetSealOfSingle} × sealing 1 (completeRequest activity): ` +
          `${ms(packet.seal.p99)} ms against ${ms(single.seal.p99)} ms (${ratios.seal.toFixed(2)} ×; p50 ${ms(packet.seal.p50)} against ${ms(single.seal.p50)} ms)`,
      );
    }
    if (c && c2) {
      lines.push(
        `- ${pass(c2.rps / c.rps >= GOALS.uploadOfCreate)} (c2) a 40 KB PDF upload ≥ ${GOALS.uploadOfCreate * 100}% of (c) req/s: ${percent(c2.rps, c.rps)} (p99 ${c2.p99.toFixed(0)} ms)` +
          (uploadBound !== undefined ? `; the bound from the bare app's same work: ${(uploadBound * 100).toFixed(0)}%` : ''),
      );
      if (textDrain)
        lines.push(
          `- ${pass(textDrain.perSecond >= c2.rps)} texts extracted ≥ (c2)'s uploads/s: ${textDrain.perSecond.toFixed(0)} against ${c2.rps.toFixed(0)}`,
        );
      if (textLag)
        lines.push(
          `- ${pass(textLag.notFound === 0 && textLag.found.p99 <= GOALS.foundByTextMs)} at (c2)'s rate, 201 → found by its text p99 ≤ ${GOALS.foundByTextMs / 1000} s: ${ms(textLag.found.p99)} ms` +
            `${textLag.notFound > 0 ? ` (${textLag.notFound} never found)` : ''}`,
        );
      if (sustained)
        lines.push(
          `- ${pass(sustained.notFound === 0 && sustained.found.p99 <= GOALS.foundByTextMs && backlogFlat(sustained))} at ${SUSTAINED_SHARE * 100}% of the sustainable rate (${sustained.rate}/s), ` +
            `201 → found by its text p99 ≤ ${GOALS.foundByTextMs / 1000} s with the backlog flat: ${ms(sustained.found.p99)} ms, ${sustained.waitingAtStart} → ${sustained.waitingAtHalf} → ${sustained.waitingAtEnd} texts waiting` +
            `${sustained.notFound > 0 ? ` (${sustained.notFound} never found)` : ''}`,
        );
    }
    if (hostile) {
      const slowest = Math.max(...hostile.map((one) => one.healthz.max));
      const growth = Math.max(...hostile.map((one) => one.memoryGrowthMb));
      const slowestAnswer = Math.max(...hostile.map((one) => one.seconds));
      lines.push(
        `- ${pass(slowest < GOALS.hostileHealthzMs)} /healthz < ${GOALS.hostileHealthzMs} ms while each hostile PDF is uploaded: slowest ${slowest.toFixed(0)} ms`,
        `- ${pass(growth < GOALS.hostileGrowthMb)} service + children RSS grows < ${GOALS.hostileGrowthMb} MB during each: at most +${mb(growth)}`,
        `- ${pass(slowestAnswer < GOALS.hostileAnswerSeconds && hostile.every((one) => one.status === 400))} each answered 400 within ${GOALS.hostileAnswerSeconds} s: slowest ${slowestAnswer.toFixed(1)} s`,
      );
    }
    if (webhooks) {
      const { burst, fanOut, paced, besideDown } = webhookMedians(webhooks);
      lines.push(
        `- ${pass(burst.ratio >= GOALS.webhookOfPlain)} burst of ${WEBHOOK_EVENTS} to one endpoint ≥ ${GOALS.webhookOfPlain * 100}% of the plain loop's deliveries/s: ${percent(burst.ratio, 1)} ` +
          `from their commit to the last arrival, median of ${webhooks.rounds.length} rounds`,
        `- ${pass(burst.round.burst.lag.p99 < GOALS.webhookBurstLagP99Ms)} burst lag p99 < ${GOALS.webhookBurstLagP99Ms} ms: ${ms(burst.round.burst.lag.p99)} ms`,
        `- ${pass(fanOut.ratio >= GOALS.webhookOfPlain)} ${WEBHOOK_FAN_OUT_ENDPOINTS} endpoints × ${WEBHOOK_FAN_OUT_EVENTS} at once ≥ ${GOALS.webhookOfPlain * 100}% of the plain loop: ${percent(fanOut.ratio, 1)} (lag p99 ${ms(fanOut.round.fanOut.lag.p99)} ms)`,
        `- (no goal) a stream of ${WEBHOOK_EVENTS} committed one by one by the bench on the same cores: ${percent(burst.stream.ratio, 1)} of the plain loop, bound by its source (the bench commits ${burst.stream.round.stream.committedPerSecond.toFixed(0)} events/s, each arrives within ${ms(burst.stream.round.stream.lag.p99)} ms at p99; the source alone reaches ${percent(burst.sourceRatio, 1)})`,
        `- ${pass(paced.lag.p99 < GOALS.webhookPacedLagP99Ms)} paced ${WEBHOOK_PACED_RATE}/s lag p99 < ${GOALS.webhookPacedLagP99Ms} ms: ${ms(paced.lag.p99)} ms`,
        `- ${pass(besideDown.lag.p99 <= GOALS.webhookBesideDownOfPaced * paced.lag.p99)} beside a failing endpoint with ${besideDown.downPending} pending, the healthy one's lag p99 within noise (≤ ${GOALS.webhookBesideDownOfPaced} × alone): ${ms(besideDown.lag.p99)} ms against ${ms(paced.lag.p99)} ms`,
        `- ${pass(webhooks.mostWorkflows <= WEBHOOK_FAN_OUT_ENDPOINTS + 2)} running webhook workflows: at most ${webhooks.mostWorkflows} for ${WEBHOOK_FAN_OUT_ENDPOINTS + 2} endpoints with work`,
      );
    }
    if (embedded) {
      const { created, atOnce, plainPerSecond } = embedded;
      lines.push(
        `- ${pass(created.delivered === created.events && created.drainSeconds < GOALS.embeddedDrainSeconds)} embedded default, busy machine: ${created.events} documents created through the api delivered within ${GOALS.embeddedDrainSeconds} s of the last: ${created.drainSeconds.toFixed(2)} s`,
        `- ${pass(atOnce.delivered === atOnce.events && atOnce.perSecond >= GOALS.embeddedOfPlain * plainPerSecond)} embedded default, busy machine: a burst of ${atOnce.events} ≥ ${GOALS.embeddedOfPlain * 100}% of the plain loop: ${percent(atOnce.perSecond, plainPerSecond)}`,
      );
    }
    if (uploads) {
      const uploadsOk = uploads.statuses.every((status) => status === 201);
      const growth = uploads.peak - uploads.before;
      lines.push(
        `- ${pass(wholeRunPeak < GOALS.peakRssMb)} peak RSS of api + worker < ${GOALS.peakRssMb} MB: ${mb(wholeRunPeak)} over the whole run`,
        `- ${pass(uploadsOk && growth < GOALS.uploadRssMb)} ${UPLOADS} concurrent 25 MB uploads raise RSS by < ${GOALS.uploadRssMb} MB: +${mb(growth)}${uploadsOk ? '' : ' (some uploads failed)'}`,
        `- ${pass(uploadsOk && uploads.familyPeak - uploads.familyBefore < GOALS.uploadFamilyRssMb)} the same with the PDF processes < ${GOALS.uploadFamilyRssMb} MB: +${mb(uploads.familyPeak - uploads.familyBefore)}`,
      );
    }
    return lines;
  }

  process.stdout.write(report);
  if (full) {
    fs.writeFileSync(path.join(REPO, 'bench/results.md'), report);
    log('report written to bench/results.md');
  } else {
    log('BENCH_ONLY: report printed only; bench/results.md keeps the last full run');
  }
}

main()
  .catch((error) => {
    console.error('[bench] failed:', error);
    process.exitCode = 1;
  })
  .finally(() => cleanUp('bench'))
  // Everything is closed by now, but the Temporal SDK's native runtime (installed for the echo
  // worker) keeps the process alive after its last connection has closed.
  .finally(() => process.exit());
