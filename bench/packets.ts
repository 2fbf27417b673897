// Issue #27's speed scenario in `npm run bench`'s signing group: one at a time, a request of 3 documents
// (5 pages each) and 3 signers against one of 1 document (the same 5-page PDF) and 1 signer, interleaved
// in the same run: from the last signer's Sign to signing_request.completed, and the seal (the
// completeRequest activity, which seals every document of the request in turn and then completes it).
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Db } from '../src/db';
import { cpuBetween } from './cpu';
import { makeUploadPdf } from './pdf';
import { eachLimited, postSign } from './signing';
import { stats } from './stats';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const { EventType } = temporal.api.enums.v1;

export const PACKET_DOCUMENTS = 3;
export const PACKET_SIGNERS = 3;

export interface PacketOptions {
  baseUrl: string;
  client: Client;
  auth: Record<string, string>;
  db: Db;
  accountId: string;
  /** Every signer's e-mail contains it (the bench's cleanup removes their e-mails by it). */
  signerEmail: string;
  /** Timed requests of each kind, after `warmUp` untimed ones of each. */
  count: number;
  warmUp: number;
  /** Give up on one request's completion after this. */
  deadlineMs: number;
  log: (message: string) => void;
  cpu?: () => Record<string, number>;
}

type Kind = 'single' | 'packet';
interface Prepared {
  kind: Kind;
  id: string;
  tokens: string[];
}

async function uploadPdf(baseUrl: string, auth: Record<string, string>, index: number) {
  const pdf = await makeUploadPdf();
  const response = await fetch(`${baseUrl}/api/v1/documents`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ fileName: `bench-packet-${index}.pdf`, fileSize: pdf.length, content: pdf.toString('base64') }),
    signal: AbortSignal.timeout(30_000),
  });
  if (response.status !== 201) throw new Error(`uploading a 5-page PDF: HTTP ${response.status} ${await response.text()}`);
  return { id: ((await response.json()) as { id: string }).id, bytes: pdf.length };
}

/** The completeRequest activity's span (started → completed, by the server's clock), or NaN. */
async function sealSpan(client: Client, workflowId: string) {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const at = (event: (typeof events)[number] | undefined) =>
    !event?.eventTime ? NaN : Number(event.eventTime.seconds) * 1000 + (event.eventTime.nanos ?? 0) / 1e6;
  const scheduled = events.filter(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && event.activityTaskScheduledEventAttributes?.activityType?.name === 'completeRequest',
  );
  if (scheduled.length !== 1) return NaN; // retried or never run: not one clean span
  const scheduledId = Number(scheduled[0].eventId);
  const started = events.find(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED && Number(event.activityTaskStartedEventAttributes?.scheduledEventId) === scheduledId,
  );
  const completed = events.find(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED && Number(event.activityTaskCompletedEventAttributes?.scheduledEventId) === scheduledId,
  );
  return at(completed) - at(started);
}

/**
 * Uploads 3 distinct 5-page PDFs (bench/pdf.ts's 40 KB upload), creates `warmUp + count` requests of
 * each kind (single: the first PDF, 1 signer; packet: the 3 PDFs, 3 signers in parallel, no fields:
 * each signs on the signatures page), links every signer, and waits until every invitation of the
 * account has gone out. Then, one request at a time, kinds alternating (warm-up untimed): the packet's
 * first signers sign one after another (each after the previous 200), the timer starts as the last
 * Sign is sent, and the next request waits until this one's workflow has closed (closing mails
 * included, so CPU per request is read around each request alone: from its first Sign to its close).
 */
