// `npm run bench:bulk`: issue #56. One bulk send of BULK_ROWS (10,000) rows against the same number of requests made
// through POST /api/v1/signatures from the same template at the best concurrency, in the same run, on one service
// started as `npm start` runs it (api and worker in one process; BULK_SPLIT=1: two, as deployed):
// (a) another account's single request (POST /signatures, one at a time), on the idle system: its p50/p99;
// (b) POST /signatures at 4, 8, 16 and 32 in flight, PROBE_REQUESTS each: the best concurrency;
// (c) BULK_ROWS requests through POST /signatures at that concurrency, and (d) one job of BULK_ROWS rows, from its POST
//     to its last row sent; during both, the other account's single request every SINGLE_EVERY_MS, and the service's
//     memory (RSS of the process and its PDF children) sampled.
// Rounds alternate (c) and (d). Goals: (d)'s rate ≥ 0.8 × (c)'s; memory growth < 100 MB; the single request's p99
// during (d) ≤ 2 × its idle p99. Between phases everything the last made is let finish (invitations sent, CPU idle).
// Needs the services of scripts/services.sh up. Prints a markdown report; a missed goal is reported, never a failing exit.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../src/accounts/service';
import { createApiKey } from '../src/apiKeys/service';
import { migrateLatest, openDatabase, type Db } from '../src/db';
import { sampleFamilyMemory } from './hostilePdfs';
import { cleanUp, cleanups, servicesEnv, startServer } from './processes';
import { connectTemporal, eachLimited, makeSmallPdf, terminateWorkflows } from './signing';
import { settle } from './cpu';
import { START_COMMAND } from './startCommand';
import { median, stats, type Stats } from './stats';

const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROWS = setting('BULK_ROWS', 10_000);
const ROUNDS = setting('BULK_ROUNDS', 2);
const PROBE_REQUESTS = setting('PROBE_REQUESTS', 300);
const CONCURRENCIES = (process.env.BULK_CONCURRENCIES ?? '4,8,16,32').split(',').map(Number);
const SPLIT = process.env.BULK_SPLIT === '1';
const IDLE_SINGLES = 40;
const SINGLE_EVERY_MS = 1000;
const PHASE_DEADLINE_MS = 30 * 60_000;
const DRAIN_DEADLINE_MS = 10 * 60_000;
const GOALS = { rateOfRequests: 0.8, memoryGrowthMb: 100, singleP99OfIdle: 2 };
const INDEX_PREFIX = 'signet-test-postgres-'; // as bench/run.ts: the tests' database, one index prefix

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message: string) => console.error(`[bench:bulk] ${message}`);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : 'n/a');
const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp('bench:bulk').finally(() => process.exit(130)));

interface Api {
  url: string;
  auth: Record<string, string>;
  templateId: string;
}

