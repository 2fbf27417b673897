// Scenarios of `npm run bench` around webhooks: the lag from an event's commit to its arrival at a
// local receiver, and deliveries per second sustained, next to a plain loop that POSTs the same bodies
// to the same receiver with the same HTTP client (the floor under any delivery pipeline).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { Db } from '../src/db';
import { createEventDispatcher } from '../src/events/dispatch';
import { recordEvent } from '../src/events/service';
import { parseAllowList } from '../src/webhooks/addressPolicy';
import { createWebhookPoster } from '../src/webhooks/http';
import { generateWebhookSecret } from '../src/webhooks/secrets';
import { signatureHeaders } from '../src/webhooks/signature';
import { eachLimited } from './signing';
import { stats, type Stats } from './stats';


/** A receiver on loopback that notes when each event id first arrived, and answers 204. */
async function startReceiver() {
  const arrivals = new Map<string, number>();
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      const id = req.headers['webhook-id'] as string | undefined;
      if (id && !arrivals.has(id)) arrivals.set(id, Date.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { url, arrivals, requests: () => requests, close: () => new Promise((resolve) => server.close(resolve)) };
}

export interface WebhookBenchResult {
  events: number;
  burst: { lag: Stats; perSecond: number; seconds: number; delivered: number };
  paced: { lag: Stats; ratePerSecond: number; delivered: number };
  plain: { latency: Stats; perSecond: number; seconds: number; ok: number };
  duplicates: number;
}

/**
 * Events committed by the bench itself (recordEvent in a transaction, then dispatched as the api does
 * once it commits), delivered by the running service's worker on `taskQueue` to a receiver here.
 * `events` go as fast as they can be committed (the burst), then `pacedEvents` at `pacedRate` per second.
 */
export async function webhookBench(options: {
  db: Db;
  client: Client;
  taskQueue: string;
  baseUrl: string;
  auth: Record<string, string>;
  accountId: string;
  events: number;
  pacedEvents: number;
  pacedRate: number;
  concurrency: number;
  deadlineMs: number;
  log: (message: string) => void;
}): Promise<WebhookBenchResult> {
  const { db, log } = options;
  const receiver = await startReceiver();
  try {
    const created = await fetch(`${options.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...options.auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['document.created'], description: 'bench' }),
    });
    if (created.status !== 201) throw new Error(`creating the bench webhook: HTTP ${created.status} ${await created.text()}`);
    const dispatcher = createEventDispatcher({ client: options.client, taskQueue: options.taskQueue, db, retryScale: 1 });

    const committedAt = new Map<string, number>();
    const commitOne = async (i: number) => {
      const event = await db.transaction((trx) =>
        recordEvent(trx, options.accountId, 'document.created', { documentId: `doc_bench_${i}`, fileName: `bench-${i}.pdf`, fileSize: 1234, status: 'awaiting_file' }),
      );
      committedAt.set(event.id, Date.now());
      await dispatcher.dispatch([event.id]);
      return event.id;
    };
    const waitFor = async (ids: string[]) => {
      const deadline = Date.now() + options.deadlineMs;
      while (ids.some((id) => !receiver.arrivals.has(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      return ids.filter((id) => receiver.arrivals.has(id));
    };
    const lags = (ids: string[]) => stats(ids.map((id) => receiver.arrivals.get(id)! - committedAt.get(id)!));

    log(`webhooks: a burst of ${options.events} events, committed and dispatched ${options.concurrency} at a time`);
    const burstIds: string[] = [];
    const burstStart = Date.now();
    await eachLimited(
      Array.from({ length: options.events }, (_, i) => i),
      options.concurrency,
      async (i) => {
        burstIds.push(await commitOne(i));
      },
    );
    const burstDelivered = await waitFor(burstIds);
    const lastArrival = Math.max(...burstDelivered.map((id) => receiver.arrivals.get(id)!));
    const burstSeconds = (lastArrival - burstStart) / 1000;

    log(`webhooks: ${options.pacedEvents} events at ${options.pacedRate}/s`);
    const pacedIds: string[] = [];
    const pacedStart = Date.now();
    await Promise.all(
      Array.from({ length: options.pacedEvents }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, (i * 1000) / options.pacedRate));
        pacedIds.push(await commitOne(options.events + i));
      }),
    );
    const pacedDelivered = await waitFor(pacedIds);
    const pacedSeconds = (Date.now() - pacedStart) / 1000;

    log(`webhooks: plain loop, the same ${options.events} bodies POSTed ${options.concurrency} at a time with the same client`);
    const poster = await createWebhookPoster(parseAllowList(['127.0.0.1']), 15_000);
    const secret = generateWebhookSecret();
    const bodies = await db('events').whereIn('id', burstIds).select('id', 'type', 'created_at', 'data');
    const latencies: number[] = [];
    let ok = 0;
    const plainStart = performance.now();
    await eachLimited(bodies, options.concurrency, async (event) => {
      const body = JSON.stringify({ id: `plain-${event.id}`, type: event.type, timestamp: event.created_at.toISOString(), data: event.data });
      const result = await poster.post(receiver.url, body, signatureHeaders([secret], `plain-${event.id}`, body));
      latencies.push(result.latencyMs);
      if (result.statusCode === 204) ok++;
    });
    const plainSeconds = (performance.now() - plainStart) / 1000;
    poster.close();

    const deliveredIds = [...burstIds, ...pacedIds];
    const deliveries = await db('webhook_deliveries').whereIn('event_id', deliveredIds).sum({ attempts: 'attempts' }).first();
    return {
      events: options.events,
      burst: { lag: lags(burstDelivered), perSecond: burstDelivered.length / burstSeconds, seconds: burstSeconds, delivered: burstDelivered.length },
      paced: { lag: lags(pacedDelivered), ratePerSecond: options.pacedEvents / pacedSeconds, delivered: pacedDelivered.length },
      plain: { latency: stats(latencies), perSecond: bodies.length / plainSeconds, seconds: plainSeconds, ok },
      duplicates: Number(deliveries?.attempts ?? 0) - deliveredIds.length,
    };
  } finally {
    await receiver.close();
  }
}
