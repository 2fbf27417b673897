// Scenarios of `npm run bench` around webhooks (issue #15): the lag from an event's commit to its
// arrival at a local receiver, and deliveries per second sustained, next to a plain loop that POSTs the
// same bodies to the same receiver with the same HTTP client (the floor under any delivery pipeline).
// A burst's events arrive at once (committed together), as they do when many api processes, on
// machines of their own, outpace one endpoint's queue; a stream's are committed by the bench one by one
// on the cores that deliver them, so its deliveries can go no faster than that source.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { Db } from '../src/db';
import { createWebhookDispatcher } from '../src/webhooks/dispatcher';
import { createEventLog } from '../src/events/service';
import { unitOfWork } from '../src/db/unitOfWork';
import { type EventType } from '../src/domain/events';
import { parseAllowList } from '../src/webhooks/addressPolicy';
import { createWebhookPoster } from '../src/webhooks/http';
import { generateWebhookSecret } from '../src/webhooks/secrets';
import { signatureHeaders } from '../src/webhooks/signature';
import { cpuBetween, settle } from './cpu';
import { eachLimited } from './signing';
import { stats, type Stats } from './stats';

/**
 * A receiver on loopback that notes when each event id first arrived. Each path is an endpoint of its
 * own: `/ok/…` answers 204 at once, `/down/…` answers 503 after `downDelayMs` (an endpoint in trouble).
 */
export async function startReceiver(downDelayMs: number) {
  const arrivals = new Map<string, number>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      if (req.url?.startsWith('/down/')) return void setTimeout(() => res.writeHead(503).end(), downDelayMs).unref();
      const id = req.headers['webhook-id'] as string | undefined;
      if (id && !arrivals.has(id)) arrivals.set(id, Date.now());
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    arrivals,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections(); // the service's keep-alive connections would hold close() for a minute
      }),
  };
}

export interface Throughput {
  ids: string[];
  events: number;
  delivered: number;
  perSecond: number;
  seconds: number;
  lag: Stats;
  /** CPU ms per delivery (or event) of each process, over the scenario. */
  cpu: Record<string, number>;
}

export interface Plain {
  latency: Stats;
  perSecond: number;
  seconds: number;
  ok: number;
  cpu: Record<string, number>;
}

/** One round: each throughput scenario next to its baseline. */
export interface Round {
  /** Events committed one by one per second when no webhook subscribes: the stream's source alone. */
  source: { perSecond: number; cpu: Record<string, number> };
  /** Events committed one by one, `concurrency` at a time, by the bench on the delivering cores. */
  stream: Throughput & { committedPerSecond: number };
  /** Events committed together, then delivered: timed from their commit. */
  burst: Throughput;
  plain: Plain;
  fanOut: Throughput & { endpoints: number };
  plainFanOut: Plain;
}

export interface WebhookBenchResult {
  rounds: Round[];
  paced: Throughput;
  besideDown: Throughput & { downPending: number };
  duplicates: number;
  /** Running webhook workflows seen at most during the fan-outs: one per endpoint with work. */
  mostWorkflows: number;
}

// Each scenario's endpoints subscribe to event types of their own, so no event reaches another's.
const TYPES = {
  burst: 'document.created',
  paced: 'document.updated',
  healthy: 'document.deleted',
  unsubscribed: 'template.deleted',
  down: 'template.created',
  fanOut: [
    'signer.notified',
    'signer.viewed',
    'signer.signed',
    'signer.declined',
    'signing_request.created',
    'signing_request.completed',
    'signing_request.cancelled',
    'signing_request.declined',
    'signing_request.expired',
    'template.updated',
  ],
} satisfies Record<string, EventType | EventType[]>;

/**
 * Events committed by the bench itself (events.record in a transaction, then dispatched as the api does
 * once it commits), delivered by the running service's worker on `taskQueue` to a receiver here.
 */
