// Scenarios of `npm run bench` around signing requests: the raw rate at which the Temporal server
// starts a workflow (the floor under POST /signatures, which starts one before answering), a raw
// update round trip to a workflow that answers at once (the floor under a signer's Sign → 200), and
// the end-to-end time from a signer's Sign to the signing_request.completed event.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Db } from '../src/db';
import { cpuBetween } from './cpu';
import { percentile, stats, type Stats } from './stats';
import { createBaselineActivities } from './baselineActivities';
import { echoUpdate, transactInActivityUpdate, transactUpdate, type echoWorkflow } from './workflows/echo';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A real one-page PDF with a line of text (a few hundred bytes). */
export async function makeSmallPdf(): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  pdf.addPage([595, 842]).drawText('Signet benchmark agreement', { x: 50, y: 780, size: 14, font });
  return Buffer.from(await pdf.save());
}

/** Runs `work` over `items`, `concurrency` at a time. */
export async function eachLimited<T>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index], index);
      }
    }),
  );
}

export async function connectTemporal(address: string, namespace: string) {
  const connection = await Connection.connect({ address });
  return { connection, client: new Client({ connection, namespace }) };
}

export const EMPTY_TASK_QUEUE = 'signet-bench-empty';
/**
 * Nobody polls EMPTY_TASK_QUEUE: the workflows are only started, never run, which is what a start costs
 * the server. They time out on their own after this, once the bench is over.
 */
export const EMPTY_WORKFLOW_TIMEOUT = '10 minutes';

export interface StartSample {
  rps: number;
  p50: number;
  p99: number;
  bad: number;
  started: number;
}

/**
 * `concurrency` loops, each starting an empty workflow (type `emptyWorkflow`, no arguments, no search
 * attributes) with the Temporal client and waiting for the answer before starting the next, for `seconds`.
 */
export async function rawStarts(client: Client, concurrency: number, seconds: number): Promise<StartSample> {
  const latencies: number[] = [];
  let bad = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await client.workflow.start('emptyWorkflow', {
            workflowId: `bench-empty-${randomUUID()}`,
            taskQueue: EMPTY_TASK_QUEUE,
            args: [],
            workflowExecutionTimeout: EMPTY_WORKFLOW_TIMEOUT,
          });
          latencies.push(performance.now() - t0);
        } catch {
          bad++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((x, y) => x - y);
  return { rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), bad, started: latencies.length };
}

/** Terminates the given workflows, ignoring those already closed or unknown. */
export async function terminateWorkflows(client: Client, ids: string[], concurrency = 32) {
  let terminated = 0;
  await eachLimited(ids, concurrency, async (id) => {
    try {
      await client.workflow.getHandle(id).terminate('signet bench cleanup');
      terminated++;
    } catch {
      // closed already (completed) or never started
    }
  });
  return terminated;
}

// Each run its own, as the service's (bench/run.ts): no leftover worker of another run takes its tasks.
export const ECHO_TASK_QUEUE = `signet-bench-echo-${randomUUID().slice(0, 8)}`;
const ECHO_LIFETIME_MS = 10 * 60 * 1000;

export interface EchoOptions {
  address: string;
  namespace: string;
  client: Client;
  /** Timed updates, each to its own workflow, after `warmUp` untimed ones. */
  count: number;
  warmUp: number;
  concurrency: number;
  /** Give up on the rest this long after the echo workflows are started. */
  deadlineMs: number;
  log: (message: string) => void;
  /** With a database: also the baselines that commit one transaction in it (EchoSample's `baselines`). */
  db?: Db;
}

export interface EchoSample {
  latency: Stats;
  perSecond: number;
  bad: number;
  /**
   * The same round trips, measured alternately with the echo, to handlers that first commit one
   * PostgreSQL transaction: in a local activity, before the workflow task that accepts the update ends
   * (`local`); in a regular activity, scheduled once the update is accepted into the history (`regular`).
   */
  baselines?: { local: Stats; regular: Stats };
}

