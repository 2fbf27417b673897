// `npm run bench:seal`: the PAdES seal at B-B (the default, no network) against B-LTA, on the test PKI
// (test/support/testPki.ts: certomancer on loopback, its TSA, OCSP responder and CRL), in one run.
// (a) sealDocument alone, in this process, the same documents at both levels, interleaved; every round
//     trip of a B-LTA seal counted and timed by kind (globalThis.fetch is wrapped: the TSA and
//     revocation clients use it). Goal: B-LTA p99 ≤ 2 × B-B p99 + the p99 of a seal's round trips.
// (b) one at a time, last sign → signing_request.completed, on two services (api + worker, started as
//     `npm start` does) sealing with the PKI's seal, one at B-B and one at B-LTA. Goal: p99 < 500 ms.
// Needs DATABASE_URL and TEMPORAL_ADDRESS (from the environment, else .cache/run/services.env) and
// certomancer (scripts/provision.sh certomancer). Prints a markdown report; a missed goal is reported,
// never a failing exit code.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../src/accounts/service';
import { createApiKey } from '../src/apiKeys/service';
import { DEFAULT_ALGORITHM_SUNSETS } from '../src/config';
import { migrateLatest, openDatabase } from '../src/db';
import { sealDocument, type SealTimestamping } from '../src/pdf/seal';
import type { SealCertificate } from '../src/pdf/sealKeySource';
import { sealCertificateOf, timestampingOf, type SealConfig, type SealInput } from '../src/signingRequests/sealing';
import { makePdf } from '../test/support/pdfs';
import { startTestPki } from '../test/support/testPki';
import { cpuMeter, pidListeningOn } from './cpu';
import { connectTemporal, endToEnd, makeSmallPdf, prepareEndToEnd, terminateWorkflows } from './signing';
import { START_COMMAND } from './startCommand';
import { cleanUp, cleanups, servicesEnv, startServer } from './processes';
import { median, stats, type Stats } from './stats';

const LEVELS = ['B-B', 'B-LTA'] as const;
type Level = (typeof LEVELS)[number];
const ROUNDS = 3; // (a) and (b) alike; medians of the rounds
const SEAL_WARM_UP = 3; // untimed seals of each document at each level first
const SEALS_PER_ROUND = 30; // of each document at each level
const SEAL_DEADLINE_MS = 5 * 60_000; // (a) stops starting seals after this, and says so
const E2E_PER_ROUND = 15; // requests per level per round, one at a time
const E2E_WARM_UP = 2;
const E2E_DEADLINE_MS = 120_000;
const INDEX_PREFIX = 'signet-test-postgres-'; // as bench/run.ts: the tests' database, one index prefix
const GOALS = { ofBaseline: 1, completedP99Ms: 500 };

const log = (message: string) => console.error(`[bench:seal] ${message}`);
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(0) : 'n/a');
const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

// ---------------------------------------------------------------- cleanup (as bench/run.ts: reverse order, on error and Ctrl-C too)
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp('bench:seal').finally(() => process.exit(130)));

// ---------------------------------------------------------------- round trips
type Kind = 'TSA' | 'OCSP' | 'CRL' | 'other';
interface RoundTrip {
  kind: Kind;
  ms: number;
}
/** The round trips of the seal being timed, and how long at least one of them was in flight (they may overlap). */
const network = { trips: [] as RoundTrip[], waitingMs: 0, inFlight: 0, since: 0 };

/**
 * globalThis.fetch, counting and timing each call by kind (what the clients ask for: a timestamp, an
 * OCSP answer, a CRL) until its whole body is read, as the clients read it; anything but loopback is
 * refused, so the bench cannot reach out.
 */
function countingFetch(original: typeof fetch): typeof fetch {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') throw new Error(`bench:seal: refusing ${url.origin}, not loopback`);
    const headers = new Headers(init?.headers);
    const kind: Kind =
      headers.get('content-type') === 'application/timestamp-query'
        ? 'TSA'
        : headers.get('content-type') === 'application/ocsp-request'
          ? 'OCSP'
          : headers.get('accept') === 'application/pkix-crl'
            ? 'CRL'
            : 'other';
    const started = performance.now();
    if (network.inFlight++ === 0) network.since = started;
    try {
      const response = await original(input, init);
      const body = await response.arrayBuffer();
      network.trips.push({ kind, ms: performance.now() - started });
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    } finally {
      if (--network.inFlight === 0) network.waitingMs += performance.now() - network.since;
    }
  };
}