export async function webhookBench(options: {
  db: Db;
  client: Client;
  taskQueue: string;
  baseUrl: string;
  auth: Record<string, string>;
  accountId: string;
  events: number;
  fanOutEndpoints: number;
  fanOutEvents: number;
  pacedEvents: number;
  pacedRate: number;
  downPending: number;
  concurrency: number;
  rounds: number;
  deadlineMs: number;
  /** CPU ms used so far by each process (the bench itself among them), see bench/cpu.ts. */
  cpu: () => Record<string, number>;
  log: (message: string) => void;
}): Promise<WebhookBenchResult> {
  const { db, log } = options;
  const receiver = await startReceiver(1000);
  const subscribe = async (path: string, events: EventType[]) => {
    const created = await fetch(`${options.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...options.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.base}${path}`, events, description: `bench ${path}` }),
    });
    if (created.status !== 201) throw new Error(`creating a bench webhook: HTTP ${created.status} ${await created.text()}`);
    return ((await created.json()) as { id: string }).id;
  };
  try {
    await subscribe('/ok/burst', [TYPES.burst, TYPES.paced]);
    await subscribe('/ok/healthy', [TYPES.healthy]);
    const fanOutTypes = TYPES.fanOut.slice(0, options.fanOutEndpoints);
    for (const [i, type] of fanOutTypes.entries()) await subscribe(`/ok/fan-${i}`, [type]);
    // As in the api: each event's deliveries are queued in its transaction, their webhooks woken after it commits.
    const events = createEventLog([createWebhookDispatcher({ client: options.client, taskQueue: options.taskQueue, db, retryScale: 1 })]);

    const committedAt = new Map<string, number>();
    let serial = 0;
    const record = (trx: Db, type: EventType) => {
      const n = serial++;
      return events.record(trx, options.accountId, type, { documentId: `doc_bench_${n}`, fileName: `bench-${n}.pdf`, fileSize: 1234 });
    };
    const commitOne = async (type: EventType) => {
      const event = await unitOfWork(db, (trx) => record(trx, type));
      committedAt.set(event.id, Date.now());
      return event.id;
    };
    const waitFor = async (ids: string[]) => {
      const deadline = Date.now() + options.deadlineMs;
      while (ids.some((id) => !receiver.arrivals.has(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      return ids.filter((id) => receiver.arrivals.has(id));
    };
    const perItem = (before: Record<string, number>, n: number) =>
      Object.fromEntries(Object.entries(cpuBetween(before, options.cpu())).map(([name, ms]) => [name, ms / n]));
    const throughput = async (ids: string[], start: number, cpuBefore: Record<string, number>): Promise<Throughput> => {
      const delivered = await waitFor(ids);
      const cpu = perItem(cpuBefore, delivered.length);
      const seconds = (Math.max(...delivered.map((id) => receiver.arrivals.get(id)!)) - start) / 1000;
      return {
        ids,
        events: ids.length,
        delivered: delivered.length,
        perSecond: delivered.length / seconds,
        seconds,
        lag: stats(delivered.map((id) => receiver.arrivals.get(id)! - committedAt.get(id)!)),
        cpu,
      };
    };
    const commitMany = async (types: EventType[]) => {
      const ids: string[] = [];
      await eachLimited(types, options.concurrency, async (type) => void ids.push(await commitOne(type)));
      return ids;
    };
    /** Events of `types` committed in one transaction, timed from the commit (the dispatcher wakes their webhooks then). */
    const atOnce = async (types: EventType[]) => {
      const ids = await unitOfWork(db, async (trx) => {
        const recorded: string[] = [];
        for (const type of types) recorded.push((await record(trx, type)).id);
        return recorded;
      });
      const start = Date.now();
      const cpuBefore = options.cpu();
      for (const id of ids) committedAt.set(id, start);
      return throughput(ids, start, cpuBefore);
    };
    const paced = async (type: EventType) => {
      const ids: string[] = [];
      const start = Date.now();
      const cpuBefore = options.cpu();
      await Promise.all(
        Array.from({ length: options.pacedEvents }, async (_, i) => {
          await new Promise((resolve) => setTimeout(resolve, (i * 1000) / options.pacedRate));
          ids.push(await commitOne(type));
        }),
      );
      return throughput(ids, start, cpuBefore);
    };

    // One plain loop: the same bodies POSTed with the same client straight to the receiver.
    const poster = await createWebhookPoster(parseAllowList(['127.0.0.1']), 15_000);
    const secret = generateWebhookSecret();
    const plainLoop = async (ids: string[], paths: number) => {
      const events: { id: string; type: string; created_at: Date; data: unknown }[] = await db('events')
        .whereIn('id', ids)
        .select('id', 'type', 'created_at', 'data');
      const latencies: number[] = [];
      let ok = 0;
      const cpuBefore = options.cpu();
      const plainStart = performance.now();
      await eachLimited(events, options.concurrency, async (event, i) => {
        const body = JSON.stringify({ id: `plain-${event.id}`, type: event.type, timestamp: event.created_at.toISOString(), data: event.data });
        const result = await poster.post(`${receiver.base}/ok/plain-${i % paths}`, body, signatureHeaders([secret], `plain-${event.id}`, body));
        latencies.push(result.latencyMs);
        if (result.statusCode === 204) ok++;
      });
      const seconds = (performance.now() - plainStart) / 1000;
      return { latency: stats(latencies), perSecond: events.length / seconds, seconds, ok, cpu: perItem(cpuBefore, events.length) };
    };
    const sourceAlone = async () => {
      const start = Date.now();
      const cpuBefore = options.cpu();
      const ids = await commitMany(Array.from({ length: options.events }, () => TYPES.unsubscribed));
      return { ids, perSecond: options.events / ((Date.now() - start) / 1000), cpu: perItem(cpuBefore, options.events) };
    };
    const streamOf = async (type: EventType, events: number) => {
      const start = Date.now();
      const cpuBefore = options.cpu();
      const ids = await commitMany(Array.from({ length: events }, () => type));
      // How fast the bench committed them while their deliveries shared its cores.
      const committedPerSecond = ids.length / ((Date.now() - start) / 1000);
      return { ...(await throughput(ids, start, cpuBefore)), committedPerSecond };
    };
    // Warm-up, not counted: every path the rounds take runs a few hundred times first, in the bench and
    // in the service, so that the rounds compare code the JIT has compiled (as in any long-running process).
    log(`webhooks: warm-up (the source, a stream, a burst, the plain loop)`);
    const warm = await streamOf(TYPES.burst, options.events / 2);
    await sourceAlone();
    await plainLoop(warm.ids, 1);
    await atOnce(Array.from({ length: options.events / 2 }, () => TYPES.burst));

    // Rounds, each scenario beside its baseline, so that the ratios compare runs a few seconds apart.
    const rounds: Round[] = [];
    let mostWorkflows = 0;
    for (let round = 1; round <= options.rounds; round++) {
      log(
        `webhooks: round ${round} of ${options.rounds}: the source alone, a stream of ${options.events} to one endpoint, a burst of as many, the plain loop, ${options.fanOutEndpoints} endpoints × ${options.fanOutEvents} at once, the plain loop over ${options.fanOutEndpoints} paths`,
      );
      // Each scenario starts on a settled machine: what the one before left running is not billed to it.
      await settle();
      const source = await sourceAlone();
      await settle();
      const stream = await streamOf(TYPES.burst, options.events);
      await settle();
      const burst = await atOnce(Array.from({ length: options.events }, () => TYPES.burst));
      await settle();
      const plain = await plainLoop(burst.ids, 1);
      await settle();
      let counting = true;
      const counter = (async () => {
        while (counting) {
          const { count } = await options.client.workflow.count(
            `WorkflowType = 'webhookWorkflow' AND ExecutionStatus = 'Running' AND SignetAccountId = '${options.accountId}'`,
          );
          mostWorkflows = Math.max(mostWorkflows, count);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      })();
      const fanOut = {
        ...(await atOnce(Array.from({ length: options.fanOutEvents * fanOutTypes.length }, (_, i) => fanOutTypes[i % fanOutTypes.length]))),
        endpoints: fanOutTypes.length,
      };
      counting = false;
      await counter;
      await settle();
      const plainFanOut = await plainLoop(fanOut.ids, fanOutTypes.length);
      rounds.push({ source, stream, burst, plain, fanOut, plainFanOut });
    }

    // Paced, alone and then beside an endpoint that is down with its deliveries pending: the down
    // endpoint's queue is in its retry loop (first attempts under way) before the paced events start.
    log(`webhooks: ${options.pacedEvents} events at ${options.pacedRate}/s`);
    const pacedAlone = await paced(TYPES.paced);
    log(
      `webhooks: ${options.downPending} events to an endpoint that answers 503 after 1 s, then ${options.pacedEvents} at ${options.pacedRate}/s to a healthy one`,
    );
    const downWebhook = await subscribe('/down/1', [TYPES.down]);
    await commitMany(Array.from({ length: options.downPending }, () => TYPES.down));
    const deadline = Date.now() + options.deadlineMs;
    while (!(await db('webhook_deliveries').where({ webhook_id: downWebhook }).where('attempts', '>', 0).first('id')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const besideDown = { ...(await paced(TYPES.healthy)), downPending: options.downPending };

    poster.close();

    const deliveries = await db('webhook_deliveries as d')
      .join('webhooks as w', 'w.id', 'd.webhook_id')
      .where('w.account_id', options.accountId)
      .whereNot('w.url', 'like', '%/down/%')
      .first(db.raw('coalesce(sum(d.attempts), 0)::int as attempts'), db.raw('count(*)::int as deliveries'));
    return {
      rounds,
      paced: pacedAlone,
      besideDown,
      duplicates: Number(deliveries.attempts) - Number(deliveries.deliveries),
      mostWorkflows,
    };
  } finally {
    await receiver.close();
  }
}
