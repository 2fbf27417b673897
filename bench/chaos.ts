// `npm run bench:chaos`: a chaos run, not a test. The api and the worker run as separate processes
// (as in docker-compose.yml) on a database of their own; while a driver sends envelopes (1–3 documents,
// 1–4 recipients of every type in parallel and sequential steps) and has the recipients sign, approve,
// view or decline, cancels, or lets requests expire, through the HTTP API only, two killers `kill -9`
// the worker and the api at random moments and start them again at once, until CHAOS_KILLS kills.
// Then, with both processes up, everything settles and is checked against PostgreSQL, the webhook
// receiver and the SMTP receiver: one outcome per request, each part recorded once, one sealed file per
// document, every event delivered at least once under one webhook-id, no event twice, no e-mail lost.
// Exits 1 on any loss, duplicate or disagreement. Needs the services of `scripts/services.sh up`
// (.cache/run/services.env).
//
// Settings (environment): CHAOS_KILLS (100), CHAOS_KILL_MINUTES (10: the killing stops then, however
// many kills it made), CHAOS_KILL_GAP_MS (500-3000: how long a process serves before its kill),
// CHAOS_KILLS_WHILE_STARTING (0.5: the share of kills that come before the process is ready),
// CHAOS_CONCURRENCY (8 requests in flight), CHAOS_MAX_REQUESTS (400),
// CHAOS_SETTLE_SECONDS (180), CHAOS_SOURCE (the code run: a copy of the working tree made at the start;
// HEAD: as last committed), CHAOS_KEEP=1 keeps the processes' logs (kept anyway when a check fails).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import knexFactory, { type Knex } from 'knex';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { createAccount } from '../src/accounts/service';
import { createApiKey } from '../src/apiKeys/service';
import { generateSelfSignedP12 } from '../src/pdf/sealCertificate';
import { verifyWebhook } from '../src/webhooks/verify';
import { progressQuery, stateQuery } from '../workflows/definitions';
import { hasDonePart, type RecipientType, recipientTypes, type SignerStatus, type SigningRequestState } from '../src/domain/signingRequests';
import { makePdf } from '../test/support/pdfs';
import { startReceiver } from '../test/support/receiver';
import { drawnSignature } from '../test/support/signing';
import { servicesEnv } from './processes';
import { NODE_FLAGS, START_ENV } from './startCommand';
import { median } from './stats';

const REPO = path.resolve(__dirname, '..');
const setting = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const KILLS = setting('CHAOS_KILLS', 100);
const KILL_MS = setting('CHAOS_KILL_MINUTES', 10) * 60_000; // the killing stops then, however many kills it made
const CONCURRENCY = setting('CHAOS_CONCURRENCY', 8);
const MAX_REQUESTS = setting('CHAOS_MAX_REQUESTS', 400);
const FINISH_MS = 90_000; // for the requests in flight when the killing stops
const SETTLE_MS = setting('CHAOS_SETTLE_SECONDS', 180) * 1000; // the sweeper picks up what a killed api left after 1–2 min
// How long a process serves before it is killed: a random time between the two, in ms.
const KILL_GAP_MS = (process.env.CHAOS_KILL_GAP_MS ?? '500-3000').split('-').map(Number) as [number, number];
/** The share of kills that come while the process starts, spread evenly (0.5: every other one). */
const WHILE_STARTING = setting('CHAOS_KILLS_WHILE_STARTING', 0.5);
const INVITATION_WAIT_MS = 150_000;
const WEBHOOK_FAILURE_RATE = 0.05; // the receiver answers 503 to some deliveries, so retries happen too
const TERMINAL = ['completed', 'declined', 'cancelled', 'expired'] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (low: number, high: number) => low + Math.random() * (high - low);
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];
const log = (message: string) => console.error(`[chaos ${new Date().toISOString().slice(11, 19)}] ${message}`);
const startedAt = Date.now();
/** No request is started, and no killing happens, after this; what is in flight then gets FINISH_MS. */
const killDeadline = startedAt + KILL_MS;
const actionDeadline = killDeadline + FINISH_MS;

// ---------------------------------------------------------------- cleanup
const cleanups: (() => Promise<unknown> | unknown)[] = [];
async function cleanUp() {
  for (const step of cleanups.splice(0).reverse())
    await Promise.resolve()
      .then(step)
      .catch((error) => log(`cleanup step failed: ${error}`));
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

/**
 * The service's code as it is now (CHAOS_SOURCE=HEAD: as last committed), copied once, so that every
 * restart in the run starts the same code whatever happens to the working tree meanwhile.
 */
function snapshotSource(dir: string) {
  const app = path.join(dir, 'app');
  fs.mkdirSync(app);
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO }).toString().trim();
  const wanted = (file: string) => /^(src|workflows|activities)\//.test(file) || ['package.json', 'tsconfig.json'].includes(file);
  if (process.env.CHAOS_SOURCE === 'HEAD') {
    const archive = execFileSync('git', ['archive', commit, 'src', 'workflows', 'activities', 'package.json', 'tsconfig.json'], {
      cwd: REPO,
      maxBuffer: 256 * 1024 * 1024,
    });
    execFileSync('tar', ['-x', '-C', app], { input: archive });
  } else {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, maxBuffer: 64 * 1024 * 1024 });
    for (const file of listed.toString().split('\0').filter(wanted)) {
      if (!fs.existsSync(path.join(REPO, file))) continue; // deleted in the working tree
      fs.mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
      fs.copyFileSync(path.join(REPO, file), path.join(app, file));
    }
  }
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(app, 'node_modules'));
  return { app, code: process.env.CHAOS_SOURCE === 'HEAD' ? `HEAD ${commit}` : `working tree on ${commit}` };
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

// ---------------------------------------------------------------- the two processes
/**
 * One service process (`SIGNET_PROCESSES=api` or `worker`), in a process group of its own so that a
 * kill takes its children with it (the worker's workflow bundler), as a container's death would.
 */
class ServiceProcess {
  child?: ChildProcess;
  ready = false;
  kills = 0;
  /** Kills that came before the process was ready (still starting). */
  killsWhileStarting = 0;
  starts = 0;
  /** Start → ready, in ms, of every start that got there. */
  readyMs: number[] = [];
  private spawnedAt = 0;
  unexpectedExits: string[] = [];
  private killing = false;
  private stopped = false;

  constructor(
    readonly name: 'api' | 'worker',
    private readonly cwd: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
    readonly logFile: string,
  ) {}

  start() {
    this.ready = false;
    this.starts++;
    this.spawnedAt = Date.now();
    const out = fs.openSync(this.logFile, 'a');
    const child = spawn(process.execPath, [...NODE_FLAGS, 'src/main.ts'], {
      cwd: this.cwd,
      env: { ...START_ENV, ...this.env, SIGNET_PROCESSES: this.name, PORT: String(this.port), METRICS_PORT: '0' }, // processes side by side
      stdio: ['ignore', out, out],
      detached: true,
    });
    fs.closeSync(out);
    this.child = child;
    child.once('exit', (code, signal) => {
      if (this.killing || this.stopped || this.child !== child) return;
      // Not our kill: worth reporting (a crash under chaos), and the service must come back.
      this.unexpectedExits.push(`${this.name} exited by itself (${code ?? signal}) after start ${this.starts}`);
      log(this.unexpectedExits.at(-1)!);
      setTimeout(() => !this.stopped && this.child === child && this.start(), 500);
    });
    void this.watchReadiness(child);
  }