// ---------------------------------------------------------------- (a) sealing alone
interface Document {
  name: string;
  input: SealInput;
}

async function documentOf(name: string, pages: number): Promise<Document> {
  const signedAt = new Date();
  const original = await makePdf(Array.from({ length: pages }, (_, i) => `Bench contract, page ${i + 1}`));
  return {
    name,
    input: {
      original,
      signatures: [
        {
          signerName: 'Bench Signer',
          signerEmail: 'signer@signet-bench.invalid',
          signedAt,
          signature: { type: 'typed', value: 'Bench Signer' },
          fields: [{ page: 1, x: 50, y: 100, width: 200, height: 40, type: 'signature' }],
        },
      ],
      certificate: {
        requestId: 'req_01jabcdefghjkmnpqrstvwxyz0',
        title: 'Bench contract',
        document: { name: `${name}.pdf`, pageCount: pages },
        documents: [{ name: `${name}.pdf`, sha256: '0'.repeat(64), pageCount: pages }],
        events: [{ at: signedAt, type: 'request.completed', actor: 'system' }],
        signers: [{ name: 'Bench Signer', email: 'signer@signet-bench.invalid', ipAddress: '127.0.0.1', userAgent: 'signet-bench', signedAt }],
      },
    },
  };
}

interface SealSample {
  ms: number;
  /** CPU of the bench process (every thread) during the seal: on a busy machine, steadier than its time. */
  cpuMs: number;
  bytes: number;
  trips: RoundTrip[];
  waitingMs: number;
}

async function timeSeal(document: Document, sealCertificate: SealCertificate, timestamping: SealTimestamping | undefined): Promise<SealSample> {
  network.trips = [];
  network.waitingMs = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const sealed = await sealDocument({ ...document.input, sealCertificate, timestamping });
  const used = process.cpuUsage(cpu);
  return {
    ms: performance.now() - started,
    cpuMs: (used.user + used.system) / 1000,
    bytes: sealed.pdf.length,
    trips: network.trips,
    waitingMs: network.waitingMs,
  };
}

/** Each round: SEALS_PER_ROUND seals of each document at each level, the levels alternating first. */
async function sealingAlone(documents: Document[], sealCertificate: SealCertificate, timestamping: SealTimestamping) {
  const atLevel = (level: Level) => (level === 'B-B' ? undefined : timestamping);
  // A seal that fails is counted and reported, not timed: the run goes on.
  const failures: string[] = [];
  const seal = (document: Document, level: Level) =>
    timeSeal(document, sealCertificate, atLevel(level)).catch(
      (error: Error) => void failures.push(`${document.name} ${level}: ${error.name}: ${error.message}`),
    );
  const original = globalThis.fetch;
  globalThis.fetch = countingFetch(original);
  try {
    log(`(a) warm-up: ${SEAL_WARM_UP} seals of each document at each level`);
    for (let i = 0; i < SEAL_WARM_UP; i++) for (const document of documents) for (const level of LEVELS) await seal(document, level);
    const deadline = Date.now() + SEAL_DEADLINE_MS;
    const rounds: Map<string, SealSample[]>[] = [];
    for (let round = 1; round <= ROUNDS && Date.now() < deadline; round++) {
      log(`(a) round ${round}/${ROUNDS}: ${SEALS_PER_ROUND} seals of each document at each level, interleaved`);
      const samples = new Map<string, SealSample[]>();
      for (let i = 0; i < SEALS_PER_ROUND && Date.now() < deadline; i++) {
        for (const document of documents) {
          for (const level of i % 2 ? [...LEVELS].reverse() : LEVELS) {
            const key = `${document.name} ${level}`;
            const sample = await seal(document, level);
            if (sample) samples.set(key, [...(samples.get(key) ?? []), sample]);
          }
        }
      }
      rounds.push(samples);
    }
    return { rounds, failures, cutShort: Date.now() >= deadline };
  } finally {
    globalThis.fetch = original;
  }
}

