import { createHash, hkdfSync, randomUUID, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import type { Db } from '../../db';
import type { IdKind } from '../../domain/ids';
import { AppError, idempotencyInProgress, idempotencyKeyReused, payloadTooLarge, validationError } from '../../errors';
import { idFromSeed } from '../../ids';
import { openText, sealText } from '../../secretBox';
import { afterBodyRead, readWhileConnected } from './body';
import { errorBody, toAppError } from './requestContext';

/** How long a key holds its request and answer. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a key stays held by a request that stopped saying it runs. The request extends it every third
 * of that while it runs; a process killed mid-request stops extending it, and a retry once it has run out
 * takes the key over (and runs the request again: see idempotentId).
 */
export const IDEMPOTENCY_LEASE_MS = 30_000;

const KEY = /^[\x20-\x7e]{1,255}$/;
const BY_ANOTHER_KEY =
  'This Idempotency-Key was given to a request of another API key of this account in the last 24 hours; its answer is kept for that key alone.';
/** The headers of an answer that a replay repeats besides its status and body. */
const REPLAYED_HEADERS = ['Location', 'Retry-After'];

/**
 * SHA-256 of a request body as it arrives, whoever reads it. A multipart body is hashed part by part
 * (cut at each delimiter, CRLF "--" boundary; each piece hashed, then the hashes): a client draws a new
 * boundary for each try of the same upload, and the boundary is not part of what it sends.
 */
export class RequestBodyHash {
  private readonly delimiter?: Buffer;
  private pending: Buffer;
  private piece: Hash = createHash('sha256');
  private readonly whole = createHash('sha256');
  private digest?: string;
  complete = false;

  constructor(contentType: string) {
    const boundary = /^multipart\/[^;]*;.*\bboundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
    this.delimiter = boundary ? Buffer.from(`\r\n--${boundary[1] ?? boundary[2]}`) : undefined;
    // The body read as if after a line break, so that its first delimiter is found like the others.
    this.pending = Buffer.from(this.delimiter ? '\r\n' : '');
    if (this.delimiter) this.whole.update('multipart\n');
  }

  update(chunk: Buffer) {
    if (!this.delimiter) return void this.piece.update(chunk);
    const data = Buffer.concat([this.pending, chunk]);
    let from = 0;
    for (let at = data.indexOf(this.delimiter, from); at >= 0; at = data.indexOf(this.delimiter, from)) {
      this.piece.update(data.subarray(from, at));
      this.whole.update(this.piece.digest());
      this.piece = createHash('sha256');
      from = at + this.delimiter.length;
    }
    // What could be the start of a delimiter waits for the next chunk.
    const kept = Math.max(from, data.length - this.delimiter.length + 1);
    this.piece.update(data.subarray(from, kept));
    this.pending = data.subarray(kept);
  }

  end() {
    this.complete = true;
  }

  /** The hash, once the whole body has arrived; undefined before. */
  hex(): string | undefined {
    if (!this.complete) return undefined;
    if (this.digest) return this.digest;
    if (!this.delimiter) return (this.digest = this.piece.digest('hex'));
    this.piece.update(this.pending);
    this.whole.update(this.piece.digest());
    return (this.digest = this.whole.digest('hex'));
  }
}

/**
 * The app's first middleware: a POST carrying an Idempotency-Key gets its body hashed as the HTTP parser
 * hands it over, before any other middleware awaits (and so before any byte could be missed), without
 * reading it: the body's reader, whoever it is, reads it as it would have.
 */
export function hashIdempotentBodies(): Middleware {
  return (ctx, next) => {
    if (ctx.method === 'POST' && ctx.headers['idempotency-key'] !== undefined) ctx.state.requestBodyHash = tapBody(ctx.req);
    return next();
  };
}

function tapBody(req: IncomingMessage) {
  const hash = new RequestBodyHash(req.headers['content-type'] ?? '');
  const push = req.push;
  req.push = (chunk: unknown, encoding?: BufferEncoding) => {
    if (chunk === null) hash.end();
    else hash.update(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, encoding));
    return push.call(req, chunk, encoding);
  };
  if (req.complete) hash.end();
  return hash;
}

interface KeyRow {
  api_key_id: string | null;
  method: string;
  path: string;
  body_hash: string | null;
  status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  locked_until: Date | null;
  created_at: Date;
}

/** What the request holding a key knows of it, for ids derived from it (idempotentId). */
interface HeldKey {
  accountId: string;
  key: string;
  claimedAt: Date;
}

export interface IdempotencyOptions {
  db: Db;
  /**
   * What kept answers are encrypted with (AES-256-GCM, a key derived for each account and key): an
   * answer may carry a secret shown once (a webhook's), which must not lie in the database in clear.
   */
  secretKey: Buffer;
  /** The clock of leases and expiry; tests move it. */
  now?: () => Date;
  /** The largest body a POST takes: a replay reads its body to compare it, and no more than this. */
  maxBodyBytes: number;
}