export async function packetsAlone(options: PacketOptions) {
  const { baseUrl, auth, db, accountId, client, log } = options;
  const json = { ...auth, 'Content-Type': 'application/json' };
  log(`packets: uploading ${PACKET_DOCUMENTS} 5-page PDFs`);
  const pdfs: { id: string; bytes: number }[] = [];
  for (let i = 0; i < PACKET_DOCUMENTS; i++) pdfs.push(await uploadPdf(baseUrl, auth, i));
  const total = options.warmUp + options.count;
  const kinds: Kind[] = Array.from({ length: total }, (_, i) => (i % 2 === 0 ? ['single', 'packet'] : ['packet', 'single']) as Kind[]).flat();
  log(`packets: creating ${total} requests of each kind and their signer links`);
  const prepared: Prepared[] = [];
  await eachLimited(kinds, 4, async (kind, i) => {
    const signers = Array.from({ length: kind === 'single' ? 1 : PACKET_SIGNERS }, (_, k) => ({
      name: `Bench Signer ${k + 1}`,
      email: `p${k + 1}.${options.signerEmail}`, // contains signerEmail
    }));
    const documents = (kind === 'single' ? pdfs.slice(0, 1) : pdfs).map((pdf) => ({ document_id: pdf.id }));
    const response = await fetch(`${baseUrl}/api/v1/signatures`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ documents, title: `Bench ${kind} ${i}`, signers, signingOrder: 'parallel' }),
      signal: AbortSignal.timeout(30_000),
    });
    if (response.status !== 201) throw new Error(`creating a ${kind} signing request: HTTP ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { id: string; signers: { id: string }[] };
    const tokens: string[] = [];
    for (const signer of body.signers) {
      const link = await fetch(`${baseUrl}/api/v1/signatures/${body.id}/signers/${signer.id}/link`, {
        method: 'POST',
        headers: auth,
        signal: AbortSignal.timeout(30_000),
      });
      if (link.status !== 200) throw new Error(`creating a signer link: HTTP ${link.status} ${await link.text()}`);
      tokens.push(new URL(((await link.json()) as { url: string }).url).pathname.split('/').pop()!);
    }
    prepared[i] = { kind, id: body.id, tokens };
  });
  const drainStarted = performance.now();
  for (;;) {
    const row = await db('signers as s')
      .join('signing_requests as r', 'r.id', 's.signing_request_id')
      .where({ 'r.account_id': accountId, 's.status': 'pending' })
      .count({ n: '*' })
      .first();
    if (Number(row?.n ?? 0) === 0 || performance.now() - drainStarted > 120_000) break;
    await sleep(250);
  }

  const results = new Map<string, { kind: Kind; completion: number; cpu: Record<string, number> }>();
  const failures: string[] = [];
  log(`packets: ${options.warmUp} untimed then ${options.count} timed requests of each kind, one at a time, kinds alternating`);
  for (const [index, request] of prepared.entries()) {
    const timed = index >= 2 * options.warmUp;
    const deadline = Date.now() + options.deadlineMs;
    const cpuBefore = options.cpu?.();
    for (const token of request.tokens.slice(0, -1)) {
      const status = await postSign(baseUrl, token, deadline);
      if (status !== 200) failures.push(`${request.kind} ${request.id}: sign ${status}`);
    }
    const sentAt = Date.now();
    const status = await postSign(baseUrl, request.tokens[request.tokens.length - 1], deadline);
    if (status !== 200) failures.push(`${request.kind} ${request.id}: last sign ${status}`);
    let completedAt = NaN;
    while (Date.now() < deadline) {
      const row = await db('events')
        .where({ account_id: accountId, type: 'signing_request.completed' })
        .where('created_at', '>=', new Date(sentAt - 1000))
        .whereRaw(`data->>'signingRequestId' = ?`, [request.id])
        .first('created_at');
      if (row) {
        completedAt = new Date(row.created_at).getTime();
        break;
      }
      await sleep(20);
    }
    if (!Number.isFinite(completedAt)) {
      failures.push(`${request.kind} ${request.id}: not completed`);
      continue;
    }
    await client.connection
      .withDeadline(deadline, () => client.workflow.getHandle(request.id).result())
      .catch(() => failures.push(`${request.kind} ${request.id}: workflow not closed`));
    const cpu = cpuBefore && options.cpu ? cpuBetween(cpuBefore, options.cpu()) : {};
    if (timed) results.set(request.id, { kind: request.kind, completion: completedAt - sentAt, cpu });
  }

  // The seals: the completeRequest activity's span in each history, and, from the rows, the last
  // signers.signed_at → the last sealed_documents.created_at (which also holds the update's answer and
  // the activity's scheduling).
  const seal = new Map<string, number>();
  await eachLimited([...results.keys()], 4, async (id) => void seal.set(id, await sealSpan(client, id).catch(() => NaN)));
  const ids = [...results.keys()];
  const lastSigned = new Map<string, number>();
  const lastSealed = new Map<string, number>();
  type Last = { signing_request_id: string; at: Date };
  for (const row of (await db('signers')
    .whereIn('signing_request_id', ids)
    .groupBy('signing_request_id')
    .select('signing_request_id')
    .max({ at: 'signed_at' })) as unknown as Last[])
    lastSigned.set(row.signing_request_id, new Date(row.at).getTime());
  for (const row of (await db('sealed_documents')
    .whereIn('signing_request_id', ids)
    .groupBy('signing_request_id')
    .select('signing_request_id')
    .max({ at: 'created_at' })) as unknown as Last[])
    lastSealed.set(row.signing_request_id, new Date(row.at).getTime());

  const of = (kind: Kind) => {
    const mine = ids.filter((id) => results.get(id)!.kind === kind);
    const finite = (values: number[]) => values.filter((value) => Number.isFinite(value));
    const cpu: Record<string, number> = {};
    for (const id of mine) for (const [name, used] of Object.entries(results.get(id)!.cpu)) cpu[name] = (cpu[name] ?? 0) + used;
    return {
      completed: mine.length,
      completion: stats(mine.map((id) => results.get(id)!.completion)),
      seal: stats(finite(mine.map((id) => seal.get(id)!))),
      signedToSealed: stats(finite(mine.map((id) => (lastSealed.get(id) ?? NaN) - (lastSigned.get(id) ?? NaN)))),
      /** CPU ms per completed request, by process, from its first Sign to its workflow's close. */
      cpuPerRequest: Object.fromEntries(Object.entries(cpu).map(([name, used]) => [name, used / Math.max(1, mine.length)])),
    };
  };
  return { count: options.count, warmUp: options.warmUp, pdfBytes: pdfs.map((pdf) => pdf.bytes), failures, single: of('single'), packet: of('packet') };
}