// ---------------------------------------------------------------- (b) the services
// ---------------------------------------------------------------- main
async function main() {
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0];
  const serviceEnv = servicesEnv();
  if (!serviceEnv.DATABASE_URL || !serviceEnv.TEMPORAL_ADDRESS)
    throw new Error('needs DATABASE_URL and TEMPORAL_ADDRESS (scripts/services.sh up writes them to .cache/run/services.env)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-bench-seal-'));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));

  log('starting the test PKI (certomancer on loopback)');
  const pki = await startTestPki();
  cleanups.push(() => fs.rmSync(pki.dir, { recursive: true, force: true }));
  cleanups.push(() => pki.stop());
  // The same seal key for both levels: the difference is the level, not the key.
  const config: SealConfig = {
    dataDir: tmp,
    SEAL_P12_PATH: pki.seal.p12,
    SEAL_P12_PASSWORD: pki.seal.password,
    SEAL_TSA_URLS: pki.tsaUrl,
    SEAL_TSA_TIMEOUT_MS: 10_000,
    SEAL_LEVEL: 'B-LTA',
    SEAL_TRUST_ANCHORS_PATH: pki.rootPem,
    SEAL_ARCHIVE_RENEWAL_DAYS: 90,
    SEAL_ALGORITHM_SUNSETS: DEFAULT_ALGORITHM_SUNSETS,
  };
  const sealCertificate = await sealCertificateOf(config);
  const timestamping = (await timestampingOf(config, sealCertificate))!;

  // ------------------------------------------------ (a)
  const documents = [await documentOf('2 pages', 2), await documentOf('50 pages', 50)];
  const alone = await sealingAlone(documents, sealCertificate, timestamping);

  // ------------------------------------------------ (b)
  const database = await openDatabase({ DATABASE_URL: serviceEnv.DATABASE_URL, DATABASE_POOL_MAX: 10, dataDir: tmp });
  cleanups.push(() => database.close());
  const db = database.knex;
  await migrateLatest(db);
  const account = await createAccount(db, { email: `bench-seal-${Date.now()}@example.com`, plan: 'business', name: 'Signet seal benchmark' });
  cleanups.push(async () => {
    await db('rate_limits').where('key', 'like', `%${account.id}`).del();
    await db('signing_requests').where({ account_id: account.id }).del();
    await db('accounts').where({ id: account.id }).del();
  });
  const { secret } = await createApiKey(db, account.id);
  const auth = { Authorization: `Bearer ${secret}` };
  const temporal = await connectTemporal(serviceEnv.TEMPORAL_ADDRESS, serviceEnv.TEMPORAL_NAMESPACE ?? 'default');
  cleanups.push(() => temporal.connection.close());
  const signerEmail = `signer-${account.id}@signet-bench.invalid`;
  // Before the account goes: its workflows stopped (else a later worker on the same queue would run them), its e-mails removed.
  cleanups.push(async () => {
    const ids: string[] = await db('signing_requests').where({ account_id: account.id }).pluck('id');
    const terminated = await terminateWorkflows(temporal.client, ids);
    const mails = await db('mail_outbox').where('to_address', 'like', `%${signerEmail}%`).orWhere('to_address', 'like', `%${account.email}%`).del();
    log(`cleanup: ${ids.length} signing requests, ${terminated} workflows terminated, ${mails} e-mails removed`);
  });

  // Both services share DATA_DIR (its secrets) and the database; each has a task queue of its own, so
  // a request is sealed by the worker of the service it was created through.
  const run = randomUUID().slice(0, 8);
  const common = {
    ...process.env,
    ...serviceEnv,
    HOST: '127.0.0.1',
    DATA_DIR: tmp,
    LOG_LEVEL: 'warn',
    SIGNET_PROCESSES: 'api,worker',
    RATE_LIMIT_MULTIPLIER: '1000000',
    ELASTICSEARCH_INDEX_PREFIX: INDEX_PREFIX,
    SEAL_P12_PATH: pki.seal.p12,
    SEAL_P12_PASSWORD: pki.seal.password,
  };
  log('(b) starting two services (api + worker): B-B and B-LTA');
  // As `npm start` runs, once /healthz answers.
  const startService = (name: string, env: Record<string, string | undefined>) =>
    startServer({ name, script: 'src/main.ts', env, readyPath: '/healthz', logDir: tmp });
  const services = {
    'B-B': await startService('service-b-b', { ...common, SEAL_LEVEL: 'B-B', SEAL_TSA_URLS: '', TEMPORAL_TASK_QUEUE: `signet-bench-seal-bb-${run}` }),
    'B-LTA': await startService('service-b-lta', {
      ...common,
      SEAL_LEVEL: 'B-LTA',
      SEAL_TSA_URLS: pki.tsaUrl,
      SEAL_TRUST_ANCHORS_PATH: pki.rootPem,
      TEMPORAL_TASK_QUEUE: `signet-bench-seal-blta-${run}`,
    }),
  };
  const smallPdf = await makeSmallPdf(); // bench/run.ts's one at a time signs the same document
  const created = await fetch(`${services['B-B'].url}/api/v1/documents`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ fileName: 'bench-seal.pdf', fileSize: smallPdf.length, content: smallPdf.toString('base64') }),
  });
  if (created.status !== 201) throw new Error(`creating the signing document: HTTP ${created.status} ${await created.text()}`);
  const documentId = ((await created.json()) as { id: string }).id;
  const pkiPort = Number(new URL(pki.tsaUrl).port);
  const optionsOf = (level: Level) => ({
    baseUrl: services[level].url,
    client: temporal.client,
    auth,
    db,
    accountId: account.id,
    documentId,
    signerEmail,
    count: E2E_PER_ROUND,
    warmUp: E2E_WARM_UP,
    concurrency: 1,
    oneRequestInFlight: true,
    deadlineMs: E2E_DEADLINE_MS,
    log,
    cpu: cpuMeter({
      service: services[level].pid,
      'Temporal server': pidListeningOn(Number(serviceEnv.TEMPORAL_ADDRESS!.split(':').pop())),
      PostgreSQL: pidListeningOn(Number(new URL(serviceEnv.DATABASE_URL!).port || 5432)),
      'test PKI': pidListeningOn(pkiPort),
    }),
  });
  const e2e: Record<Level, Awaited<ReturnType<typeof endToEnd>>[]> = { 'B-B': [], 'B-LTA': [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? LEVELS : [...LEVELS].reverse();
    // Both levels' requests made and invited first, so that neither's invitations are in the way of the other's signs.
    const prepared = { 'B-B': await prepareEndToEnd(optionsOf('B-B')), 'B-LTA': await prepareEndToEnd(optionsOf('B-LTA')) };
    for (const level of order) {
      log(`(b) round ${round}/${ROUNDS}: ${level}, ${E2E_PER_ROUND} requests one at a time`);
      e2e[level].push(await endToEnd(optionsOf(level), prepared[level]));
    }
  }
  const serviceErrors = LEVELS.flatMap((level) =>
    fs
      .readFileSync(services[level].logFile, 'utf8')
      .split('\n')
      .filter((line) => /^\{.*"level":(50|60)\b/.test(line))
      .map((line) => `${level}: ${(JSON.parse(line) as { msg?: string }).msg}`),
  );

  process.stdout.write(report({ startedAt, loadAtStart, documents, alone, e2e, serviceErrors }));
}

// ---------------------------------------------------------------- report
interface ReportInput {
  startedAt: Date;
  loadAtStart: number;
  documents: Document[];
  alone: Awaited<ReturnType<typeof sealingAlone>>;
  e2e: Record<Level, Awaited<ReturnType<typeof endToEnd>>[]>;
  serviceErrors: string[];
}

function report({ startedAt, loadAtStart, documents, alone, e2e, serviceErrors }: ReportInput): string {
  const cpu = os.cpus();
  const samplesOf = (round: Map<string, SealSample[]>, document: Document, level: Level) => round.get(`${document.name} ${level}`) ?? [];
  const everyRound = (document: Document, level: Level) => alone.rounds.flatMap((round) => samplesOf(round, document, level));
  /** Per round: the seal's time at each level, a B-LTA seal's round trips (their time in flight), and the goal's ratio. */
  const perRound = (document: Document) =>
    alone.rounds.map((round) => {
      const bb = stats(samplesOf(round, document, 'B-B').map((sample) => sample.ms));
      const blta = stats(samplesOf(round, document, 'B-LTA').map((sample) => sample.ms));
      const trips = stats(samplesOf(round, document, 'B-LTA').map((sample) => sample.waitingMs));
      // A B-LTA seal less its time waiting on the network: its own work.
      const rest = stats(samplesOf(round, document, 'B-LTA').map((sample) => sample.ms - sample.waitingMs));
      return { bb, blta, trips, rest, ratio: blta.p99 / (2 * bb.p99 + trips.p99) };
    });
  const medianOf = (values: number[]) => median(values.filter((value) => Number.isFinite(value)));
  const sealRows = documents.map((document) => {
    const rounds = perRound(document);
    const of = (pick: (round: (typeof rounds)[number]) => Stats) => ({
      n: rounds.reduce((n, round) => n + pick(round).n, 0),
      p50: medianOf(rounds.map((round) => pick(round).p50)),
      p99: medianOf(rounds.map((round) => pick(round).p99)),
      each: rounds.map((round) => ms(pick(round).p99)).join(' / '),
    });
    const [bb, blta, trips, rest] = [of((round) => round.bb), of((round) => round.blta), of((round) => round.trips), of((round) => round.rest)];
    const cpu = (level: Level) => stats(everyRound(document, level).map((sample) => sample.cpuMs)).p50;
    const ratio = medianOf(rounds.map((round) => round.ratio));
    const size = (level: Level) => medianOf(everyRound(document, level).map((sample) => sample.bytes));
    return {
      document,
      ratio,
      ratios: rounds.map((round) => round.ratio.toFixed(2)).join(' / '),
      bb,
      blta,
      trips,
      rest,
      cpuBb: cpu('B-B'),
      cpuBlta: cpu('B-LTA'),
      original: document.input.original.length,
      sizeBb: size('B-B'),
      sizeBlta: size('B-LTA'),
    };
  });
  // The round trips of every B-LTA seal: how many of each kind a seal made, and each one's time.
  const ltaSamples = documents.flatMap((document) => everyRound(document, 'B-LTA'));
  const kinds = (['TSA', 'OCSP', 'CRL', 'other'] as const).filter((kind) => ltaSamples.some((sample) => sample.trips.some((trip) => trip.kind === kind)));
  const countsOf = (kind: Kind) =>
    [...new Set(ltaSamples.map((sample) => sample.trips.filter((trip) => trip.kind === kind).length))].sort((x, y) => x - y).join(' or ');
  const perTrip = (kind: Kind) => stats(ltaSamples.flatMap((sample) => sample.trips.filter((trip) => trip.kind === kind).map((trip) => trip.ms)));
  const sums = stats(ltaSamples.map((sample) => sample.trips.reduce((sum, trip) => sum + trip.ms, 0)));
  const waiting = stats(ltaSamples.map((sample) => sample.waitingMs));
  const bbTrips = documents.flatMap((document) => everyRound(document, 'B-B')).reduce((n, sample) => n + sample.trips.length, 0);

  const e2eOf = (level: Level, pick: (run: (typeof e2e)[Level][number]) => Stats) => ({
    n: e2e[level].reduce((n, run) => n + pick(run).n, 0),
    p50: medianOf(e2e[level].map((run) => pick(run).p50)),
    p99: medianOf(e2e[level].map((run) => pick(run).p99)),
    each: e2e[level].map((run) => ms(pick(run).p99)).join(' / '),
  });
  const completion = { 'B-B': e2eOf('B-B', (run) => run.completion), 'B-LTA': e2eOf('B-LTA', (run) => run.completion) };
  const allCompleted = (level: Level) => e2e[level].every((run) => run.completed === run.count);
  const cpuPerRequest = (level: Level) => {
    const totals: Record<string, number> = {};
    for (const run of e2e[level]) for (const [name, used] of Object.entries(run.cpuPerRequest)) totals[name] = (totals[name] ?? 0) + used / e2e[level].length;
    return Object.entries(totals)
      .map(([name, used]) => `${name} ${ms(used)}`)
      .join(', ');
  };
  const e2eRow = (name: string, pick: (run: (typeof e2e)[Level][number]) => Stats) => {
    const [bb, blta] = LEVELS.map((level) => e2eOf(level, pick));
    return `| ${name} | ${bb.n} / ${blta.n} | ${ms(bb.p50)} / ${ms(blta.p50)} | ${ms(bb.p99)} / ${ms(blta.p99)} | ${bb.each} / ${blta.each} | ${(blta.p99 / bb.p99).toFixed(2)} |`;
  };

  return [
    '# Signet seal levels benchmark (PAdES B-B against B-LTA)',
    '',
    `${startedAt.toISOString()} · ${cpu.length} cores (${cpu[0]?.model.trim()}) · ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM · Node ${process.version} · load average at start ${loadAtStart.toFixed(2)}, at the end ${os.loadavg()[0].toFixed(2)}`,
    '',
    `The test PKI (test/support/testPki.ts: certomancer on loopback, one Python process: CA, TSA, OCSP, CRL) on the same cores; the seal key is its RSA 2048 seal for both levels.`,
    '',
    `**(a) Sealing alone** (sealDocument in the bench process, main thread: stamp, certificate of completion, signature; at B-LTA also the signature timestamp, the DSS with the chains and revocation answers, the document timestamp and its validation data). ` +
      `${SEAL_WARM_UP} untimed seals of each document at each level, then ${alone.rounds.length} rounds of ${SEALS_PER_ROUND} seals of each, the levels interleaved; medians of the rounds' p50 and p99 (each round's p99 shown). ` +
      `Round trips: every fetch the seal made, timed until its body was read; "in flight" = the time at least one was outstanding; the rest = the seal's time less that, its own work (and its waits for a core); CPU = the bench process's, all threads, during the seal.${alone.cutShort ? ` **Cut short:** ${SEAL_DEADLINE_MS / 60_000} minutes were up.` : ''}`,
    '',
    '| seal | n | p50 ms | p99 ms | p99 each round | round trips in flight p50 / p99 ms | the rest p50 / p99 ms | CPU ms p50 | sealed size |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...sealRows.flatMap((row) => [
      `| ${row.document.name} (${kib(row.original)} KiB), B-B | ${row.bb.n} | ${ms(row.bb.p50)} | ${ms(row.bb.p99)} | ${row.bb.each} | | | ${ms(row.cpuBb)} | ${kib(row.sizeBb)} KiB |`,
      `| ${row.document.name}, B-LTA | ${row.blta.n} | ${ms(row.blta.p50)} | ${ms(row.blta.p99)} | ${row.blta.each} | ${ms(row.trips.p50)} / ${ms(row.trips.p99)} | ${ms(row.rest.p50)} / ${ms(row.rest.p99)} | ${ms(row.cpuBlta)} | ${kib(row.sizeBlta)} KiB |`,
    ]),
    '',
    '| document | B-LTA p99 / (2 × B-B p99 + round trips in flight p99) | each round | B-LTA p50 against B-B p50 | sealed size growth |',
    '|---|---:|---:|---:|---:|',
    ...sealRows.map(
      (row) =>
        `| ${row.document.name} | **${row.ratio.toFixed(2)}** | ${row.ratios} | ${(row.blta.p50 / row.bb.p50).toFixed(1)} × | +${kib(row.sizeBlta - row.sizeBb)} KiB (${(((row.sizeBlta - row.sizeBb) / row.sizeBb) * 100).toFixed(0)}%) |`,
    ),
    '',
    `Round trips of a B-LTA seal (${ltaSamples.length} seals; ${bbTrips} made by the ${documents.reduce((n, document) => n + everyRound(document, 'B-B').length, 0)} B-B seals):`,
    '',
    '| kind | per seal | each, p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    ...kinds.map((kind) => {
      const each = perTrip(kind);
      return `| ${kind} | ${countsOf(kind)} | ${ms(each.p50)} | ${ms(each.p99)} | ${ms(each.max)} |`;
    }),
    `| all, summed per seal | ${[...new Set(ltaSamples.map((sample) => sample.trips.length))].sort((x, y) => x - y).join(' or ')} | ${ms(sums.p50)} | ${ms(sums.p99)} | ${ms(sums.max)} |`,
    `| all, in flight per seal | | ${ms(waiting.p50)} | ${ms(waiting.p99)} | ${ms(waiting.max)} |`,
    '',
    ...(alone.failures.length
      ? [`**Failed seals** (warm-up included; not timed): ${alone.failures.length}: ${[...new Set(alone.failures)].slice(0, 5).join('; ')}.`, '']
      : []),
    `**(b) One at a time, last sign → signing_request.completed**, two services (api + worker in one process each, \`${START_COMMAND} src/main.ts\`, LOG_LEVEL=warn) on the same PostgreSQL and Temporal, each on a task queue of its own, one sealing at B-B and one at B-LTA with the loopback TSA ` +
      `(SEAL_TSA_URLS, SEAL_TRUST_ANCHORS_PATH = the PKI's root). ${ROUNDS} rounds of ${E2E_PER_ROUND} requests of 1 signer per level (after ${E2E_WARM_UP} untimed ones each round), the levels' order alternating; ` +
      `each sign sent once the previous request had ended (bench/signing.ts endToEnd, oneRequestInFlight); medians of the rounds' p50 and p99 (each round's p99 shown). The document: bench/signing.ts's one-page PDF, as \`npm run bench\`'s one at a time.`,
    '',
    '| 1 at a time, B-B / B-LTA | n | p50 ms | p99 ms | p99 each round | p99 ratio |',
    '|---|---:|---:|---:|---:|---:|',
    e2eRow("last sign sent → completed event's created_at", (run) => run.completion),
    e2eRow('sign sent → HTTP 200', (run) => run.signResponse),
    e2eRow('signers.signed_at → sealed_documents.created_at', (run) => run.signedToSealed),
    e2eRow('sealed → completed event', (run) => run.sealedToCompleted),
    '',
    `Completed within ${E2E_DEADLINE_MS / 1000} s of each round's first sign: ${LEVELS.map((level) => `${level} ${e2e[level].reduce((n, run) => n + run.completed, 0)} of ${e2e[level].reduce((n, run) => n + run.count, 0)}`).join(', ')}.`,
    '',
    `CPU ms per completed request (sign → workflow closed, closing e-mails included): B-B ${cpuPerRequest('B-B')}; B-LTA ${cpuPerRequest('B-LTA')}.`,
    ...(serviceErrors.length
      ? ['', `Errors logged by the services: ${serviceErrors.slice(0, 10).join('; ')}${serviceErrors.length > 10 ? ` (${serviceErrors.length} in all)` : ''}.`]
      : []),
    '',
    'Goals:',
    '',
    ...sealRows.map(
      (row) =>
        `- ${pass(row.ratio <= GOALS.ofBaseline)} ${row.document.name}: B-LTA p99 ≤ 2 × B-B p99 + its round trips' p99: ${ms(row.blta.p99)} ms against 2 × ${ms(row.bb.p99)} + ${ms(row.trips.p99)} = ${ms(2 * row.bb.p99 + row.trips.p99)} ms (${row.ratio.toFixed(2)} ×)`,
    ),
    `- ${pass(allCompleted('B-LTA') && completion['B-LTA'].p99 < GOALS.completedP99Ms)} one at a time at B-LTA, last sign → signing_request.completed p99 < ${GOALS.completedP99Ms} ms: ${ms(completion['B-LTA'].p99)} ms ` +
      `(B-B: ${ms(completion['B-B'].p99)} ms)${allCompleted('B-LTA') && allCompleted('B-B') ? '' : ' (not every request completed)'}`,
    '',
  ].join('\n');
}

main()
  .catch((error) => {
    console.error('[bench:seal] failed:', error);
    process.exitCode = 1;
  })
  .finally(() => cleanUp('bench:seal'))
  // The Temporal client's native connection can keep the process alive after the last close.
  .finally(() => process.exit());