/**
 * The floor under a signer's Sign → HTTP 200: `count` update round trips (executeUpdate, which waits for
 * the handler's result, as the api's sign does), `concurrency` at a time, to bench/workflows/echo.ts,
 * whose handler answers at once. Each update goes to its own workflow, started beforehand and through
 * its first workflow task, as a signing request's workflow is when its signer signs. The workflows run
 * in a worker in this process, on ECHO_TASK_QUEUE of the service's Temporal server, and are terminated
 * at the end. With `db`, each echo is followed by one update of each baseline (EchoSample's `baselines`).
 */
export async function echoUpdates(options: EchoOptions): Promise<EchoSample> {
  const { client, concurrency, log, db } = options;
  // Once per process; the SDK's info level prints the whole webpack report, and Ctrl-C stays with the bench.
  Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
  log('echo baseline: bundling bench/workflows/echo.ts and starting its worker');
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./workflows/echo'), logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: options.address });
  try {
    const activities = db ? createBaselineActivities(db) : undefined;
    const worker = await Worker.create({ connection, namespace: options.namespace, taskQueue: ECHO_TASK_QUEUE, workflowBundle, activities });
    return await worker.runUntil(async () => {
      const deadline = Date.now() + options.deadlineMs;
      const shapes = db ? [echoUpdate, transactUpdate, transactInActivityUpdate] : [echoUpdate];
      // One workflow per update: [echo, local, regular] (or [echo]) for each of warmUp + count.
      const rounds = Array.from({ length: options.warmUp + options.count }, () => shapes.map(() => `bench-echo-${randomUUID()}`));
      const ids = rounds.flat();
      try {
        await eachLimited(ids, concurrency, async (workflowId) => {
          await client.workflow.start<typeof echoWorkflow>('echoWorkflow', {
            workflowId,
            taskQueue: ECHO_TASK_QUEUE,
            args: [ECHO_LIFETIME_MS],
            workflowExecutionTimeout: ECHO_LIFETIME_MS * 2,
          });
        });
        // Started, task scheduled, started, completed: the workflow waits on its timer.
        await eachLimited(ids, concurrency, async (workflowId) => {
          while (Date.now() < deadline && (await client.workflow.getHandle(workflowId).describe()).historyLength < 4) await sleep(20);
        });
        const update = async (workflowId: string, shape: (typeof shapes)[number]) => {
          const started = performance.now();
          await client.connection.withDeadline(deadline, () => client.workflow.getHandle(workflowId).executeUpdate(shape, { args: [workflowId] }));
          return performance.now() - started;
        };
        await eachLimited(rounds.slice(0, options.warmUp), concurrency, async (round) => {
          for (const [i, workflowId] of round.entries()) await update(workflowId, shapes[i]).catch(() => undefined);
        });
        log(`echo baseline: ${options.count} updates${db ? ' and as many of each baseline' : ''}, ${concurrency} at a time`);
        const latencies: number[][] = shapes.map(() => []);
        let bad = 0;
        const started = performance.now();
        await eachLimited(rounds.slice(options.warmUp), concurrency, async (round) => {
          for (const [i, workflowId] of round.entries()) {
            if (Date.now() >= deadline) return;
            await update(workflowId, shapes[i]).then(
              (ms) => latencies[i].push(ms),
              () => bad++,
            );
          }
        });
        const [echoes, local, regular] = latencies;
        return {
          latency: stats(echoes),
          perSecond: echoes.length / ((performance.now() - started) / 1000 / shapes.length),
          bad,
          ...(db ? { baselines: { local: stats(local), regular: stats(regular) } } : {}),
        };
      } finally {
        await terminateWorkflows(client, ids);
      }
    });
  } finally {
    await connection.close();
  }
}

export interface EndToEndOptions {
  baseUrl: string;
  /** The service's Temporal server, to read when the sign's workflow task started and completed. */
  client: Client;
  auth: Record<string, string>;
  db: Db;
  accountId: string;
  documentId: string;
  signerEmail: string;
  /** Timed signs, after `warmUp` untimed ones (and their completions). */
  count: number;
  warmUp: number;
  concurrency: number;
  /** Give up on completions this long after the first sign is sent. */
  deadlineMs: number;
  /**
   * One request in flight: the next sign waits until the previous request's workflow has ended (its
   * seal, completed event and closing e-mails done) and the search copy caught up, so that no other
   * request's work is in the way of the one measured.
   */
  oneRequestInFlight?: boolean;
  log: (message: string) => void;
  /** CPU ms used so far by each process behind the service (bench/cpu.ts), read around the timed signs. */
  cpu?: () => Record<string, number>;
}

