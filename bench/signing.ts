// Scenarios of `npm run bench` around signing requests: the raw rate at which the Temporal server
// starts a workflow (the floor under POST /signatures, which starts one before answering), and the
// end-to-end time from a signer's Sign to the signing_request.completed event.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Db } from '../src/db';
import { percentile, stats } from './stats';

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


export interface EndToEndOptions {
  baseUrl: string;
  auth: Record<string, string>;
  db: Db;
  accountId: string;
  documentId: string;
  signerEmail: string;
  count: number;
  concurrency: number;
  /** Give up on completions this long after the first sign is sent. */
  deadlineMs: number;
  log: (message: string) => void;
}

/**
 * `count` signing requests of one signer each, created and linked first; once the worker has sent
 * every invitation (so no backlog is in the way), the signers sign, `concurrency` at a time. For each
 * request: the time from sending the Sign call to the signing_request.completed event's created_at
 * (written by the service with `new Date()` on this machine: one clock with the Date.now() taken here),
 * broken down with signers.signed_at (the recordSignature activity, also `new Date()` in the service)
 * and sealed_documents.created_at (PostgreSQL's now(), same machine).
 */
export async function endToEnd(options: EndToEndOptions) {
  const { baseUrl, auth, db, accountId, count, concurrency, log } = options;
  const json = { ...auth, 'Content-Type': 'application/json' };
  const requests: { id: string; signerId: string; token?: string }[] = [];
  log(`end to end: creating ${count} signing requests and their signer links`);
  await eachLimited(Array.from({ length: count }, (_, i) => i), concurrency, async (i) => {
    const response = await fetch(`${baseUrl}/api/v1/signatures`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ document_id: options.documentId, title: `Bench end-to-end ${i}`, signers: [{ name: 'Bench Signer', email: options.signerEmail }] }),
      signal: AbortSignal.timeout(30_000),
    });
    if (response.status !== 201) throw new Error(`creating a signing request: HTTP ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { id: string; signers: { id: string }[] };
    requests.push({ id: body.id, signerId: body.signers[0].id });
  });
  await eachLimited(requests, concurrency, async (request) => {
    const response = await fetch(`${baseUrl}/api/v1/signatures/${request.id}/signers/${request.signerId}/link`, { method: 'POST', headers: auth, signal: AbortSignal.timeout(30_000) });
    if (response.status !== 200) throw new Error(`creating a signer link: HTTP ${response.status} ${await response.text()}`);
    request.token = new URL(((await response.json()) as { url: string }).url).pathname.split('/').pop()!;
  });

  // Wait for the invitations (the workflow's first activity) of every request of the account, this
  // run's earlier load included, so the signs do not queue behind that backlog.
  const drainStarted = performance.now();
  let pendingLeft = -1;
  while (performance.now() - drainStarted < 120_000) {
    const row = await db('signers as s').join('signing_requests as r', 'r.id', 's.signing_request_id').where({ 'r.account_id': accountId, 's.status': 'pending' }).count({ n: '*' }).first();
    pendingLeft = Number(row?.n ?? 0);
    if (pendingLeft === 0) break;
    await sleep(250);
  }
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  log(`end to end: invitations drained after ${drainSeconds.toFixed(1)} s (${pendingLeft} signers still pending); signing ${count}, ${concurrency} at a time`);

  const ids = new Set(requests.map((request) => request.id));
  const sentAt = new Map<string, number>();
  const respondedAt = new Map<string, number>();
  const observedAt = new Map<string, number>();
  const completedAt = new Map<string, number>();
  const signStatuses = new Map<number, number>();
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

  await eachLimited(requests, concurrency, async (request) => {
    if (Date.now() >= deadline) return;
    sentAt.set(request.id, Date.now());
    const status = await fetch(`${baseUrl}/sign/${request.token}/sign`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'signet-bench' },
      body: JSON.stringify({ consent: true, signature: { type: 'typed', value: 'Bench Signer' } }),
      signal: AbortSignal.timeout(Math.max(1000, deadline - Date.now())),
    }).then(
      async (response) => (await response.arrayBuffer(), response.status),
      () => 0,
    );
    respondedAt.set(request.id, Date.now());
    signStatuses.set(status, (signStatuses.get(status) ?? 0) + 1);
  });
  const signsSeconds = (Date.now() - phaseStarted) / 1000;
  signing = false;
  await poller;
  const lastCompletion = Math.max(...completedAt.values());

  // The breakdown, for the completed requests.
  const done = [...completedAt.keys()];
  const signedAt = new Map<string, number>();
  const sealedAt = new Map<string, number>();
  for (let i = 0; i < done.length; i += 500) {
    const chunk = done.slice(i, i + 500);
    for (const row of await db('signers').whereIn('signing_request_id', chunk).select('signing_request_id', 'signed_at')) signedAt.set(row.signing_request_id, new Date(row.signed_at).getTime());
    for (const row of await db('sealed_documents').whereIn('signing_request_id', chunk).select('signing_request_id', 'created_at')) sealedAt.set(row.signing_request_id, new Date(row.created_at).getTime());
  }
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
    completion: over((id) => sentAt.get(id), (id) => completedAt.get(id)),
    observed: over((id) => sentAt.get(id), (id) => observedAt.get(id)),
    toSigned: over((id) => sentAt.get(id), (id) => signedAt.get(id)),
    signedToResponse: over((id) => signedAt.get(id), (id) => respondedAt.get(id)),
    signedToSealed: over((id) => signedAt.get(id), (id) => sealedAt.get(id)),
    sealedToCompleted: over((id) => sealedAt.get(id), (id) => completedAt.get(id)),
  };
}