  private async watchReadiness(child: ChildProcess) {
    while (this.child === child && child.exitCode === null && child.signalCode === null) {
      const status = await fetch(`http://127.0.0.1:${this.port}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) {
        if (this.child === child) {
          this.ready = true;
          this.readyMs.push(Date.now() - this.spawnedAt);
        }
        return;
      }
      await sleep(100);
    }
  }

  async waitUntilReady(ms = 120_000) {
    const deadline = Date.now() + ms;
    while (!this.ready) {
      if (Date.now() > deadline) throw new Error(`${this.name} not ready within ${ms / 1000} s; see ${this.logFile}`);
      await sleep(100);
    }
  }

  /** kill -9 of the whole process group, then a new process at once. */
  async killAndRestart() {
    const child = this.child!;
    if (child.exitCode !== null || child.signalCode !== null) return; // it died by itself: its exit handler starts the next
    this.killing = true;
    if (!this.ready) this.killsWhileStarting++;
    this.ready = false;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
    await exited;
    this.kills++;
    this.killing = false;
    fs.appendFileSync(this.logFile, `\n----- kill -9 #${this.kills} at ${new Date().toISOString()} -----\n`);
    this.start();
  }

  stop() {
    this.stopped = true;
    if (this.child?.pid) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

// ---------------------------------------------------------------- the receivers
interface ReceivedMail {
  key: string;
  messageId: string;
  text: string;
}

async function startSmtpReceiver() {
  const mails: ReceivedMail[] = [];
  const byKey = new Map<string, ReceivedMail[]>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 50 * 1024 * 1024,
    onData: (stream, _session, callback) =>
      void simpleParser(stream).then((parsed) => {
        const mail = {
          key: String(parsed.headers.get('x-signet-idempotency-key') ?? ''),
          messageId: parsed.messageId ?? '',
          text: parsed.text ?? '',
        };
        mails.push(mail);
        byKey.set(mail.key, [...(byKey.get(mail.key) ?? []), mail]);
        callback();
      }, callback),
  });
  // A worker killed in the middle of a message resets its connection: expected here.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    mails,
    byKey,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------- HTTP, through the api only
interface Answer {
  /** 0 when no answer came. */
  status: number;
  body: any;
  /** The connection was refused: the call never reached an api, so it surely did nothing. */
  refused?: boolean;
}

/** Counts of answers that leave the driver unsure whether the call took effect: no answer, or a 5xx. */
const ambiguous: Record<string, number> = {};
/** Retries after which the database showed that the first call had taken effect. */
const resolvedAsDone: Record<string, number> = {};
const bump = (counts: Record<string, number>, key: string) => (counts[key] = (counts[key] ?? 0) + 1);
/** 409s answered while the request was still pending and the call had not taken effect (tried again). */
const conflictsWhilePending: Record<string, number> = {};
/** Calls sent that got no answer, by why (socket closed by a killed api, timed out, …). */
const noAnswer: Record<string, number> = {};
/** Calls refused while the api was down: never ambiguous, simply tried again. */
let refusals = 0;
const unanswered = (answer: Answer) => answer.status === 0 || answer.status >= 500;

function httpClient(baseUrl: string, apiKey: string) {
  /** One call. No answer (refused, reset, timed out) is status 0. */
  async function call(method: string, urlPath: string, json?: unknown, authorised = true): Promise<Answer> {
    try {
      const response = await fetch(`${baseUrl}${urlPath}`, {
        method,
        headers: { ...(authorised ? { Authorization: `Bearer ${apiKey}` } : {}), ...(json !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        body: json !== undefined ? JSON.stringify(json) : undefined,
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      return { status: response.status, body: (response.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      const refused = cause?.code === 'ECONNREFUSED';
      if (refused) refusals++;
      else bump(noAnswer, cause?.code ?? (error as Error).name);
      return { status: 0, body: String((error as { cause?: Error }).cause ?? error), refused };
    }
  }
  /** A safe call, repeated until the api answers without a 5xx (it may be down or restarting). */
  async function read(urlPath: string, authorised = true): Promise<Answer> {
    for (;;) {
      checkDeadline(`GET ${urlPath}`);
      const answer = await call('GET', urlPath, undefined, authorised);
      if (!unanswered(answer) && answer.status !== 429) return answer;
      await sleep(250);
    }
  }
  return { call, read };
}

class Stuck extends Error {}
function checkDeadline(what: string) {
  if (Date.now() > actionDeadline) throw new Stuck(`gave up on ${what}: the run's time is up`);
}

// ---------------------------------------------------------------- the driver
const intents = ['complete', 'complete', 'complete', 'complete', 'decline', 'decline', 'cancel', 'cancel', 'race', 'race', 'expire'] as const;
type Intent = (typeof intents)[number];
/** How a request orders its recipients: signingOrder alone (parallel, sequential), or routingOrder steps. */
const routings = ['routed', 'routed', 'parallel', 'parallel', 'sequential'] as const;
type Routing = (typeof routings)[number];
const recipientMix: readonly RecipientType[] = ['signer', 'signer', 'approver', 'viewer', 'cc'];
/** What each recipient does when its step comes (a cc does nothing), and the status that records it. */
type Part = 'sign' | 'approve' | 'view' | 'decline';
const partOf = { signer: 'sign', approver: 'approve', viewer: 'view' } as const satisfies Record<Exclude<RecipientType, 'cc'>, Part>;
const statusAfter: Record<Part, SignerStatus> = { sign: 'signed', approve: 'approved', view: 'viewed', decline: 'declined' };
const pathOf: Record<Part, string> = { sign: 'sign', approve: 'approve', view: 'viewed', decline: 'decline' };

interface Recipient {
  id: string;
  email: string;
  name: string;
  type: RecipientType;
  routingOrder: number;
}

interface Scenario {
  n: number;
  intent: Intent;
  routing: Routing;
  /** The recipients asked for: each one's type, and its routingOrder when routed (a cc sometimes has none). */
  planned: { type: RecipientType; routingOrder?: number }[];
  documentCount: number;
  documentIds: string[];
  requestId?: string;
  recipients: Recipient[];
  /** What the api confirmed with a 2xx: these must hold in the database at the end. */
  acknowledged: { parts: Map<string, SignerStatus>; declined?: string; cancelled: boolean };
  /** Recipients who acted through a fresh link from the api because their invitation was late. */
  freshLinks: Set<string>;
  /** Each call and its answer, for the post-mortem of a failed run. */
  trace: string[];
  error?: string;
  done: boolean;
}

/**
 * A request of 1–3 documents and 1–4 recipients of mixed types: at least one who acts, and one who may
 * decline (a signer or an approver) when the request is to be declined. Routed, each recipient has a
 * step from 1 to the number of recipients (several share one: they act in parallel).
 */
function planScenario(n: number): Scenario {
  const intent = pick(intents);
  const routing = pick(routings);
  const count = 1 + Math.floor(Math.random() * 4);
  const types: RecipientType[] = Array.from({ length: count }, () => pick(recipientMix));
  if (!types.some((type) => type !== 'cc')) types[Math.floor(Math.random() * count)] = 'signer';
  if (intent === 'decline' && !types.some((type) => type === 'signer' || type === 'approver'))
    types[types.findIndex((type) => type !== 'cc')] = pick(['signer', 'approver'] as const);
  const steps = 1 + Math.floor(Math.random() * count);
  return {
    n,
    intent,
    routing,
    planned: types.map((type) => ({
      type,
      routingOrder: routing === 'routed' && (type !== 'cc' || Math.random() < 0.5) ? 1 + Math.floor(Math.random() * steps) : undefined,
    })),
    documentCount: 1 + Math.floor(Math.random() * 3),
    documentIds: [],
    recipients: [],
    acknowledged: { parts: new Map(), cancelled: false },
    freshLinks: new Set(),
    trace: [],
    done: false,
  };
}

const note = (scenario: Scenario, step: string) => {
  if (scenario.trace.length < 300) scenario.trace.push(`${new Date().toISOString().slice(11, 23)} ${step}`);
};

type Http = ReturnType<typeof httpClient>;
type Smtp = Awaited<ReturnType<typeof startSmtpReceiver>>;
const counters = { invitationsLate: 0, duplicateCreates: 0, viewsSent: 0 };

/** pdfs[i] is the PDF of a request's document i + 1 (each uploaded as a document of its own). */
function createDriver(http: Http, smtp: Smtp, pdfs: Buffer[], runId: string) {
  const { call, read } = http;

  async function createDocument(scenario: Scenario, index: number) {
    const pdf = pdfs[index];
    for (;;) {
      checkDeadline('POST /documents');
      const answer = await call('POST', '/api/v1/documents', {
        fileName: `chaos-${scenario.n}-${index + 1}.pdf`,
        fileSize: pdf.length,
        content: pdf.toString('base64'),
      });
      if (answer.status === 201) return answer.body.id as string;
      if (!unanswered(answer) && answer.status !== 429) throw new Error(`POST /documents answered ${answer.status} ${JSON.stringify(answer.body)}`);
      // No answer: a document may have been made. A stray one is harmless (its event is checked like any other).
      if (!answer.refused) bump(ambiguous, 'POST /documents');
      await sleep(250);
    }
  }

  async function createRequest(scenario: Scenario) {
    const expiresAt = scenario.intent === 'expire' ? new Date(Date.now() + between(30_000, 60_000)).toISOString() : undefined;
    const [first] = scenario.documentIds;
    const body = {
      // One document is sent either way: as document_id (the spec's form) or as a list of one.
      ...(scenario.documentIds.length === 1 && Math.random() < 0.5
        ? { document_id: first }
        : { documents: scenario.documentIds.map((document_id) => ({ document_id })) }),
      title: `Chaos ${runId} #${scenario.n}`,
      signingOrder: scenario.routing === 'sequential' ? 'sequential' : 'parallel',
      reminderEveryDays: 0,
      ...(expiresAt ? { expiresAt } : {}),
      signers: scenario.planned.map(({ type, routingOrder }, i) => ({
        name: `Recipient ${scenario.n}.${i + 1}`,
        email: `recipient-${scenario.n}-${i + 1}@chaos.example`,
        ...(type !== 'signer' || Math.random() < 0.5 ? { recipientType: type } : {}),
        ...(routingOrder !== undefined ? { routingOrder } : {}),
      })),
    };
    for (;;) {
      checkDeadline('POST /signatures');
      const answer = await call('POST', '/api/v1/signatures', body);
      if (answer.status === 201) return answer.body;
      if (!unanswered(answer) && answer.status !== 429) throw new Error(`POST /signatures answered ${answer.status} ${JSON.stringify(answer.body)}`);
      if (answer.refused || answer.status === 429) {
        await sleep(250);
        continue;
      }
      // Ambiguous: the request may be committed (and its workflow started, or left to the sweeper).
      // Its documents have no other request, so the list tells, once the api answers again.
      bump(ambiguous, 'POST /signatures');
      const listed = await read(`/api/v1/signatures?documentId=${first}`);
      note(scenario, `POST /signatures ${answer.status}: ${listed.body.data.length} found on ${first}`);
      if (listed.body.data.length > 1) counters.duplicateCreates++;
      if (listed.body.data.length > 0) {
        bump(resolvedAsDone, 'POST /signatures');
        return listed.body.data[0];
      }
      await sleep(250);
    }
  }

  const requestState = async (scenario: Scenario) => (await read(`/api/v1/signatures/${scenario.requestId}`)).body;

  /** The recipient's link from their invitation e-mail; from the api (a fresh link) when it is late. Null once the request has ended. */
  async function linkFor(scenario: Scenario, signerId: string): Promise<string | null> {
    const deadline = Math.min(Date.now() + INVITATION_WAIT_MS, actionDeadline);
    while (Date.now() < deadline) {
      const mail = smtp.byKey.get(`invitation:${signerId}:0`)?.[0];
      if (mail) return /\/sign\/([A-Za-z0-9_-]+)/.exec(mail.text)![1];
      await sleep(250);
    }
    counters.invitationsLate++;
    scenario.freshLinks.add(signerId);
    for (;;) {
      checkDeadline('a signing link');
      const answer = await call('POST', `/api/v1/signatures/${scenario.requestId}/signers/${signerId}/link`);
      note(scenario, `fresh link for ${signerId}: ${answer.status}`);
      if (answer.status === 200) return new URL(answer.body.url).pathname.split('/').pop()!;
      if (answer.status === 409) return null;
      await sleep(250);
    }
  }

  /**
   * A recipient's part (sign, approve, view) or decline through their link. A 2xx is acknowledged; no
   * answer, a 5xx or a 409 is resolved by reading the request: done when the recipient is in the wanted
   * state, over when the request ended otherwise, else tried again (the workflow may not be running yet,
   * or a retry met the first try). Returns the recipient's new status, or how the request ended.
   */
  async function act(scenario: Scenario, recipient: Recipient, part: Part): Promise<string> {
    const signerId = recipient.id;
    const token = await linkFor(scenario, signerId);
    if (!token) return 'ended';
    if (Math.random() < 0.5) {
      counters.viewsSent++;
      await call('GET', `/sign/${token}/request`, undefined, false);
    }
    const want = statusAfter[part];
    const body =
      part === 'sign'
        ? { consent: true, signature: Math.random() < 0.3 ? { type: 'drawn', value: drawnSignature } : { type: 'typed', value: `Signer ${scenario.n}` } }
        : part === 'decline'
          ? { reason: 'Chaos says no.' }
          : undefined;
    const what = `POST /sign/:token/${pathOf[part]}`;
    for (;;) {
      checkDeadline(`${part} of ${signerId}`);
      const answer = await call('POST', `/sign/${token}/${pathOf[part]}`, body, false);
      if (!answer.refused) note(scenario, `${part} ${signerId}: ${answer.status} ${answer.status === 200 ? '' : JSON.stringify(answer.body).slice(0, 120)}`);
      if (answer.status === 200) {
        if (part === 'decline') scenario.acknowledged.declined = signerId;
        else scenario.acknowledged.parts.set(signerId, want);
        return want;
      }
      if (answer.status === 410) return 'expired';
      if (answer.status !== 409 && !unanswered(answer)) throw new Error(`${part} answered ${answer.status} ${JSON.stringify(answer.body)}`);
      if (answer.refused) {
        await sleep(250);
        continue;
      }
      if (unanswered(answer)) bump(ambiguous, what);
      const state = await requestState(scenario);
      const status = state.signers.find((candidate: { id: string }) => candidate.id === signerId).status;
      note(scenario, `  read: request ${state.status}, recipient ${status}`);
      if (status === want) {
        bump(resolvedAsDone, what);
        return want;
      }
      if (state.status !== 'pending') return state.status;
      if (answer.status === 409) bump(conflictsWhilePending, what);
      await sleep(500);
    }
  }

  async function cancel(scenario: Scenario): Promise<string> {
    for (;;) {
      checkDeadline('cancel');
      const answer = await call('POST', `/api/v1/signatures/${scenario.requestId}/cancel`, { reason: 'chaos' });
      if (!answer.refused) note(scenario, `cancel: ${answer.status} ${answer.status === 200 ? '' : JSON.stringify(answer.body).slice(0, 120)}`);
      if (answer.status === 200) {
        scenario.acknowledged.cancelled = true;
        return 'cancelled';
      }
      if (answer.status !== 409 && !unanswered(answer)) throw new Error(`cancel answered ${answer.status} ${JSON.stringify(answer.body)}`);
      if (answer.refused) {
        await sleep(250);
        continue;
      }
      if (unanswered(answer)) bump(ambiguous, 'POST /signatures/:id/cancel');
      const state = await requestState(scenario);
      note(scenario, `  read: request ${state.status}`);
      if (state.status === 'cancelled') bump(resolvedAsDone, 'POST /signatures/:id/cancel');
      if (state.status !== 'pending') return state.status;
      if (answer.status === 409) bump(conflictsWhilePending, 'POST /signatures/:id/cancel');
      await sleep(500); // not started yet (the sweeper starts it), or completing
    }
  }

  /** Each of these recipients does its part, step after step, those of one step at once; false when one could not. */
  async function actInSteps(scenario: Scenario, recipients: Recipient[]) {
    for (const step of [...new Set(recipients.map((recipient) => recipient.routingOrder))].sort((a, b) => a - b)) {
      const ofStep = recipients.filter((recipient) => recipient.routingOrder === step);
      const outcomes = await Promise.all(ofStep.map((recipient) => act(scenario, recipient, partOf[recipient.type as keyof typeof partOf])));
      if (outcomes.some((outcome, i) => outcome !== statusAfter[partOf[ofStep[i].type as keyof typeof partOf]])) return false;
    }
    return true;
  }

  async function run(scenario: Scenario) {
    for (let i = 0; i < scenario.documentCount; i++) scenario.documentIds.push(await createDocument(scenario, i));
    const created = await createRequest(scenario);
    scenario.requestId = created.id;
    note(scenario, `request ${created.id} on ${scenario.documentIds.join(', ')}`);
    scenario.recipients = created.signers.map(({ id, email, name, recipientType, routingOrder }: Recipient & { recipientType: RecipientType }) => ({
      id,
      email,
      name,
      type: recipientType,
      routingOrder,
    }));
    // Those who act, in step order (a cc does nothing); `some` is a first part of them, never all.
    const acting = scenario.recipients.filter((recipient) => recipient.type !== 'cc').sort((a, b) => a.routingOrder - b.routingOrder);
    const some = acting.slice(0, Math.floor(Math.random() * acting.length));
    switch (scenario.intent) {
      case 'complete':
        await actInSteps(scenario, acting);
        break;
      case 'decline': {
        // The steps before the decliner's are done; in its step, others act as it declines, or not.
        const decliner = pick(acting.filter((recipient) => recipient.type === 'signer' || recipient.type === 'approver'));
        if (
          !(await actInSteps(
            scenario,
            acting.filter((recipient) => recipient.routingOrder < decliner.routingOrder),
          ))
        )
          break;
        const peers = acting.filter((recipient) => recipient.routingOrder === decliner.routingOrder && recipient !== decliner && Math.random() < 0.5);
        await Promise.all([act(scenario, decliner, 'decline'), ...peers.map((peer) => act(scenario, peer, partOf[peer.type as keyof typeof partOf]))]);
        break;
      }
      case 'cancel':
        await actInSteps(scenario, some);
        await cancel(scenario);
        break;
      case 'race': {
        // The last part (a signature, an approval or a view) against a cancel: either may win, never both.
        const last = acting.at(-1)!;
        await actInSteps(scenario, acting.slice(0, -1));
        const lastPart = act(scenario, last, partOf[last.type as keyof typeof partOf]);
        await sleep(between(0, 300));
        await Promise.all([lastPart, cancel(scenario)]);
        break;
      }
      case 'expire':
        await actInSteps(scenario, some);
        break;
    }
  }

  return { run };
}

// ---------------------------------------------------------------- the checks
interface Findings {
  problems: string[];
  /** Problems that more time may cure (pending requests, events or e-mails on their way). */
  waiting: number;
  table: [string, string | number][];
}

async function inspect(
  db: Knex,
  scenarios: Scenario[],
  receiver: Awaited<ReturnType<typeof startReceiver>>,
  answers: number[],
  smtp: Smtp,
  secret: string,
  ownerEmail: string,
): Promise<Findings> {
  const problems: string[] = [];
  let waiting = 0;
  const problem = (text: string, curable = false) => {
    problems.push(text);
    if (curable) waiting++;
  };
  const requests = await db('signing_requests').select('id', 'status', 'signing_order', 'sealed_sha256', 'workflow_started_at');
  const signers: {
    id: string;
    signing_request_id: string;
    email: string;
    recipient_type: RecipientType;
    routing_order: number;
    status: string;
    viewed_at: Date | null;
  }[] = await db('signers')
    .select('id', 'signing_request_id', 'email', 'recipient_type', 'routing_order', 'status', 'viewed_at')
    .orderBy(['signing_request_id', 'order']);
  const requestDocuments: { signing_request_id: string; document_id: string; position: number; sealed_sha256: string | null }[] = await db(
    'signing_request_documents',
  )
    .select('signing_request_id', 'document_id', 'position', 'sealed_sha256')
    .orderBy(['signing_request_id', 'position']);
  const audit = await db('audit_trail').select('signing_request_id', 'signer_id', 'action', 'idempotency_key');
  const events = await db('events').select('id', 'type', 'data', 'dispatched_at');
  const sealedRows: { signing_request_id: string; document_id: string; sha256: string }[] = await db('sealed_documents').select(
    'signing_request_id',
    'document_id',
    'sha256',
  );
  const linked = new Set<string>(await db('signer_tokens').distinct('signer_id').pluck('signer_id'));
  const deliveries = new Map((await db('webhook_deliveries').select('event_id', 'status')).map((row) => [row.event_id, row.status]));

  const countBy = <T>(rows: T[], key: (row: T) => string | undefined) => {
    const counts = new Map<string, number>();
    for (const row of rows) {
      const value = key(row);
      if (value !== undefined) counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return counts;
  };
  const groupBy = <T>(rows: T[], key: (row: T) => string) => {
    const groups = new Map<string, T[]>();
    for (const row of rows) groups.set(key(row), [...(groups.get(key(row)) ?? []), row]);
    return groups;
  };
  const auditCount = countBy(audit, (step) => `${step.action}:${step.signer_id ?? step.signing_request_id}`);
  const endAuditCount = countBy(audit, (step) =>
    (TERMINAL as readonly string[]).includes(step.action) ? `${step.action}:${step.signing_request_id}` : undefined,
  );
  const eventKey = (event: { type: string; data: Record<string, string> }) => {
    if (event.type.startsWith('signer.')) return `${event.type}:${event.data.signerId}`;
    if (event.type.startsWith('signing_request.')) return `${event.type}:${event.data.signingRequestId}`;
    if (event.type === 'document.signed') return `${event.type}:${event.data.signingRequestId}:${event.data.documentId}`;
    if (event.type === 'document.created') return `${event.type}:${event.data.documentId}`;
    return undefined; // document.updated and .deleted may happen more than once
  };
  const eventCount = countBy(events, eventKey);
  const sealedCount = countBy(sealedRows, (row) => `${row.signing_request_id}:${row.document_id}`);
  const sealedOf = groupBy(sealedRows, (row) => row.signing_request_id);
  const documentsOf = groupBy(requestDocuments, (row) => row.signing_request_id);
  const signersOf = groupBy(signers, (signer) => signer.signing_request_id);
  const isDone = (signer: (typeof signers)[number]) => hasDonePart(signer.recipient_type, signer.status as SignerStatus);

  // Requests: exactly one outcome, and status, recipients, audit trail, events and sealed files agree.
  const outcomes: Record<string, number> = {};
  let sealedFiles = 0;
  let documentsSigned = 0;
  for (const request of requests) {
    outcomes[request.status] = (outcomes[request.status] ?? 0) + 1;
    const own = signersOf.get(request.id) ?? [];
    const documents = documentsOf.get(request.id) ?? [];
    if (!(TERMINAL as readonly string[]).includes(request.status)) {
      problem(`${request.id} is still ${request.status}${request.workflow_started_at ? '' : ' (its workflow was never started)'}`, true);
      continue;
    }
    const endSteps = TERMINAL.filter((status) => endAuditCount.get(`${status}:${request.id}`));
    const endEvents = TERMINAL.filter((status) => eventCount.get(`signing_request.${status}:${request.id}`));
    if (endSteps.join() !== request.status || endAuditCount.get(`${request.status}:${request.id}`) !== 1)
      problem(`${request.id} is ${request.status}, its audit trail ends ${endSteps.join(' + ') || 'nowhere'}`);
    if (endEvents.join() !== request.status || eventCount.get(`signing_request.${request.status}:${request.id}`) !== 1)
      problem(`${request.id} is ${request.status}, its events say ${endEvents.join(' + ') || 'nothing'}`);
    if (eventCount.get(`signing_request.created:${request.id}`) !== 1)
      problem(`${request.id} has ${eventCount.get(`signing_request.created:${request.id}`) ?? 0} signing_request.created events`);
    // A completed request: one sealed file and one document.signed per document, and each hash where it is shown.
    const completed = request.status === 'completed';
    const sealed = sealedOf.get(request.id) ?? [];
    if (documents.length === 0) problem(`${request.id} has no documents`);
    if (sealed.some((row) => !documents.some((document) => document.document_id === row.document_id)))
      problem(`${request.id} has a sealed file of a document it does not have`);
    for (const document of documents) {
      const files = sealedCount.get(`${request.id}:${document.document_id}`) ?? 0;
      const signedEvents = eventCount.get(`document.signed:${request.id}:${document.document_id}`) ?? 0;
      sealedFiles += files;
      documentsSigned += signedEvents;
      if (files !== (completed ? 1 : 0)) problem(`${request.id} is ${request.status} with ${files} sealed files of ${document.document_id}`);
      if (signedEvents !== (completed ? 1 : 0))
        problem(`${request.id} is ${request.status} with ${signedEvents} document.signed events of ${document.document_id}`);
      const sha256 = sealed.find((row) => row.document_id === document.document_id)?.sha256;
      if (completed && (document.sealed_sha256 !== sha256 || !/^[0-9a-f]{64}$/.test(sha256 ?? '')))
        problem(`${request.id}: the sealedSha256 of ${document.document_id} (${document.sealed_sha256}) is not its sealed file's`);
      if (completed && document.position === 1 && request.sealed_sha256 !== sha256)
        problem(`${request.id}: sealedSha256 ${request.sealed_sha256} is not its first document's sealed file's`);
    }
    if (completed && own.some((signer) => signer.recipient_type !== 'cc' && !isDone(signer)))
      problem(`${request.id} is completed but not every recipient other than cc did its part`);
    const decliners = own.filter((signer) => signer.status === 'declined');
    if (decliners.length !== (request.status === 'declined' ? 1 : 0))
      problem(`${request.id} is ${request.status} with ${decliners.length} declined recipients`);
    for (const decliner of decliners.filter((signer) => !['signer', 'approver'].includes(signer.recipient_type)))
      problem(`${decliner.id} of ${request.id} is a ${decliner.recipient_type} and declined`);
  }

  // Recipients: each part (signature, approval, view) and decline recorded once, in the recipient's row,
  // the audit trail and the events; each status one its type may have.
  const recorded: Record<string, number> = {};
  const mayReach: Record<RecipientType, string[]> = {
    signer: ['pending', 'notified', 'viewed', 'signed', 'declined'],
    approver: ['pending', 'notified', 'viewed', 'approved', 'declined'],
    viewer: ['pending', 'notified', 'viewed'],
    cc: ['pending'],
  };
  for (const signer of signers) {
    for (const [action, type, expected] of [
      ['signed', 'signer.signed', signer.status === 'signed'],
      ['declined', 'signer.declined', signer.status === 'declined'],
      ['approved', 'signer.approved', signer.status === 'approved'],
      ['viewed', 'signer.viewed', signer.viewed_at !== null],
    ] as const) {
      const steps = auditCount.get(`${action}:${signer.id}`) ?? 0;
      const sent = eventCount.get(`${type}:${signer.id}`) ?? 0;
      if (steps !== Number(expected) || sent !== Number(expected))
        problem(
          `${signer.id} (${signer.recipient_type}) is ${signer.status}${signer.viewed_at ? ', viewed' : ''}: ${steps} '${action}' audit steps, ${sent} ${type} events`,
        );
      if (expected) recorded[`${signer.recipient_type} ${action}`] = (recorded[`${signer.recipient_type} ${action}`] ?? 0) + 1;
    }
    if (!mayReach[signer.recipient_type].includes(signer.status)) problem(`${signer.id} is a ${signer.recipient_type} and ${signer.status}`);
  }

  // What the api acknowledged with a 2xx must be in the database.
  const byId = new Map(requests.map((request) => [request.id, request]));
  const driven = new Set(scenarios.map((scenario) => scenario.requestId));
  for (const request of requests) if (!driven.has(request.id)) problem(`${request.id} was made by a retried POST /signatures that the driver did not find`);
  const signerById = new Map(signers.map((signer) => [signer.id, signer]));
  const acknowledged: Record<string, number> = {};
  const races: Record<string, number> = {};
  for (const scenario of scenarios) {
    if (!scenario.requestId) continue;
    const request = byId.get(scenario.requestId);
    if (!request) {
      problem(`${scenario.requestId} was acknowledged with 201 but is not in the database`);
      continue;
    }
    for (const [id, status] of scenario.acknowledged.parts) {
      acknowledged[status] = (acknowledged[status] ?? 0) + 1;
      if (signerById.get(id)?.status !== status) problem(`${id} was answered 200 as ${status} but is ${signerById.get(id)?.status}`);
    }
    if (scenario.acknowledged.declined && (signerById.get(scenario.acknowledged.declined)?.status !== 'declined' || request.status !== 'declined')) {
      problem(`the decline of ${scenario.acknowledged.declined} was answered 200 but ${request.id} is ${request.status}`);
    }
    if (scenario.acknowledged.cancelled && request.status !== 'cancelled') problem(`the cancel of ${request.id} was answered 200 but it is ${request.status}`);
    if (scenario.intent === 'race') races[request.status] = (races[request.status] ?? 0) + 1;
    const expected = { complete: ['completed'], decline: ['declined'], cancel: ['cancelled'], race: ['completed', 'cancelled'], expire: ['expired'] }[
      scenario.intent
    ];
    if ((TERMINAL as readonly string[]).includes(request.status) && !expected.includes(request.status))
      problem(`${request.id} (${scenario.intent}) ended ${request.status}`);
  }

  // Events: none twice; every one delivered, under its own id as webhook-id, the same body each time.
  const duplicateEvents = [...eventCount].filter(([, count]) => count > 1);
  for (const [key, count] of duplicateEvents) problem(`event ${key} was recorded ${count} times`);
  const received = new Map<string, { bodies: Set<string>; accepted: number; total: number }>();
  let badSignatures = 0;
  receiver.received.forEach((entry, i) => {
    const id = String(entry.headers['webhook-id']);
    const seen = received.get(id) ?? { bodies: new Set<string>(), accepted: 0, total: 0 };
    seen.bodies.add(entry.body);
    seen.total++;
    if (answers[i] === 200) seen.accepted++;
    received.set(id, seen);
    if (!verifyWebhook(secret, entry.body, entry.headers['x-service-signature'])) badSignatures++;
  });
  if (badSignatures) problem(`${badSignatures} deliveries carried a signature that does not verify`);
  let delivered = 0;
  let repeated = 0;
  let undispatched = 0;
  for (const event of events) {
    const seen = received.get(event.id);
    if (!event.dispatched_at) undispatched++;
    if (!seen || seen.accepted === 0) {
      problem(
        `event ${event.id} (${event.type}) not delivered${event.dispatched_at ? '' : ', not even dispatched'}${deliveries.has(event.id) ? ` (delivery ${deliveries.get(event.id)})` : ''}`,
        true,
      );
      continue;
    }
    delivered++;
    if (seen.accepted > 1) repeated += seen.accepted - 1;
    if (seen.bodies.size !== 1 || JSON.parse([...seen.bodies][0]).id !== event.id)
      problem(`event ${event.id} was delivered with ${seen.bodies.size} different bodies`);
    if (deliveries.get(event.id) !== 'succeeded') problem(`event ${event.id} arrived but its delivery is ${deliveries.get(event.id)}`, true);
  }
  const eventIds = new Set(events.map((event) => event.id));
  const strangers = [...received.keys()].filter((id) => !eventIds.has(id));
  if (strangers.length) problem(`${strangers.length} deliveries for events that are not in the database`);

  // E-mail: every invitation the audit trail says was sent, and every closing e-mail the outcome calls
  // for, arrived; every recipient whose step came was invited; a cc never was, and has no link.
  const freshLinks = new Set(scenarios.flatMap((scenario) => [...scenario.freshLinks]));
  const expectedMail = new Set<string>();
  const invited = new Set(audit.filter((step) => step.action === 'invitation_sent').map((step) => step.signer_id));
  for (const step of audit) if (step.action === 'invitation_sent') expectedMail.add(step.idempotency_key);
  let invitationsMissing = 0;
  let ccLinked = 0;
  for (const request of requests) {
    if (!(TERMINAL as readonly string[]).includes(request.status)) continue;
    const own = signersOf.get(request.id) ?? [];
    const acting = own.filter((signer) => signer.recipient_type !== 'cc');
    const firstStep = Math.min(...acting.map((signer) => signer.routing_order));
    for (const signer of own) {
      if (signer.recipient_type === 'cc') {
        const notified = eventCount.get(`signer.notified:${signer.id}`) ?? 0;
        const linkMail = [...smtp.byKey.keys()].some((key) => key.startsWith(`invitation:${signer.id}:`) || key.startsWith(`reminder:${signer.id}:`));
        if (invited.has(signer.id) || linked.has(signer.id) || notified || linkMail) {
          ccLinked++;
          problem(`${signer.id}, a cc of ${request.id}, was invited or given a link`);
        }
        continue;
      }
      // Its step came: it is the first (which a cancel can end before its invitations), the request
      // completed, it acted, or (a decline can only come from a step that came) every earlier step was
      // done in a declined request. A recipient who acted through a fresh link before their late
      // invitation went out is not invited any more.
      const earlierDone = acting.filter((other) => other.routing_order < signer.routing_order).every(isDone);
      const stepCame =
        (signer.routing_order === firstStep && request.status !== 'cancelled') ||
        request.status === 'completed' ||
        signer.status !== 'pending' ||
        (request.status === 'declined' && earlierDone);
      if (stepCame && !invited.has(signer.id) && !freshLinks.has(signer.id)) {
        invitationsMissing++;
        problem(`${signer.id} (${signer.recipient_type}, step ${signer.routing_order}) of ${request.id} (${request.status}) was never invited`);
      }
    }
    const people = [...own, { id: 'owner', email: ownerEmail, status: 'owner', recipient_type: 'owner' }];
    if (request.status === 'completed') for (const person of people) expectedMail.add(`completed:${request.id}:${person.email}`);
    if (request.status === 'declined')
      for (const person of people.filter((candidate) => candidate.status !== 'declined' && candidate.recipient_type !== 'cc'))
        expectedMail.add(`declined:${request.id}:${person.email}`);
    if (request.status === 'cancelled')
      for (const signer of own.filter((candidate) => candidate.status !== 'pending')) expectedMail.add(`cancelled:${request.id}:${signer.email}`);
  }
  const ccEmails = new Set(signers.filter((signer) => signer.recipient_type === 'cc').map((signer) => signer.email));
  const ccMailWithLink = smtp.mails.filter((mail) => ccEmails.has(mail.key.split(':').slice(2).join(':')) && mail.text.includes('/sign/'));
  if (ccMailWithLink.length) problem(`${ccMailWithLink.length} e-mails to a cc carried a signing link, e.g. ${ccMailWithLink[0].key}`);
  const lostMail = [...expectedMail].filter((key) => !smtp.byKey.has(key));
  for (const key of lostMail) problem(`e-mail ${key} never arrived`, true);
  const duplicateMail = [...smtp.byKey.values()].filter((copies) => copies.length > 1);
  for (const copies of duplicateMail)
    if (new Set(copies.map((mail) => mail.messageId)).size > 1) problem(`e-mail ${copies[0].key} arrived ${copies.length} times with different Message-IDs`);
  const unexpectedMail = [...smtp.byKey.keys()].filter((key) => !expectedMail.has(key));

  const ofType = (type: RecipientType) => signers.filter((signer) => signer.recipient_type === type).length;
  const documentCounts = [...documentsOf.values()].map((documents) => documents.length);
  const table: [string, string | number][] = [
    ['signing requests', requests.length],
    ...TERMINAL.map((status): [string, number] => [`  ${status}`, outcomes[status] ?? 0]),
    ['  not finished', requests.filter((request) => !(TERMINAL as readonly string[]).includes(request.status)).length],
    ['  races of the last part against a cancel: completed / cancelled', `${races.completed ?? 0} / ${races.cancelled ?? 0}`],
    ['  of 1 / 2 / 3 documents', [1, 2, 3].map((count) => documentCounts.filter((each) => each === count).length).join(' / ')],
    [
      '  with parallel steps (two or more recipients acting at once in a step)',
      requests.filter((request) => hasParallelStep(signersOf.get(request.id) ?? [])).length,
    ],
    ['documents in requests / sealed files / document.signed events', `${requestDocuments.length} / ${sealedFiles} / ${documentsSigned}`],
    ['recipients: signer / approver / viewer / cc', recipientTypes.map(ofType).join(' / ')],
    [
      'parts recorded: signed / approved / viewed by a viewer / declined by a signer / by an approver',
      `${recorded['signer signed'] ?? 0} / ${recorded['approver approved'] ?? 0} / ${recorded['viewer viewed'] ?? 0} / ${recorded['signer declined'] ?? 0} / ${recorded['approver declined'] ?? 0}`,
    ],
    ['pages opened by signers and approvers (signer.viewed)', (recorded['signer viewed'] ?? 0) + (recorded['approver viewed'] ?? 0)],
    ['parts answered 200 by the api: signed / approved / viewed', `${acknowledged.signed ?? 0} / ${acknowledged.approved ?? 0} / ${acknowledged.viewed ?? 0}`],
    ['events', events.length],
    ['events recorded twice', duplicateEvents.length],
    ['events delivered (2xx at the receiver)', delivered],
    ['events not delivered', events.length - delivered],
    ['events never dispatched', undispatched],
    ['webhook POSTs received (all answers)', receiver.received.length],
    ['  answered 503 by the receiver (retried)', answers.filter((status) => status === 503).length],
    ['  accepted repeats of a delivered event (same webhook-id and body)', repeated],
    ['e-mails expected', expectedMail.size],
    ['e-mails received (SMTP)', smtp.mails.length],
    ['  of them repeats (same idempotency key and Message-ID)', smtp.mails.length - smtp.byKey.size],
    ['  unexpected (no reason in the database)', unexpectedMail.length],
    ['e-mails lost', lostMail.length],
    ['invitations never sent', invitationsMissing],
    ['cc recipients invited or given a link', ccLinked],
  ];
  return { problems, waiting, table };
}

/** Two or more recipients who act (not cc) share a step. */
function hasParallelStep(recipients: { recipient_type: string; routing_order: number }[]) {
  const steps = recipients.filter((recipient) => recipient.recipient_type !== 'cc').map((recipient) => recipient.routing_order);
  return new Set(steps).size < steps.length;
}

// ---------------------------------------------------------------- the run
async function main() {
  const { DATABASE_URL, TEMPORAL_ADDRESS } = servicesEnv();
  if (!DATABASE_URL || !TEMPORAL_ADDRESS)
    throw new Error('needs DATABASE_URL and TEMPORAL_ADDRESS (scripts/services.sh up writes them to .cache/run/services.env)');
  const runId = `${Date.now().toString(36)}${process.pid}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-chaos-'));
  let keepLogs = process.env.CHAOS_KEEP === '1';
  cleanups.push(() => (keepLogs ? log(`logs kept in ${dir}`) : fs.rmSync(dir, { recursive: true, force: true })));
  fs.mkdirSync(path.join(dir, 'tmp'));

  // A database of our own on the same server, dropped at the end.
  const databaseName = `signet_chaos_${runId}`;
  const admin = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${databaseName}`);
  cleanups.push(async () => {
    await admin.raw(`drop database if exists ${databaseName} with (force)`);
    await admin.destroy();
  });
  const databaseUrl = new URL(DATABASE_URL);
  databaseUrl.pathname = `/${databaseName}`;

  const smtp = await startSmtpReceiver();
  cleanups.push(() => smtp.close());
  const answers: number[] = [];
  const receiver = await startReceiver((n) => {
    const status = Math.random() < WEBHOOK_FAILURE_RATE ? 503 : 200;
    answers[n - 1] = status;
    return { status };
  });
  cleanups.push(() => receiver.stop());

  const sealPath = path.join(dir, 'seal.p12');
  fs.writeFileSync(sealPath, await generateSelfSignedP12(), { mode: 0o600 });
  const [apiPort, workerPort] = [await freePort(), await freePort()];
  const taskQueue = `signet-chaos-${runId}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME ?? dir,
    TMPDIR: path.join(dir, 'tmp'), // what a killed worker leaves (its workflow bundle) stays in our directory
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
    DATA_DIR: path.join(dir, 'data'),
    DATABASE_URL: databaseUrl.toString(),
    TEMPORAL_ADDRESS,
    TEMPORAL_TASK_QUEUE: taskQueue,
    SMTP_URL: smtp.url,
    WEBHOOK_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    SIGNING_TOKEN_SECRET: crypto.randomBytes(32).toString('hex'),
    SEAL_P12_PATH: sealPath,
    WEBHOOK_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    WEBHOOK_RETRY_SCALE: '0.001', // retries after milliseconds, not hours
    WEBHOOK_TIMEOUT_MS: '5000',
    RATE_LIMIT_MULTIPLIER: '10',
    LOG_LEVEL: 'warn',
  };
  const { app, code } = snapshotSource(dir);
  const api = new ServiceProcess('api', app, apiPort, env, path.join(dir, 'api.log'));
  const worker = new ServiceProcess('worker', app, workerPort, env, path.join(dir, 'worker.log'));
  const connection = await Connection.connect({ address: TEMPORAL_ADDRESS });
  const temporal = new Client({ connection });
  cleanups.push(() => connection.close());
  cleanups.push(async () => {
    api.stop();
    worker.stop();
    for await (const workflow of temporal.workflow.list({ query: `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"` })) {
      await temporal.workflow
        .getHandle(workflow.workflowId, workflow.runId)
        .terminate('chaos run over')
        .catch(() => undefined);
    }
  });

  log(`database ${databaseName}, task queue ${taskQueue}, logs in ${dir}`);
  api.start(); // the api migrates the empty database first
  await api.waitUntilReady();
  worker.start();
  await worker.waitUntilReady();
  log(`api and worker ready after ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);

  const db = knexFactory({ client: 'pg', connection: databaseUrl.toString(), pool: { min: 0, max: 4 } });
  cleanups.push(() => db.destroy());
  const ownerEmail = `owner-${runId}@chaos.example`;
  const account = await createAccount(db, { email: ownerEmail, plan: 'business' });
  const { secret: apiKey } = await createApiKey(db, account.id);
  const http = httpClient(`http://127.0.0.1:${apiPort}`, apiKey);
  const webhook = await http.call('POST', '/api/v1/webhooks', { url: receiver.url, events: ['*'] });
  if (webhook.status !== 201) throw new Error(`POST /webhooks answered ${webhook.status} ${JSON.stringify(webhook.body)}`);

  // The killers, one per process: kill -9, and a new process at once. A process takes 5–20 s to start
  // on a busy machine, so a share of the kills (CHAOS_KILLS_WHILE_STARTING, every other one by default)
  // comes 0.5–3 s after the start, ready or not (killing it while it starts); the others 0.5–3 s after
  // it became ready, in the middle of its work.
  const totalKills = () => api.kills + worker.kills;
  const killingOver = () => totalKills() >= KILLS || Date.now() > killDeadline;
  const killer = async (service: ServiceProcess) => {
    for (let n = 0; !killingOver(); n++) {
      const duringStart = Math.floor((n + 1) * WHILE_STARTING) > Math.floor(n * WHILE_STARTING);
      if (!duringStart) while (!service.ready && !killingOver()) await sleep(50);
      await sleep(between(...KILL_GAP_MS));
      if (killingOver()) break;
      await service.killAndRestart();
    }
  };
  const killers = Promise.all([killer(api), killer(worker)]);

  const scenarios: Scenario[] = [];
  const pdfs = [await makePdf(['Chaos agreement', 'Page two']), await makePdf(['Chaos annex']), await makePdf(['Chaos schedule', 'Page two', 'Page three'])];
  const driver = createDriver(http, smtp, pdfs, runId);
  const lane = async () => {
    while (!killingOver() && scenarios.length < MAX_REQUESTS) {
      const scenario = planScenario(scenarios.length + 1);
      scenarios.push(scenario);
      try {
        await driver.run(scenario);
        scenario.done = true;
      } catch (error) {
        scenario.error = String(error);
        log(`#${scenario.n} (${scenario.intent}): ${scenario.error}`);
      }
    }
  };
  let findings: Findings | undefined;
  const progress = setInterval(
    () =>
      log(
        `kills ${totalKills()} (api ${api.kills}, worker ${worker.kills}); requests started ${scenarios.length}, driven ${scenarios.filter((s) => s.done).length}; ` +
          `webhook POSTs ${receiver.received.length}; e-mails ${smtp.mails.length}` +
          (findings ? `; settling: ${findings.waiting} things on their way, e.g. ${findings.problems[0] ?? 'none'}` : ''),
      ),
    15_000,
  );
  cleanups.push(() => clearInterval(progress));
  await Promise.all([killers, Promise.all(Array.from({ length: CONCURRENCY }, lane))]);
  const killingEndedAt = Date.now();
  log(`killing over: ${totalKills()} kills; every driven request has had its last action`);

  // Settle: both processes up, until nothing is on its way any more (bounded).
  await Promise.all([api.waitUntilReady(), worker.waitUntilReady()]);
  const inspectNow = () => inspect(db, scenarios, receiver, answers, smtp, webhook.body.secret, ownerEmail);
  findings = await inspectNow();
  const settleDeadline = Date.now() + SETTLE_MS;
  while (findings.waiting > 0 && Date.now() < settleDeadline) {
    await sleep(3000);
    findings = await inspectNow();
  }
  const settledMs = Date.now() - killingEndedAt;
  log("replaying every signing request's history with the workflow code");
  const requestIds: string[] = await db('signing_requests').pluck('id');
  const nondeterministic = await replaySigningRequests(temporal, app, requestIds);
  const workflows = await compareWithWorkflows(temporal, db);

  const rows: [string, string | number][] = [
    ['code run', code],
    ['kill -9 of the worker (of them while it was starting)', `${worker.kills} (${worker.killsWhileStarting})`],
    ['kill -9 of the api (of them while it was starting)', `${api.kills} (${api.killsWhileStarting})`],
    ['start → ready, median: worker / api', `${(median(worker.readyMs) / 1000).toFixed(1)} s / ${(median(api.readyMs) / 1000).toFixed(1)} s`],
    ['processes that exited by themselves', api.unexpectedExits.length + worker.unexpectedExits.length],
    [
      'requests driven (intent: complete / decline / cancel / race / expire)',
      ['complete', 'decline', 'cancel', 'race', 'expire'].map((intent) => scenarios.filter((s) => s.intent === intent).length).join(' / '),
    ],
    [
      '  ordered by: routingOrder steps / signingOrder parallel / sequential',
      ['routed', 'parallel', 'sequential'].map((routing) => scenarios.filter((s) => s.routing === routing).length).join(' / '),
    ],
    ['  driver gave up (time up or unexpected answer)', scenarios.filter((s) => s.error).length],
    ...findings.table,
    ['signing request histories replayed / nondeterministic', `${requestIds.length} / ${nondeterministic.length}`],
    ['workflows still running after settling / disagreeing with PostgreSQL', `${workflows.running} / ${workflows.problems.length}`],
    ['calls refused while the api was down (tried again)', refusals],
    [
      'calls sent that got no answer, by why',
      Object.entries(noAnswer)
        .map(([why, count]) => `${why} ${count}`)
        .join('; ') || 0,
    ],
    [
      'ambiguous answers (no answer or 5xx), by call',
      Object.entries(ambiguous)
        .map(([call, count]) => `${call} ${count}`)
        .join('; ') || 0,
    ],
    [
      '  retries that found the first call had worked',
      Object.entries(resolvedAsDone)
        .map(([call, count]) => `${call} ${count}`)
        .join('; ') || 0,
    ],
    [
      '409 while the request was pending and the call had not taken effect (tried again)',
      Object.entries(conflictsWhilePending)
        .map(([call, count]) => `${call} ${count}`)
        .join('; ') || 0,
    ],
    ['signing pages opened before acting (GET /sign/:token/request)', counters.viewsSent],
    ['invitations later than 150 s (signed through a fresh link)', counters.invitationsLate],
    ['requests created twice by a retry', counters.duplicateCreates],
    [
      'time: whole run / killing / settling',
      `${((Date.now() - startedAt) / 1000).toFixed(0)} s / ${((killingEndedAt - startedAt) / 1000).toFixed(0)} s / ${(settledMs / 1000).toFixed(0)} s`,
    ],
  ];
  console.log('\n| chaos run | count |\n|---|---:|');
  for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);

  const failures = [...findings.problems, ...workflows.problems, ...nondeterministic, ...api.unexpectedExits, ...worker.unexpectedExits];
  if (totalKills() < KILLS) console.log(`\nWarning: only ${totalKills()} kills of the ${KILLS} asked for within CHAOS_KILL_MINUTES.`);
  if (counters.duplicateCreates) failures.push(`${counters.duplicateCreates} requests were created twice`);
  if (failures.length) {
    keepLogs = true;
    await writePostMortem(dir, db, scenarios);
    console.log(
      `\n${failures.length} problems:\n${failures
        .slice(0, 60)
        .map((text) => `  - ${text}`)
        .join('\n')}${failures.length > 60 ? '\n  …' : ''}`,
    );
    if (workflows.standing.length) console.log(`\nWorkflows still running, where they stand:\n${workflows.standing.map((text) => `  - ${text}`).join('\n')}`);
    process.exitCode = 1;
  } else {
    console.log('\nNo loss, no duplicate event, every request ended one way.');
  }
}

/** Replays every signing request's history with the workflow code: a nondeterminism shows here even before it leaves a workflow stuck. */
async function replaySigningRequests(temporal: Client, app: string, ids: string[]) {
  Runtime.install({ logger: new DefaultLogger('WARN') }); // the replay worker's comings and goings are noise here
  const histories = (async function* () {
    for (const workflowId of ids) yield { workflowId, history: await temporal.workflow.getHandle(workflowId).fetchHistory() };
  })();
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories({ workflowsPath: path.join(app, 'workflows/index.ts') }, histories)) {
    if (result.error) failures.push(`${result.workflowId} does not replay: ${result.error.message.replace(/\s+/g, ' ').slice(0, 400)}`);
  }
  return failures;
}

/**
 * Asks every workflow still running for its state and compares it with PostgreSQL: a transition the
 * database holds but the workflow never recorded is an update lost with its worker. Says where each
 * one stands (its progress), so that a request on its way (a seal retry waiting) reads apart from one stuck.
 */
async function compareWithWorkflows(temporal: Client, db: Knex) {
  const problems: string[] = [];
  const standing: string[] = [];
  let running = 0;
  const requests: { id: string; status: string }[] = await db('signing_requests').select('id', 'status');
  const signers: { id: string; signing_request_id: string; recipient_type: RecipientType; status: SignerStatus }[] = await db('signers').select(
    'id',
    'signing_request_id',
    'recipient_type',
    'status',
  );
  for (const request of requests) {
    const handle = temporal.workflow.getHandle(request.id);
    const description = await handle.describe().catch(() => undefined);
    if (description?.status.name !== 'RUNNING') continue;
    running++;
    let state: SigningRequestState;
    try {
      state = await temporal.connection.withDeadline(Date.now() + 5000, () => handle.query(stateQuery));
    } catch (error) {
      problems.push(`${request.id} (${request.status}): its workflow runs but answers no query: ${String(error).slice(0, 200)}`);
      continue;
    }
    if (state.status !== request.status) problems.push(`${request.id} is ${request.status} in PostgreSQL, ${state.status} in its workflow`);
    const progress = await temporal.connection.withDeadline(Date.now() + 5000, () => handle.query(progressQuery)).catch(() => undefined);
    standing.push(`${request.id}: ${progress ? JSON.stringify(progress) : 'no progress answered'}`);
    for (const signer of signers.filter((candidate) => candidate.signing_request_id === request.id)) {
      const known = state.signers.find((candidate) => candidate.id === signer.id)?.status;
      if ((hasDonePart(signer.recipient_type, signer.status) || signer.status === 'declined') && known !== signer.status) {
        problems.push(`${signer.id} is ${signer.status} in PostgreSQL, ${known} in the workflow of ${request.id}: an update lost with its worker`);
      }
    }
  }
  return { running, problems, standing };
}

/** What a failed run leaves beside the logs: the database's rows and every call the driver made. */
async function writePostMortem(dir: string, db: Knex, scenarios: Scenario[]) {
  const database = {
    signing_requests: await db('signing_requests').select(
      'id',
      'status',
      'signing_order',
      'document_id',
      'created_at',
      'workflow_started_at',
      'completed_at',
      'sealed_sha256',
    ),
    signers: await db('signers').select(
      'id',
      'signing_request_id',
      'email',
      'order',
      'recipient_type',
      'routing_order',
      'status',
      'notified_at',
      'viewed_at',
      'signed_at',
      'approved_at',
      'declined_at',
    ),
    signing_request_documents: await db('signing_request_documents').select('signing_request_id', 'position', 'document_id', 'sealed_sha256'),
    sealed_documents: await db('sealed_documents').select('signing_request_id', 'document_id', 'sha256'),
    audit_trail: await db('audit_trail').select('signing_request_id', 'signer_id', 'action', 'idempotency_key', 'created_at').orderBy('id'),
    events: await db('events').select('id', 'type', 'data', 'created_at', 'dispatched_at', 'idempotency_key').orderBy('created_at'),
    webhook_deliveries: await db('webhook_deliveries').select('event_id', 'event_type', 'status', 'attempts', 'last_status_code', 'last_error'),
  };
  fs.writeFileSync(path.join(dir, 'database.json'), JSON.stringify(database, null, 1));
  const calls = scenarios.map((scenario) => ({
    ...scenario,
    acknowledged: { ...scenario.acknowledged, parts: Object.fromEntries(scenario.acknowledged.parts) },
    freshLinks: [...scenario.freshLinks],
  }));
  fs.writeFileSync(path.join(dir, 'scenarios.json'), JSON.stringify(calls, null, 1));
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => cleanUp())
  // The Temporal SDK's native runtime (installed for the replay worker) outlives its last connection.
  .finally(() => process.exit());
