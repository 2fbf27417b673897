// The text of uploads for search (issue #26), in the write group of `npm run bench`: how fast the worker
// extracts the text of the uploads (c2) left behind, against the rate at which (c2) uploaded them; the CPU
// an upload and its text cost at a steady rate, hence the rate at which uploads and their text keep pace
// together; and the time from an upload's 201 to its being found by a word of its text, while uploads
// arrive at (c2)'s rate and at that sustainable rate. The tracers carry a word of their own on their last
// page, so their whole text must be read.
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import type { Db } from '../src/db';
import { cores, cpuBetween } from './cpu';
import { makeUploadPdf, multipartBody } from './pdf';
import { stats, type Stats } from './stats';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const POLL_MS = 100;
const TRACERS_PER_SECOND = 4;
const FOUND_DEADLINE_MS = 120_000;

/** Documents of the account whose PDF has arrived and whose text has (or has not yet) been extracted. */
export async function countTexts(db: Db, accountId: string) {
  const [row] = await db('documents')
    .where({ account_id: accountId, status: 'ready' })
    .select(db.raw('count(body_text) as extracted'), db.raw('count(*) - count(body_text) as waiting'));
  return { extracted: Number(row.extracted), waiting: Number(row.waiting) };
}

export interface TextDrain {
  documents: number;
  seconds: number;
  left: number;
  perSecond: number;
  /** CPU ms per text of each process `cpu` reads (the service with its PDF processes, PostgreSQL, Elasticsearch). */
  cpuPerText: Record<string, number>;
}