/**
 * Idempotency-Key on every POST of the API: the route kit runs it after the operation's scope check, so
 * a key that may not do an operation gets no answer of it, kept or not. Keys are unique per account. The
 * first request with a key claims it (a row of idempotency_keys) and runs; its answer is kept for 24
 * hours with its method, path, body hash and API key. The same key on the same request from the same API
 * key answers the kept answer with Idempotent-Replayed: true and runs nothing: an answer may hold a secret
 * shown once (a new API key, a webhook's secret, a signing link), given to no other key. On another
 * method, path, body or API key it is 422 idempotency_key_reused; while the first still runs, 409
 * idempotency_in_progress. A 5xx or 429 is not
 * kept, nor a 403 (it answers the key's scopes, not the request: a retry with a broader key runs), nor an
 * answer given before the body was read in full (413, 415, 408): the key is released and a retry runs the
 * request. An expired key is free again.
 */
export function idempotencyKeys({ db, secretKey, now = () => new Date(), maxBodyBytes }: IdempotencyOptions): Middleware {
  const table = () => db('idempotency_keys');
  const keyOf = (accountId: string, key: string) => Buffer.from(hkdfSync('sha256', secretKey, `${accountId}\n${key}`, 'signet idempotency-key answer', 32));

  async function claim(accountId: string, key: string, ctx: Context, holder: string) {
    const at = now();
    const [claimed] = await table()
      .insert({
        account_id: accountId,
        key,
        api_key_id: ctx.state.apiKeyId,
        method: ctx.method,
        path: ctx.path,
        holder,
        locked_until: new Date(at.getTime() + IDEMPOTENCY_LEASE_MS),
        created_at: at,
        expires_at: new Date(at.getTime() + IDEMPOTENCY_KEY_TTL_MS),
        body_hash: null,
        status: null,
        response_headers: null,
        response_body: null,
      })
      .onConflict(['account_id', 'key'])
      .merge()
      .where('idempotency_keys.expires_at', '<=', at)
      .returning(['created_at']);
    return claimed ? new Date(claimed.created_at) : undefined;
  }

  /**
   * Takes over a key whose holder stopped extending its lease (its process died), for its own API key (or
   * one held before keys were recorded); it keeps its claim time, and the hash of the body its holder had
   * read, if it got that far (and so may have committed).
   */
  async function takeOver(accountId: string, key: string, ctx: Context, holder: string) {
    const at = now();
    const [taken] = await table()
      .where({ account_id: accountId, key, method: ctx.method, path: ctx.path })
      .where((owner) => owner.where('api_key_id', ctx.state.apiKeyId).orWhereNull('api_key_id'))
      .whereNull('status')
      .where('locked_until', '<=', at)
      .where('expires_at', '>', at)
      .update({ holder, api_key_id: ctx.state.apiKeyId, locked_until: new Date(at.getTime() + IDEMPOTENCY_LEASE_MS) })
      .returning(['created_at', 'body_hash']);
    return taken ? { claimedAt: new Date(taken.created_at), bodyHash: taken.body_hash as string | null } : undefined;
  }

  async function replay(ctx: Context, key: string, row: KeyRow, body: RequestBodyHash) {
    await readWhileConnected(ctx.req, () => readToEnd(ctx.req, body, maxBodyBytes));
    if (body.hex() !== row.body_hash) throw idempotencyKeyReused();
    ctx.status = row.status!;
    ctx.set(row.response_headers ?? {});
    ctx.set('Idempotent-Replayed', 'true');
    if (row.response_body !== null) ctx.body = JSON.parse(openText(keyOf(ctx.state.account.id, key), row.response_body, 'a kept Idempotency-Key answer'));
  }

  async function run(ctx: Context, next: () => Promise<unknown>, held: HeldKey, holder: string, body: RequestBodyHash, expectedHash: string | null = null) {
    const mine = () => table().where({ account_id: held.accountId, key: held.key, holder });
    // The body's hash is recorded once it has been read, before the request can act on it: a retry that
    // takes the key over after this process died must send the same body, as a replay must.
    let reused = false;
    afterBodyRead(ctx.req, async () => {
      const hash = body.hex();
      if (hash === undefined) return;
      if (expectedHash !== null && hash !== expectedHash) {
        reused = true;
        throw idempotencyKeyReused();
      }
      await mine().update({ body_hash: hash });
    });
    const extend = setInterval(() => {
      mine()
        .update({ locked_until: new Date(now().getTime() + IDEMPOTENCY_LEASE_MS) })
        .catch((error: unknown) => ctx.state.log?.warn({ err: error }, 'idempotency lease not extended'));
    }, IDEMPOTENCY_LEASE_MS / 3);
    ctx.state.idempotency = held;
    let failure: { error: unknown } | undefined;
    try {
      await next();
    } catch (error) {
      failure = { error };
    } finally {
      clearInterval(extend);
    }
    const answer = failure ? errorAnswer(failure.error, ctx.state.requestId) : successAnswer(ctx);
    const hash = body.hex();
    try {
      if (reused) {
        // Another body under a key taken over: the key stays as its first request left it, free for that one's retry.
        await mine().update({ locked_until: now() });
      } else if (answer && hash !== undefined && answer.status < 500 && answer.status !== 429 && answer.status !== 403) {
        await mine().update({
          status: answer.status,
          body_hash: hash,
          response_headers: JSON.stringify(answer.headers),
          response_body: answer.body === undefined ? null : sealText(keyOf(held.accountId, held.key), JSON.stringify(answer.body)),
          locked_until: null,
        });
      } else {
        await mine().delete();
      }
    } catch (error) {
      // The answer stands; the key stays held until its lease runs out, and a retry then runs the request again.
      ctx.state.log?.error({ err: error }, 'idempotency key not settled');
    }
    if (failure) throw failure.error;
  }

  return async (ctx, next) => {
    const header = ctx.headers['idempotency-key'];
    if (ctx.method !== 'POST' || header === undefined) return next();
    const key = Array.isArray(header) ? header.join(', ') : header;
    if (!KEY.test(key)) throw validationError(['Idempotency-Key must be 1 to 255 printable ASCII characters']);
    const body = ctx.state.requestBodyHash as RequestBodyHash | undefined;
    if (!body) throw new Error('Idempotency-Key without its body hash: hashIdempotentBodies() must be the app’s first middleware');
    const accountId: string = ctx.state.account.id;
    const holder = randomUUID();
    // Two rounds at most: a key released (or expired) between the claim and the read is claimed again.
    for (let round = 0; round < 2; round++) {
      const claimedAt = await claim(accountId, key, ctx, holder);
      if (claimedAt) return run(ctx, next, { accountId, key, claimedAt }, holder, body);
      const row: KeyRow | undefined = await table().where({ account_id: accountId, key }).first();
      if (!row) continue;
      if (row.method !== ctx.method || row.path !== ctx.path) throw idempotencyKeyReused();
      // A key claimed before keys were recorded may still be taken over, but its answer is no one's.
      if (row.api_key_id !== ctx.state.apiKeyId && (row.api_key_id !== null || row.status !== null)) throw idempotencyKeyReused(BY_ANOTHER_KEY);
      if (row.status !== null) return replay(ctx, key, row, body);
      if (row.locked_until && row.locked_until > now()) throw idempotencyInProgress();
      const taken = await takeOver(accountId, key, ctx, holder);
      if (taken) return run(ctx, next, { accountId, key, claimedAt: taken.claimedAt }, holder, body, taken.bodyHash);
    }
    throw idempotencyInProgress();
  };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** An answer as a replay repeats it: JSON or nothing (a file or a stream is not kept). */
function successAnswer(ctx: Context): Answer | undefined {
  const body: unknown = ctx.body;
  if (body !== undefined && body !== null && (typeof body !== 'object' || Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function'))
    return undefined;
  return { status: ctx.status, headers: replayedHeaders((name) => ctx.response.get(name)), body: body ?? undefined };
}

function errorAnswer(error: unknown, requestId: string): Answer | undefined {
  const appError = toAppError(error);
  if (!appError) return undefined;
  return { status: appError.status, headers: replayedHeaders((name) => appError.headers[name] ?? ''), body: errorBody(appError, requestId) };
}

const replayedHeaders = (get: (name: string) => string) => Object.fromEntries(REPLAYED_HEADERS.flatMap((name) => (get(name) ? [[name, get(name)]] : [])));

/** Reads the rest of a body to hash it, at most `maxBytes`, without destroying the request on a refusal. */
async function readToEnd(req: IncomingMessage, body: RequestBodyHash, maxBytes: number) {
  let received = 0;
  for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > maxBytes) throw payloadTooLarge(maxBytes);
  }
  if (!body.complete) throw new AppError(400, 'request_aborted', 'The client closed the request before its body arrived.');
}

/**
 * The id of a `kind` made by the request holding an Idempotency-Key: the same for every try under the
 * key (its account, the key and the time it was claimed), so a try after a process died between its
 * commit and its answer finds what the first made, and a unique key refuses a second one. Undefined
 * without a key: the caller makes a new id.
 */
export function idempotentId(ctx: Context, kind: IdKind): string | undefined {
  const held = ctx.state.idempotency as HeldKey | undefined;
  return held ? idFromSeed(kind, held.claimedAt, `${held.accountId}\n${held.key}`) : undefined;
}