async function call(api: Api, method: string, route: string, body?: unknown) {
  const response = await fetch(`${api.url}/api/v1${route}`, {
    method,
    headers: { ...api.auth, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${route}: HTTP ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/** An account with a key, and a one-page template of one signer. */
async function accountWithTemplate(db: Db, url: string, name: string, pdf: Buffer): Promise<Api & { accountId: string }> {
  const account = await createAccount(db, { email: `bench-bulk-${name}-${Date.now()}@example.com`, plan: 'business', name: `Signet bulk benchmark ${name}` });
  const { secret } = await createApiKey(db, account.id);
  const api = { url, auth: { Authorization: `Bearer ${secret}` }, templateId: '' };
  const document = await call(api, 'POST', '/documents', { fileName: 'policy.pdf', fileSize: pdf.length, content: pdf.toString('base64') });
  const field = { role: 'employee', type: 'signature', page: 1, x: 50, y: 100, width: 150, height: 40 };
  const template = await call(api, 'POST', '/templates', { name: 'Policy', documentId: document.id, roles: [{ name: 'employee' }], fields: [field] });
  return { ...api, templateId: template.id, accountId: account.id };
}

const person = (tag: string, index: number) => ({ name: `Employee ${index}`, email: `${tag}-${index}@signet-bench.invalid` });
const requestOf = (api: Api, tag: string, index: number) => ({
  templateId: api.templateId,
  title: `Policy ${index}`,
  signers: [{ role: 'employee', ...person(tag, index) }],
});

/** The other account's single request, one at a time every SINGLE_EVERY_MS until stopped: HTTP 201 latencies. */
function singles(api: Api, tag: string) {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      await call(api, 'POST', '/signatures', requestOf(api, tag, i));
      latencies.push(performance.now() - started);
      await sleep(SINGLE_EVERY_MS);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return latencies;
    },
  };
}

interface Phase {
  rate: number;
  seconds: number;
  growthMb: number;
  single: Stats;
}

/** Runs `work` with the other account's singles and the memory sampler going; answers its rate over `count` requests. */
async function phase(pid: number, other: Api, tag: string, count: number, work: () => Promise<void>): Promise<Phase> {
  const memory = sampleFamilyMemory(pid);
  const single = singles(other, `${tag}-single`);
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const latencies = await single.stop();
  memory.stop();
  return { rate: count / seconds, seconds, growthMb: memory.peak() - memory.start, single: stats(latencies) };
}

/** Until every request of the account has sent its invitations and the machine is idle: the next phase starts clean. */
async function drain(db: Db, accountIds: string[]) {
  const deadline = Date.now() + DRAIN_DEADLINE_MS;
  for (;;) {
    const unsent = await db('signers as s')
      .join('signing_requests as r', 'r.id', 's.signing_request_id')
      .whereIn('r.account_id', accountIds)
      .whereNull('s.notified_at')
      .count<{ n: number }[]>('* as n');
    if (Number(unsent[0].n) === 0 || Date.now() > deadline) break;
    await sleep(1000);
  }
  await settle(0.15, 60_000);
}

async function viaRequests(api: Api, tag: string, count: number, concurrency: number) {
  await eachLimited(
    Array.from({ length: count }, (_, index) => index),
    concurrency,
    async (index) => void (await call(api, 'POST', '/signatures', requestOf(api, tag, index))),
  );
}

async function viaJob(api: Api, tag: string, count: number) {
  const rows = Array.from({ length: count }, (_, index) => ({ recipients: { employee: person(tag, index) }, title: `Policy ${index}` }));
  const job = await call(api, 'POST', '/bulk-sends', { templateId: api.templateId, rows });
  const deadline = Date.now() + PHASE_DEADLINE_MS;
  for (;;) {
    const progress = await call(api, 'GET', `/bulk-sends/${job.id}`);
    if (progress.rows.queued === 0) {
      if (progress.rows.failed > 0) throw new Error(`bulk send ${job.id}: ${progress.rows.failed} rows failed`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`bulk send ${job.id}: ${progress.rows.queued} rows still queued after ${PHASE_DEADLINE_MS / 60_000} min`);
    await sleep(250);
  }
}

function report(input: { idle: Stats; probes: { concurrency: number; rate: number }[]; best: number; requests: Phase[]; jobs: Phase[]; startedAt: Date }) {
  const { idle, probes, best, requests, jobs } = input;
  const rate = (phases: Phase[]) => median(phases.map((p) => p.rate));
  const growth = (phases: Phase[]) => Math.max(...phases.map((p) => p.growthMb));
  const p99 = (phases: Phase[]) => median(phases.map((p) => p.single.p99));
  const p50 = (phases: Phase[]) => median(phases.map((p) => p.single.p50));
  const ratio = rate(jobs) / rate(requests);
  const lines = [
    `Run ${input.startedAt.toISOString()}, ${os.cpus().length} cores, ${ROWS} rows, ${ROUNDS} round(s) of each, the rounds alternating; the service as \`${START_COMMAND}\`${SPLIT ? ", api and worker as two processes (BULK_SPLIT=1), the memory the api's" : ''}.`,
    '',
    `POST /signatures (one template, one signer) at ${probes.map((probe) => `${probe.concurrency} in flight ${probe.rate.toFixed(1)}/s`).join(', ')} (${PROBE_REQUESTS} each): the best is ${best}.`,
    '',
    `| ${ROWS} requests | rate /s (median) | s | rate against (c) | memory growth MB (max) | other account's single request p50 / p99 ms | p99 against idle |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    `| (a) idle system, one at a time (${idle.n}) | | | | | ${ms(idle.p50)} / ${ms(idle.p99)} | 1.00 |`,
    `| (c) POST /signatures, ${best} in flight | ${rate(requests).toFixed(1)} | ${ms(median(requests.map((p) => p.seconds)))} | 1.00 | ${ms(growth(requests))} | ${ms(p50(requests))} / ${ms(p99(requests))} | ${(p99(requests) / idle.p99).toFixed(2)} |`,
    `| (d) one bulk send | ${rate(jobs).toFixed(1)} | ${ms(median(jobs.map((p) => p.seconds)))} | **${ratio.toFixed(2)}** | **${ms(growth(jobs))}** | ${ms(p50(jobs))} / ${ms(p99(jobs))} | **${(p99(jobs) / idle.p99).toFixed(2)}** |`,
    '',
    `Goals: job rate ≥ ${GOALS.rateOfRequests} × (c): ${pass(ratio >= GOALS.rateOfRequests)}; memory growth < ${GOALS.memoryGrowthMb} MB: ${pass(growth(jobs) < GOALS.memoryGrowthMb)}; ` +
      `the other account's p99 during the job ≤ ${GOALS.singleP99OfIdle} × idle: ${pass(p99(jobs) <= GOALS.singleP99OfIdle * idle.p99)}.`,
    '',
    `Each round: ${jobs.map((p, i) => `(c) ${requests[i]?.rate.toFixed(1)}/s, (d) ${p.rate.toFixed(1)}/s`).join('; ')}.`,
  ];
  return lines.join('\n');
}

async function main() {
  const startedAt = new Date();
  const serviceEnv = servicesEnv();
  if (!serviceEnv.DATABASE_URL || !serviceEnv.TEMPORAL_ADDRESS)
    throw new Error('needs DATABASE_URL and TEMPORAL_ADDRESS (scripts/services.sh up writes them to .cache/run/services.env)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-bench-bulk-'));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const database = await openDatabase({ DATABASE_URL: serviceEnv.DATABASE_URL, DATABASE_POOL_MAX: 4, dataDir: tmp });
  cleanups.push(() => database.close());
  const db = database.knex;
  await migrateLatest(db);
  const temporal = await connectTemporal(serviceEnv.TEMPORAL_ADDRESS, serviceEnv.TEMPORAL_NAMESPACE ?? 'default');
  cleanups.push(() => temporal.connection.close());

  const env = {
    ...process.env,
    ...serviceEnv,
    HOST: '127.0.0.1',
    DATA_DIR: tmp,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MULTIPLIER: '1000000',
    ELASTICSEARCH_INDEX_PREFIX: INDEX_PREFIX,
    TEMPORAL_TASK_QUEUE: `signet-bench-bulk-${randomUUID().slice(0, 8)}`,
  };
  // SPLIT: the api and the worker as two processes (as deployed), the memory sampled being the api's.
  const service = await startServer({
    name: 'service',
    script: 'src/main.ts',
    readyPath: '/healthz',
    logDir: tmp,
    env: SPLIT ? { ...env, SIGNET_PROCESSES: 'api' } : env,
  });
  if (SPLIT) await startServer({ name: 'worker', script: 'src/main.ts', readyPath: '/healthz', logDir: tmp, env: { ...env, SIGNET_PROCESSES: 'worker' } });
  const pdf = await makeSmallPdf();
  const bulk = await accountWithTemplate(db, service.url, 'bulk', pdf);
  const other = await accountWithTemplate(db, service.url, 'other', pdf);
  const accountIds = [bulk.accountId, other.accountId];
  // Before the accounts go: their workflows stopped (they wait for signatures for weeks), their rows removed.
  cleanups.push(async () => {
    const ids: string[] = await db('signing_requests').whereIn('account_id', accountIds).pluck('id');
    const jobs: string[] = await db('bulk_sends').whereIn('account_id', accountIds).pluck('id');
    log(`cleanup: terminating ${ids.length + jobs.length} workflows`);
    await terminateWorkflows(temporal.client, [...jobs, ...ids]);
    await db('mail_outbox').where('to_address', 'like', '%@signet-bench.invalid%').del();
    await db('signing_requests').whereIn('account_id', accountIds).del();
    await db('accounts').whereIn('id', accountIds).del();
  });

  log(`(a) the other account's single request on the idle system, ${IDLE_SINGLES} one at a time`);
  const idle: number[] = [];
  for (let i = -5; i < IDLE_SINGLES; i++) {
    const started = performance.now();
    await call(other, 'POST', '/signatures', requestOf(other, 'idle', i + 5));
    if (i >= 0) idle.push(performance.now() - started);
    await sleep(200);
  }
  await drain(db, accountIds);

  const probes: { concurrency: number; rate: number }[] = [];
  for (const concurrency of CONCURRENCIES) {
    const started = performance.now();
    await viaRequests(bulk, `probe-${concurrency}`, PROBE_REQUESTS, concurrency);
    probes.push({ concurrency, rate: PROBE_REQUESTS / ((performance.now() - started) / 1000) });
    log(`(b) ${concurrency} in flight: ${probes.at(-1)!.rate.toFixed(1)}/s`);
    await drain(db, accountIds);
  }
  const best = probes.reduce((top, probe) => (probe.rate > top.rate ? probe : top)).concurrency;

  const requests: Phase[] = [];
  const jobs: Phase[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? (['requests', 'job'] as const) : (['job', 'requests'] as const);
    for (const kind of order) {
      log(`round ${round}/${ROUNDS}: ${kind === 'job' ? `(d) one job of ${ROWS} rows` : `(c) ${ROWS} POST /signatures, ${best} in flight`}`);
      const tag = `r${round}-${kind}`;
      const measured = await phase(service.pid, other, tag, ROWS, () => (kind === 'job' ? viaJob(bulk, tag, ROWS) : viaRequests(bulk, tag, ROWS, best)));
      (kind === 'job' ? jobs : requests).push(measured);
      log(`  ${measured.rate.toFixed(1)}/s, memory +${ms(measured.growthMb)} MB, single p99 ${ms(measured.single.p99)} ms`);
      await drain(db, accountIds);
    }
  }
  const errors = fs
    .readFileSync(service.logFile, 'utf8')
    .split('\n')
    .filter((line) => /"level":(50|60)/.test(line));
  if (errors.length) log(`the service logged ${errors.length} errors; the first: ${errors[0].slice(0, 500)}`);
  console.log(report({ idle: stats(idle), probes, best, requests, jobs, startedAt }));
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanUp('bench:bulk'));