interface PreparedRequest {
  id: string;
  signerId: string;
  token?: string;
}

/**
 * `warmUp + count` signing requests of one signer each, created and linked, and waited on until the
 * worker has sent every invitation of the account (so no backlog is in the way of the signs of endToEnd).
 */
export async function prepareEndToEnd(options: EndToEndOptions) {
  const { baseUrl, auth, db, accountId, concurrency, log } = options;
  const count = options.warmUp + options.count;
  const json = { ...auth, 'Content-Type': 'application/json' };
  const requests: PreparedRequest[] = [];
  log(`end to end: creating ${count} signing requests and their signer links`);
  await eachLimited(
    Array.from({ length: count }, (_, i) => i),
    concurrency,
    async (i) => {
      const response = await fetch(`${baseUrl}/api/v1/signatures`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          document_id: options.documentId,
          title: `Bench end-to-end ${i}`,
          signers: [{ name: 'Bench Signer', email: options.signerEmail }],
        }),
        signal: AbortSignal.timeout(30_000),
      });
      if (response.status !== 201) throw new Error(`creating a signing request: HTTP ${response.status} ${await response.text()}`);
      const body = (await response.json()) as { id: string; signers: { id: string }[] };
      requests.push({ id: body.id, signerId: body.signers[0].id });
    },
  );
  await eachLimited(requests, concurrency, async (request) => {
    const response = await fetch(`${baseUrl}/api/v1/signatures/${request.id}/signers/${request.signerId}/link`, {
      method: 'POST',
      headers: auth,
      signal: AbortSignal.timeout(30_000),
    });
    if (response.status !== 200) throw new Error(`creating a signer link: HTTP ${response.status} ${await response.text()}`);
    request.token = new URL(((await response.json()) as { url: string }).url).pathname.split('/').pop()!;
  });

  // Wait for the invitations (the workflow's first activity) of every request of the account, this
  // run's earlier load included, so the signs do not queue behind that backlog.
  const drainStarted = performance.now();
  let pendingLeft = -1;
  while (performance.now() - drainStarted < 120_000) {
    const row = await db('signers as s')
      .join('signing_requests as r', 'r.id', 's.signing_request_id')
      .where({ 'r.account_id': accountId, 's.status': 'pending' })
      .count({ n: '*' })
      .first();
    pendingLeft = Number(row?.n ?? 0);
    if (pendingLeft === 0) break;
    await sleep(250);
  }
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  log(`end to end: invitations drained after ${drainSeconds.toFixed(1)} s (${pendingLeft} signers still pending)`);
  return { requests, drainSeconds, pendingLeft };
}

const { EventType } = temporal.api.enums.v1;

/**
 * The path of the sign update through its workflow's history, in ms by the server's clock (this
 * machine's): the workflow task that accepted the update (its handler started recordSignature), that
 * activity, and the workflow task that completed the update, whose completion carries the update's
 * outcome back to the api.
 */
