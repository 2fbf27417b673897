// The search and dashboard part of `npm run bench` (also runnable alone: `npx tsx bench/search.ts`):
// 100,000 documents, 20,000 signing requests and 1,000,000 events in one account, seeded with
// server-side bulk inserts, loaded into Elasticsearch by the reindex code (_bulk); then search and
// dashboard latencies through the api on Elasticsearch and on the PostgreSQL fallback, side by side,
// with baselines measured in the same run: a plain list endpoint and raw Elasticsearch and PostgreSQL queries.
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@elastic/elasticsearch';
import { Client as TemporalClient } from '@temporalio/client';
import { createAccount } from '../src/accounts/service';
import { createApp } from '../src/app';
import { createApiKey } from '../src/apiKeys/service';
import { loadConfig } from '../src/config';
import { migrateLatest, openDatabase, type Db } from '../src/db';
import { createEventLog } from '../src/events/service';
import { createLogger } from '../src/logger';
import type { SearchBackend } from '../src/search/backend';
import { createElasticsearchSearch, rebuildIndex } from '../src/search/elasticsearchBackend';
import { aliasOf, searchTypesOf } from '../src/search/esIndices';
import { createPostgresSearch } from '../src/search/postgres';
import { setUpWebhooks } from '../src/webhooks/setup';
import { median, percentile } from './stats';

const DOCUMENTS = 100_000;
const REQUESTS = 20_000;
const EVENTS = 1_000_000;
const SAMPLES = 200; // sequential requests per scenario and round
const ROUNDS = 3;
// Untimed, before the rounds: a round's worth of each scenario and baseline. The index is new and the
// searches' paths are cold in Elasticsearch's JVM: with 20 each, Elasticsearch's CPU per search fell over
// the three rounds (32, 21, 15 ms), and the first round set the p99. A long-running service is warm.
const WARMUP = SAMPLES;
const GOALS = { searchP99Ms: 40, postgresSearchP99Ms: 150, trendsP99Ms: 100, searchableWithinMs: 2000 };

// 200 made-up words; the seed picks them with a skew, so some are in most documents and some in few.
const WORDS = Array.from(
  { length: 200 },
  (_, i) =>
    `${['lex', 'cor', 'ven', 'tal', 'mir', 'dus', 'pra', 'sol', 'gen', 'kar'][i % 10]}${['a', 'o', 'i', 'u', 'e'][Math.floor(i / 10) % 5]}${['n', 'r', 's', 'x'][Math.floor(i / 50)]}`,
);