/** Waits until the worker has extracted the text of every upload of the account (or the deadline). */
export async function drainTexts(db: Db, accountId: string, deadlineMs: number, cpu: () => Record<string, number>): Promise<TextDrain> {
  const documents = (await countTexts(db, accountId)).waiting;
  const cpuBefore = cpu();
  const started = performance.now();
  let left = documents;
  while (left > 0 && performance.now() - started < deadlineMs) {
    await sleep(POLL_MS);
    left = (await countTexts(db, accountId)).waiting;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = cpuBetween(cpuBefore, cpu());
  const cpuPerText = Object.fromEntries(Object.entries(used).map(([name, ms]) => [name, ms / Math.max(1, documents - left)]));
  return { documents, seconds, left, perSecond: seconds > 0 ? (documents - left) / seconds : NaN, cpuPerText };
}

/** POSTs `body` to /api/v1/documents at `rate` a second (autocannon's overall rate) for `seconds`; resolves to the number answered 201. */
function pacedCreates(options: { baseUrl: string; auth: Record<string, string>; body: PostBody; rate: number; seconds: number; connections: number }) {
  let created = 0;
  return new Promise<number>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${options.baseUrl}/api/v1/documents`,
        method: 'POST',
        headers: { ...options.auth, 'Content-Type': options.body.contentType },
        body: options.body.body,
        connections: options.connections,
        overallRate: Math.max(1, Math.round(options.rate)),
        duration: options.seconds,
      },
      (error) => (error ? reject(error) : resolve(created)),
    );
    instance.on('response', (_client, status) => {
      if (status === 201) created++;
    });
  });
}

export interface PostBody {
  body: Buffer | string;
  contentType: string;
}

export interface CreateCost {
  /** Answered 201. */
  created: number;
  /** Texts the worker extracted meanwhile, whose CPU (at `cpuPerText`) is taken off. */
  textsMeanwhile: number;
  /** CPU ms per document created, of each process `cpu` reads. */
  cpuPerCreate: Record<string, number>;
}

/**
 * CPU per document created: `body` (an upload, or metadata only) POSTed at `rate` for `seconds` (no
 * tracers, no searches), and the CPU each process used meanwhile, less that of the texts the worker
 * extracted meanwhile (at `cpuPerText` each), per 201.
 */
export async function createCost(options: {
  baseUrl: string;
  auth: Record<string, string>;
  body: PostBody;
  rate: number;
  seconds: number;
  connections: number;
  db: Db;
  accountId: string;
  cpu: () => Record<string, number>;
  cpuPerText: Record<string, number>;
}): Promise<CreateCost> {
  const { db, accountId, cpu, cpuPerText } = options;
  const before = await countTexts(db, accountId);
  const cpuBefore = cpu();
  const created = await pacedCreates(options);
  const used = cpuBetween(cpuBefore, cpu());
  const textsMeanwhile = (await countTexts(db, accountId)).extracted - before.extracted;
  const cpuPerCreate = Object.fromEntries(
    Object.entries(used).map(([name, ms]) => [name, Math.max(0, ms - textsMeanwhile * (cpuPerText[name] ?? 0)) / Math.max(1, created)]),
  );
  return { created, textsMeanwhile, cpuPerCreate };
}

const sum = (perProcess: Record<string, number>) => Object.values(perProcess).reduce((total, ms) => total + ms, 0);

/** Uploads a second that uploads and their text keep pace with together: cores × 1000 ms / the CPU of an upload and its text (given whole, or as its parts). */
export const sustainableRate = (...costs: Record<string, number>[]) => (cores() * 1000) / costs.reduce((total, cost) => total + sum(cost), 0);

export interface SteadyCost {
  /** Uploads answered 201. */
  created: number;
  /** From the first upload to the last text extracted. */
  seconds: number;
  /** CPU ms per upload with its text, of each process `cpu` reads. */
  cpuPerUpload: Record<string, number>;
}

/**
 * CPU per upload with its text at a steady rate: `body` uploaded at `rate` for `seconds`, and the CPU each
 * process used until the worker had extracted their text, per 201. At a steady rate the texts go to the
 * index a few at a time as they come, which costs more per text than the writes of a hundred of a
 * catch-up (drainTexts): the rate uploads and their text can keep together is read from this.
 */
export async function steadyCost(
  options: Parameters<typeof pacedCreates>[0] & { db: Db; accountId: string; cpu: () => Record<string, number>; deadlineMs: number },
): Promise<SteadyCost> {
  const cpuBefore = options.cpu();
  const started = performance.now();
  const created = await pacedCreates(options);
  await drainTexts(options.db, options.accountId, options.deadlineMs, options.cpu);
  const used = cpuBetween(cpuBefore, options.cpu());
  const cpuPerUpload = Object.fromEntries(Object.entries(used).map(([name, ms]) => [name, ms / Math.max(1, created)]));
  return { created, seconds: (performance.now() - started) / 1000, cpuPerUpload };
}

export interface TextLag {
  /** Uploads per second asked for (tracers included), and answered 201 per second. */
  rate: number;
  uploaded: number;
  /** Texts waiting to be extracted when the uploads began, halfway through, and when they ended. */
  waitingAtStart: number;
  waitingAtHalf: number;
  waitingAtEnd: number;
  seconds: number;
  /** From each tracer's 201 to the first search that finds it by its word, ms. */
  found: Stats;
  notFound: number;
  /** GET /api/v1/search asked while the uploads ran, a second. */
  searchesPerSecond: number;
}

/**
 * Uploads at `rate` a second for `seconds`: the (c2) PDF at `rate` − TRACERS_PER_SECOND (autocannon's
 * overall rate), and TRACERS_PER_SECOND tracer PDFs of the same shape, each found afterwards by its own word through
 * GET /api/v1/search. A tracer is searched for once the database says the index has its text (stored,
 * and struck off the texts to index: the index write that took it has returned), and again every POLL_MS
 * until the search finds it. Asking for every pending tracer every POLL_MS instead made the measurement
 * its own load: at 4 s behind, some 16 tracers pending and 160 searches a second, each an api request
 * and an Elasticsearch query on the same 2 cores, and the further the text fell behind, the more it asked.
 */
export async function textSearchLag(options: {
  baseUrl: string;
  auth: Record<string, string>;
  db: Db;
  uploadPdf: Buffer;
  rate: number;
  seconds: number;
  connections: number;
  /** Texts waiting to be extracted (the backlog). */
  waiting: () => Promise<number>;
}): Promise<TextLag> {
  const { baseUrl, auth, db, rate, seconds } = options;
  const tracerCount = Math.round(seconds * TRACERS_PER_SECOND);
  const tracers = await Promise.all(
    Array.from({ length: tracerCount }, async () => {
      const word = `tracer${crypto.randomBytes(6).toString('hex')}`;
      return { word, pdf: await makeUploadPdf(word) };
    }),
  );
  const waitingAtStart = await options.waiting();
  const paced = pacedCreates({ ...options, body: multipartBody(options.uploadPdf, 'bench-paced.pdf'), rate: rate - TRACERS_PER_SECOND });
  let waitingAtHalf = waitingAtStart;
  const half = sleep((seconds * 1000) / 2).then(async () => (waitingAtHalf = await options.waiting()));

  const answered = new Map<string, { at: number; documentId: string }>(); // word → its 201
  const found = new Map<string, number>();
  const inIndex = new Set<string>(); // words whose text the index has, by the database
  let searches = 0;
  let polling = true;
  let pollDeadline = Number.POSITIVE_INFINITY;
  const poller = (async () => {
    while (polling || found.size < answered.size) {
      const pending = [...answered].filter(([word]) => !found.has(word));
      const unseen = pending.filter(([word]) => !inIndex.has(word));
      if (unseen.length > 0) {
        const indexed = new Set(
          await db('documents')
            .whereIn(
              'id',
              unseen.map(([, { documentId }]) => documentId),
            )
            .whereNotNull('body_text')
            .whereNotExists(db('document_texts_to_index').whereRaw('document_texts_to_index.document_id = documents.id'))
            .pluck('id'),
        );
        for (const [word, { documentId }] of unseen) if (indexed.has(documentId)) inIndex.add(word);
      }
      await Promise.all(
        pending
          .filter(([word]) => inIndex.has(word))
          .map(async ([word]) => {
            searches++;
            const response = await fetch(`${baseUrl}/api/v1/search?type=document&q=${word}`, { headers: auth });
            const body = (await response.json()) as { data?: unknown[] };
            if (response.ok && (body.data?.length ?? 0) > 0) found.set(word, performance.now());
          }),
      );
      if (!polling && performance.now() > pollDeadline) break;
      await sleep(POLL_MS);
    }
  })();

  const started = performance.now();
  await Promise.all(
    tracers.map(async ({ word, pdf }, i) => {
      await sleep(started + (i * 1000) / TRACERS_PER_SECOND - performance.now());
      const form = new FormData();
      // Not named after its word: the search must find it by its text, not by its file name.
      form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'bench-tracer.pdf');
      const response = await fetch(`${baseUrl}/api/v1/documents`, { method: 'POST', headers: auth, body: form });
      const body = (await response.json()) as { id?: string };
      if (response.status === 201 && body.id) answered.set(word, { at: performance.now(), documentId: body.id });
    }),
  );
  const uploaded = (await paced) + answered.size;
  const elapsed = (performance.now() - started) / 1000;
  const searchesWhileUploading = searches;
  const waitingAtEnd = await options.waiting();
  await half;
  pollDeadline = performance.now() + FOUND_DEADLINE_MS;
  polling = false;
  await poller;
  const lags = [...found].map(([word, at]) => at - answered.get(word)!.at);
  return {
    rate,
    uploaded: uploaded / elapsed,
    waitingAtStart,
    waitingAtHalf,
    waitingAtEnd,
    seconds: elapsed,
    found: stats(lags),
    notFound: answered.size - found.size,
    searchesPerSecond: searchesWhileUploading / elapsed,
  };
}