async function signPath(client: Client, workflowId: string) {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const first = (type: temporal.api.enums.v1.EventType, from = 0) => events.findIndex((event, i) => i >= from && event.eventType === type);
  const lastBefore = (index: number, type: temporal.api.enums.v1.EventType) => {
    for (let i = index - 1; i >= 0; i--) if (events[i].eventType === type) return i;
    return -1;
  };
  const at = (index: number) =>
    index < 0 || !events[index].eventTime ? NaN : Number(events[index].eventTime.seconds) * 1000 + (events[index].eventTime.nanos ?? 0) / 1e6;
  const accepted = first(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
  const answered = accepted < 0 ? -1 : first(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED, accepted);
  const acceptingCompleted = lastBefore(accepted, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  const answeringCompleted = lastBefore(answered, EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  return {
    acceptingStartedAt: at(lastBefore(acceptingCompleted, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)),
    acceptingCompletedAt: at(acceptingCompleted),
    recordedAt: at(accepted < 0 ? -1 : first(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, accepted)),
    answeringStartedAt: at(lastBefore(answeringCompleted, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)),
    answeringCompletedAt: at(answeringCompleted),
  };
}

/** Until a request's workflow has ended (bounded by `deadline`), then a moment for what follows its events (search copy, webhooks). */
async function requestEnded(client: Client, workflowId: string, deadline: number) {
  let timer: NodeJS.Timeout | undefined;
  const ended = client.workflow
    .getHandle(workflowId)
    .result()
    .catch(() => undefined);
  await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
  await sleep(200);
}

/** A signer's Sign, as the signing page sends it; the HTTP status, or 0 when there was no answer by `deadline`. */
export function postSign(baseUrl: string, token: string, deadline: number): Promise<number> {
  return fetch(`${baseUrl}/sign/${token}/sign`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'signet-bench' },
    body: JSON.stringify({ consent: true, signature: { type: 'typed', value: 'Bench Signer' } }),
    signal: AbortSignal.timeout(Math.max(1000, deadline - Date.now())),
  }).then(
    async (response) => (await response.arrayBuffer(), response.status),
    () => 0,
  );
}

/**
 * The signers of prepareEndToEnd's requests sign, `concurrency` at a time: first `warmUp` of them,
 * untimed, waited on until their requests are completed (the first seals in a fresh DATA_DIR generate
 * its seal certificate), then the other `count`. For each of those: the time from sending the Sign
 * call to its HTTP 200, and to the signing_request.completed event's created_at (written by the
 * service with `new Date()` on this machine: one clock with the Date.now() taken here), broken down
 * with signers.signed_at (the recordSignature activity, also `new Date()` in the service),
 * sealed_documents.created_at (PostgreSQL's now(), same machine) and the sign's path through its
 * workflow's history (signPath).
 */
export async function endToEnd(options: EndToEndOptions, { requests, drainSeconds, pendingLeft }: Awaited<ReturnType<typeof prepareEndToEnd>>) {
  const { baseUrl, db, accountId, count, concurrency, log } = options;
  const warmUp = requests.slice(0, options.warmUp);
  const timed = requests.slice(options.warmUp);
  if (warmUp.length > 0) {
    log(`end to end: warm-up, ${warmUp.length} signs ${concurrency} at a time and their completions`);
    const until = Date.now() + options.deadlineMs;
    await eachLimited(warmUp, concurrency, async (request) => void (await postSign(baseUrl, request.token!, until)));
    const completed = async () =>
      Number(
        (
          await db('signing_requests')
            .whereIn(
              'id',
              warmUp.map((request) => request.id),
            )
            .where({ status: 'completed' })
            .count({ n: '*' })
            .first()
        )?.n ?? 0,
      );
    while (Date.now() < until && (await completed()) < warmUp.length) await sleep(100);
  }
  log(`end to end: signing ${timed.length}, ${concurrency} at a time`);
  const ids = new Set(timed.map((request) => request.id));
  const sentAt = new Map<string, number>();
  const respondedAt = new Map<string, number>();
  const observedAt = new Map<string, number>();
  const completedAt = new Map<string, number>();
  const signStatuses = new Map<number, number>();
  const cpuAtStart = options.cpu?.();
  const phaseStarted = Date.now();
  const deadline = phaseStarted + options.deadlineMs;
  let signing = true;

  const poller = (async () => {
    while (Date.now() < deadline && (signing || completedAt.size < sentAt.size)) {
      const rows: { id: string; created_at: Date }[] = await db('events')
        .where({ account_id: accountId, type: 'signing_request.completed' })
        .where('created_at', '>=', new Date(phaseStarted - 1000))
        .select(db.raw(`data->>'signingRequestId' as id`), 'created_at');
      const now = Date.now();
      for (const row of rows) {
        if (!ids.has(row.id) || completedAt.has(row.id)) continue;
        completedAt.set(row.id, new Date(row.created_at).getTime());
        observedAt.set(row.id, now);
      }
      await sleep(50);
    }
  })();

  await eachLimited(timed, concurrency, async (request) => {
    if (Date.now() >= deadline) return;
    sentAt.set(request.id, Date.now());
    const status = await postSign(baseUrl, request.token!, deadline);
    respondedAt.set(request.id, Date.now());
    signStatuses.set(status, (signStatuses.get(status) ?? 0) + 1);
    if (options.oneRequestInFlight) await requestEnded(options.client, request.id, deadline);
  });
  const signsSeconds = (Date.now() - phaseStarted) / 1000;
  signing = false;
  await poller;
  const cpu = cpuAtStart && options.cpu ? cpuBetween(cpuAtStart, options.cpu()) : {};
  const lastCompletion = Math.max(...completedAt.values());

  // The breakdown, for the completed requests.
  const done = [...completedAt.keys()];
  const signedAt = new Map<string, number>();
  const sealedAt = new Map<string, number>();
  for (let i = 0; i < done.length; i += 500) {
    const chunk = done.slice(i, i + 500);
    for (const row of await db('signers').whereIn('signing_request_id', chunk).select('signing_request_id', 'signed_at'))
      signedAt.set(row.signing_request_id, new Date(row.signed_at).getTime());
    for (const row of await db('sealed_documents').whereIn('signing_request_id', chunk).select('signing_request_id', 'created_at'))
      sealedAt.set(row.signing_request_id, new Date(row.created_at).getTime());
  }
  const paths = new Map<string, Awaited<ReturnType<typeof signPath>>>();
  await eachLimited(done, concurrency, async (id) => {
    const path = await signPath(options.client, id).catch(() => undefined);
    if (path) paths.set(id, path);
  });
  const pathAt = (key: keyof Awaited<ReturnType<typeof signPath>>) => (id: string) => paths.get(id)?.[key];
  const over = (from: (id: string) => number | undefined, to: (id: string) => number | undefined) =>
    stats(done.map((id) => (to(id) ?? NaN) - (from(id) ?? NaN)).filter((value) => Number.isFinite(value)));

  return {
    requestIds: requests.map((request) => request.id),
    count,
    sent: sentAt.size,
    completed: completedAt.size,
    signStatuses,
    drainSeconds,
    pendingLeft,
    signsSeconds,
    completionSeconds: (lastCompletion - phaseStarted) / 1000,
    signResponse: stats([...respondedAt].map(([id, at]) => at - sentAt.get(id)!)),
    completion: over(
      (id) => sentAt.get(id),
      (id) => completedAt.get(id),
    ),
    observed: over(
      (id) => sentAt.get(id),
      (id) => observedAt.get(id),
    ),
    // Where the 200 goes: the workflow task that accepted the update, recordSignature, the task that answered it.
    toAccepting: over((id) => sentAt.get(id), pathAt('acceptingStartedAt')),
    acceptingHeld: over(pathAt('acceptingStartedAt'), pathAt('acceptingCompletedAt')),
    recording: over(pathAt('acceptingCompletedAt'), pathAt('recordedAt')),
    recordedToAnswering: over(pathAt('recordedAt'), pathAt('answeringStartedAt')),
    answeringHeld: over(pathAt('answeringStartedAt'), pathAt('answeringCompletedAt')),
    answeredToResponse: over(pathAt('answeringCompletedAt'), (id) => respondedAt.get(id)),
    toSigned: over(
      (id) => sentAt.get(id),
      (id) => signedAt.get(id),
    ),
    signedToResponse: over(
      (id) => signedAt.get(id),
      (id) => respondedAt.get(id),
    ),
    signedToSealed: over(
      (id) => signedAt.get(id),
      (id) => sealedAt.get(id),
    ),
    sealedToCompleted: over(
      (id) => sealedAt.get(id),
      (id) => completedAt.get(id),
    ),
    /** CPU ms per completed request, by process, over the timed signs and their completions. */
    cpuPerRequest: Object.fromEntries(Object.entries(cpu).map(([name, used]) => [name, used / Math.max(1, completedAt.size)])),
  };
}