/** Seeds one account with server-side INSERT … SELECT generate_series: no row crosses the network. */
async function seed(db: Db, accountId: string, run: string, log: (message: string) => void) {
  const words = db.raw('?::text[]', [WORDS]);
  const id = (prefix: string, expression: string) => `'${prefix}_0' || '${run}' || lpad(to_hex(${expression}), 17, '0')`;
  // A word per (row, salt), skewed towards the first ones; a hash, not random(), so PostgreSQL cannot reuse one draw.
  const skewed = (salt: string) => `w[1 + floor(200 * power((abs(hashtext((${salt})::text)) % 100000) / 100000.0, 2))::int]`;
  let started = performance.now();
  await db.raw(
    `insert into documents (id, account_id, file_name, file_size, status, page_count, sha256, body_text, created_at, updated_at)
     select ${id('doc', 'i')}, ?, ${skewed('i')} || '-' || ${skewed('i + 7000000')} || '-' || i || '.pdf', 1000, 'ready', 1, repeat('f', 64),
            (select string_agg(${skewed('i * 41 + k + 1000000')}, ' ') from generate_series(1, 40) k),
            now() - (i % 425) * interval '1 day' - (i % 86400) * interval '1 second', now()
     from generate_series(1, ${DOCUMENTS}) i, (select ? as w) words`,
    [accountId, words],
  );
  log(`seeded ${DOCUMENTS} documents in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  started = performance.now();
  await db.raw(
    `insert into signing_requests (id, account_id, document_id, title, message, signing_order, status, expires_at, reminder_every_days, original_sha256, signer_text, created_at, updated_at, completed_at, workflow_started_at)
     select ${id('sr', 'i')}, ?, ${id('doc', '1 + (i * 5) % ' + DOCUMENTS)}, ${skewed('i')} || ' agreement ' || i,
            case when i % 3 = 0 then 'Please sign the ' || ${skewed('i')} || ' terms' end, 'parallel',
            (array['pending', 'completed', 'declined', 'cancelled', 'expired'])[1 + i % 5], now() + interval '30 days', 0, repeat('f', 64),
            'Signer one s' || ((i * 7 + 1) % 500) || '@example.com Signer two s' || ((i * 7 + 2) % 500) || '@example.com',
            created, created, case when i % 5 <> 0 then least(created + (1 + i % 240) * interval '1 hour', now()) end, created
     from (select i, now() - (i % 425) * interval '1 day' - (i % 3600) * interval '1 second' as created from generate_series(1, ${REQUESTS}) i) g, (select ? as w) words`,
    [accountId, words],
  );
  await db.raw(
    `insert into signing_request_documents (signing_request_id, position, document_id, original_sha256)
     select id, 1, document_id, original_sha256 from signing_requests where account_id = ?`,
    [accountId],
  );
  await db.raw(
    `insert into signers (id, signing_request_id, name, email, "order", status, decline_reason)
     select ${id('sgr', 'i * 2 + j')}, ${id('sr', 'i')}, 'Signer ' || j, 's' || ((i * 7 + j) % 500) || '@example.com', j,
            case i % 5 when 0 then (array['pending', 'notified', 'viewed', 'signed'])[1 + (i + j) % 4] when 1 then 'signed'
                       when 2 then case j when 1 then 'declined' else 'notified' end when 3 then 'notified' else 'viewed' end,
            case when i % 5 = 2 and j = 1 then (array['Wrong amount', 'Not authorised', null])[1 + i % 3] end
     from generate_series(1, ${REQUESTS}) i, generate_series(1, 2) j`,
  );
  log(`seeded ${REQUESTS} signing requests with ${REQUESTS * 2} signers in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  started = performance.now();
  await db.raw(
    `insert into events (id, account_id, type, data, created_at, dispatched_at, xid)
     select ${id('evt', 'i')}, ?, (array['document.created', 'signer.viewed', 'signer.signed', 'signing_request.created', 'signing_request.completed'])[1 + i % 5],
            jsonb_build_object('documentId', ${id('doc', '1 + i % ' + DOCUMENTS)}, 'fileName', 'f' || i || '.pdf'),
            now() - (i % 425) * interval '1 day' - (i % 86400) * interval '1 second', now(), null
     from generate_series(1, ${EVENTS}) i`, // xid null: out of the indexer's reach (the seed loads the index itself)
    [accountId],
  );
  log(`seeded ${EVENTS} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await db.raw('analyze documents, signing_requests, signers, events');
}

async function serve(db: Db, search: SearchBackend, dataDir: string) {
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'production' });
  const app = createApp({
    config,
    db,
    events: createEventLog([]), // searches only: no event is recorded
    logger: createLogger('silent'),
    readinessChecks: {},
    temporal: new TemporalClient(),
    webhooks: await setUpWebhooks(config),
    search,
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** `SAMPLES` requests one after another (paths taken in turn), each timed; a non-200 answer stops the bench. */
async function timeSequential(work: (i: number) => Promise<void>) {
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await work(i);
    times.push(performance.now() - started);
  }
  times.sort((x, y) => x - y);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

const getter = (baseUrl: string, apiKey: string) => async (pathname: string) => {
  const response = await fetch(baseUrl + pathname, { headers: { Authorization: `Bearer ${apiKey}` } });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${pathname}: ${response.status} ${body.slice(0, 300)}`);
};

/** Queries a person types: common and rare words, two words, a prefix being typed, a phrase, filters. */
function searchPaths() {
  const paths: string[] = [];
  for (let i = 0; i < 50; i++) {
    const common = WORDS[i % 10];
    const rare = WORDS[150 + (i % 50)];
    paths.push(
      `/api/v1/search?q=${common}`,
      `/api/v1/search?q=${rare}`,
      `/api/v1/search?q=${common}+${WORDS[20 + (i % 30)]}`,
      `/api/v1/search?q=${rare.slice(0, 3)}`,
      `/api/v1/search?q=%22${common}+${WORDS[i % 7]}%22`,
      `/api/v1/search?q=agreement+${common}&type=signing_request&status=pending`,
    );
  }
  return paths;
}

export interface SearchBenchResult {
  markdown: string;
}

const LAG_SAMPLES = 40;

/**
 * From an api call to its change being found by search, on the running service (api + worker, its search
 * indexer on Elasticsearch): a document created with a word of its own, then searched every 25 ms.
 */
async function indexLag(service: { url: string; auth: Record<string, string> }) {
  const lags: number[] = [];
  for (let i = 0; i < LAG_SAMPLES; i++) {
    const word = `lagword${Date.now().toString(36)}x${i}`;
    const started = performance.now();
    const created = await fetch(`${service.url}/api/v1/documents`, {
      method: 'POST',
      headers: { ...service.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ fileName: `${word}.pdf`, fileSize: 1000 }),
    });
    if (created.status !== 201) throw new Error(`POST /documents: ${created.status} ${await created.text()}`);
    for (;;) {
      const found = (await (await fetch(`${service.url}/api/v1/search?q=${word}+`, { headers: service.auth })).json()) as { total?: number };
      if (found.total === 1) break;
      if (performance.now() - started > 30_000) throw new Error(`${word} not searchable after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    lags.push(performance.now() - started);
  }
  lags.sort((x, y) => x - y);
  return { p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags[lags.length - 1] };
}

export async function searchBench({
  databaseUrl,
  elasticsearchUrl,
  service,
  log,
}: {
  databaseUrl: string;
  elasticsearchUrl: string;
  /** The running service, when there is one: the time from an api call to search finding its change is measured on it. */
  service?: { url: string; auth: Record<string, string> };
  log: (message: string) => void;
}): Promise<SearchBenchResult> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-search-bench-'));
  const database = await openDatabase({ DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: 10, dataDir: tmp });
  const db = database.knex;
  // Loading 120,000 resources on a busy machine can take a _bulk past the api's 5 s; searches keep their own 2 s.
  const elastic = new Client({ node: elasticsearchUrl, requestTimeout: 60_000, maxRetries: 1 });
  const run = Date.now().toString(16).slice(-8).padStart(8, '0');
  const prefix = `signet-bench-${run}-`;
  const servers: { close(): Promise<unknown> }[] = [];
  let accountId: string | undefined;
  try {
    await migrateLatest(db);
    const account = await createAccount(db, { email: `search-bench-${run}@example.com`, plan: 'business' });
    accountId = account.id;
    const { secret } = await createApiKey(db, account.id);
    await seed(db, account.id, run, log);

    const started = performance.now();
    const loaded: Record<string, number> = {};
    for (const type of searchTypesOf) loaded[type] = (await rebuildIndex(db, elastic, prefix, type)).documents;
    const loadSeconds = (performance.now() - started) / 1000;
    log(
      `loaded Elasticsearch with _bulk (the reindex code): ${loaded.document} documents, ${loaded.signing_request} signing requests in ${loadSeconds.toFixed(1)} s`,
    );

    const es = createElasticsearchSearch({ db, client: elastic, prefix, logger: createLogger('silent') });
    await es.index([]); // the indices exist: this only waits for the check
    const pg = createPostgresSearch(db);
    const apps = { elasticsearch: await serve(db, es, tmp), postgres: await serve(db, pg, tmp) };
    servers.push(...Object.values(apps));
    const get = { elasticsearch: getter(apps.elasticsearch.url, secret), postgres: getter(apps.postgres.url, secret) };

    const paths = searchPaths();
    const scenarios: Record<string, (kind: 'elasticsearch' | 'postgres') => (i: number) => Promise<void>> = {
      'GET /search (6 query shapes, 300 queries)': (kind) => (i) => get[kind](paths[i % paths.length]),
      'GET /dashboard/stats': (kind) => () => get[kind]('/api/v1/dashboard/stats'),
      'GET /dashboard/trends?months=12': (kind) => () => get[kind]('/api/v1/dashboard/trends?months=12'),
      'GET /dashboard/signing-breakdown': (kind) => () => get[kind]('/api/v1/dashboard/signing-breakdown'),
    };
    const baselines: Record<string, (i: number) => Promise<void>> = {
      'baseline: GET /documents?limit=20 (same api, same data, a primary-key scan)': () => get.postgres('/api/v1/documents?limit=20'),
      'baseline: GET /dashboard/activity (1M events, SQL in both setups)': () => get.postgres('/api/v1/dashboard/activity?limit=20'),
      'baseline: raw Elasticsearch match query (a rarer word), 20 hits, from the bench process': async (i) => {
        await elastic.search({
          index: aliasOf(prefix, 'document'),
          size: 20,
          query: { bool: { filter: [{ term: { accountId: account.id } }], must: [{ match: { text: WORDS[150 + (i % 50)] } }] } },
        });
      },
      // A sixth of the searches are phrases, so their time is PostgreSQL's p99: without an index of word
      // positions, each document holding both words is read for them. This is that read alone.
      'baseline: raw PostgreSQL, the documents holding a phrase of the searches counted, from the bench process': async (i) => {
        await db('documents')
          .where({ account_id: account.id })
          .whereNull('deleted_at')
          .whereRaw(`search_vector @@ to_tsquery('simple', ?)`, [`${WORDS[i % 10]} <-> ${WORDS[i % 7]}`])
          .count({ count: '*' });
      },
    };
    // What the queries match, on both backends: they must agree (each counts up to TOTAL_COUNTED_UP_TO, then says "at least").
    const totals = async (q: string) =>
      Promise.all(
        (['elasticsearch', 'postgres'] as const).map(async (kind) => {
          const response = await fetch(`${apps[kind].url}/api/v1/search?q=${q}&limit=1`, { headers: { Authorization: `Bearer ${secret}` } });
          const { total, totalIsExact } = (await response.json()) as { total: number; totalIsExact: boolean };
          return totalIsExact ? String(total) : `${total}+`;
        }),
      );
    const matched = { common: await totals(WORDS[0]), rare: await totals(WORDS[199]), prefix: await totals(WORDS[160].slice(0, 3)) };
    log(`totals (Elasticsearch, PostgreSQL): ${JSON.stringify(matched)}`);
    log('warming up');
    for (const kind of ['elasticsearch', 'postgres'] as const)
      for (const make of Object.values(scenarios)) for (let i = 0; i < WARMUP; i++) await make(kind)(i);
    for (const work of Object.values(baselines)) for (let i = 0; i < WARMUP; i++) await work(i);

    const samples = new Map<string, { p50: number; p99: number }[]>();
    const record = (name: string, sample: { p50: number; p99: number }) => samples.set(name, [...(samples.get(name) ?? []), sample]);
    for (let round = 1; round <= ROUNDS; round++) {
      log(`round ${round} of ${ROUNDS}`);
      for (const [name, make] of Object.entries(scenarios)) {
        for (const kind of ['elasticsearch', 'postgres'] as const) record(`${name}|${kind}`, await timeSequential(make(kind)));
      }
      for (const [name, work] of Object.entries(baselines)) record(name, await timeSequential(work));
    }
    const lag = service ? await indexLag(service) : null;
    if (lag) log(`index lag: p50 ${lag.p50.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms`);
    const stat = (name: string) => {
      const runs = samples.get(name)!;
      return { p50: median(runs.map((run) => run.p50)), p99: median(runs.map((run) => run.p99)) };
    };
    const ms = (value: number) => value.toFixed(1);
    const rows = Object.keys(scenarios).map((name) => {
      const e = stat(`${name}|elasticsearch`);
      const p = stat(`${name}|postgres`);
      return `| ${name} | ${ms(e.p50)} | ${ms(e.p99)} | ${ms(p.p50)} | ${ms(p.p99)} |`;
    });
    const search = stat(`${Object.keys(scenarios)[0]}|elasticsearch`);
    const postgresSearch = stat(`${Object.keys(scenarios)[0]}|postgres`);
    const trends = stat('GET /dashboard/trends?months=12|elasticsearch');
    const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
    const markdown = [
      `**Search and dashboard** (one account: ${DOCUMENTS.toLocaleString('en')} documents with 40 words of text each, ${REQUESTS.toLocaleString('en')} signing requests with 2 signers, ` +
        `${EVENTS.toLocaleString('en')} events, spread over 14 months; ${SAMPLES} sequential requests per scenario and round through the api on loopback, after ${WARMUP} untimed of each, ${ROUNDS} rounds interleaved, medians of the rounds; ms):`,
      '',
      '| scenario | Elasticsearch p50 | p99 | PostgreSQL p50 | p99 |',
      '|---|---:|---:|---:|---:|',
      ...rows,
      ...Object.keys(baselines).map((name) => `| ${name} | ${ms(stat(name).p50)} | ${ms(stat(name).p99)} | | |`),
      '',
      lag
        ? `**From an api call to search finding it** (POST /documents on the running service, then GET /search every 25 ms; ${LAG_SAMPLES} documents one after another): ` +
          `p50 ${lag.p50.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms. The path: commit, the search indexer's activity (woken by the commit, the service being one process), _bulk, then the index's refresh (every second).`
        : 'The time from an api call to search finding it is measured by `npm run bench`, on the running service.',
      '',
      `Hits (Elasticsearch / PostgreSQL): common word "${WORDS[0]}" ${matched.common.join(' / ')}, rare word "${WORDS[199]}" ${matched.rare.join(' / ')}, prefix "${WORDS[160].slice(0, 3)}" ${matched.prefix.join(' / ')}.`,
      '',
      `Seeding: server-side INSERT … SELECT generate_series; Elasticsearch loaded by the reindex code (_bulk of 500) at ${((loaded.document + loaded.signing_request) / loadSeconds).toFixed(0)} resources/s.`,
      '',
      `- ${pass(search.p99 < GOALS.searchP99Ms)} search p99 on Elasticsearch < ${GOALS.searchP99Ms} ms: ${ms(search.p99)} ms`,
      `- ${pass(postgresSearch.p99 < GOALS.postgresSearchP99Ms)} search p99 on PostgreSQL < ${GOALS.postgresSearchP99Ms} ms: ${ms(postgresSearch.p99)} ms`,
      `- ${pass(trends.p99 < GOALS.trendsP99Ms)} trends p99 on Elasticsearch < ${GOALS.trendsP99Ms} ms: ${ms(trends.p99)} ms`,
      ...(lag
        ? [
            `- ${pass(lag.max < GOALS.searchableWithinMs)} a change is searchable within ${GOALS.searchableWithinMs / 1000} s of its api call: max ${lag.max.toFixed(0)} ms`,
          ]
        : []),
      '',
    ].join('\n');
    return { markdown };
  } finally {
    for (const server of servers) await server.close();
    await elastic.indices.delete({ index: `${prefix}*` }).catch(() => undefined);
    await elastic.close();
    if (accountId) {
      log('removing the bench account and its rows');
      // A cleanup that fails is said, not thrown: it must not cost the run its report.
      await db('events')
        .where({ account_id: accountId })
        .del()
        .then(() => db('accounts').where({ id: accountId }).del())
        .catch((error: Error) => log(`could not remove the bench account ${accountId}: ${error.message}`));
    }
    await database.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const { DATABASE_URL, ELASTICSEARCH_URL } = process.env;
  if (!DATABASE_URL || !ELASTICSEARCH_URL)
    throw new Error('Set DATABASE_URL and ELASTICSEARCH_URL (source .cache/run/services.env after scripts/services.sh up).');
  searchBench({ databaseUrl: DATABASE_URL, elasticsearchUrl: ELASTICSEARCH_URL, log: (message) => console.error(`[bench] ${message}`) })
    .then(({ markdown }) => process.stdout.write(`${markdown}\n`))
    .catch((error) => {
      console.error('[bench] failed:', error);
      process.exitCode = 1;
    });
}
