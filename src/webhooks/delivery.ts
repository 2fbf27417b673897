import type { Config } from '../config';
import type { Db } from '../db';
import { newId } from '../ids';
import { mailSender, type MailTransport } from '../mail';
import { webhookDisabledMail } from '../mail/templates';
import { TEST_EVENT_TYPE } from './schema';
import { envelopeText, WAKE_WINDOW_MS } from './queue';
import { decryptSecret } from './secrets';
import { getBacklog } from './service';
import {
  cancelQueuedDeliveries,
  findBatchWebhook,
  findDeliveryToAttempt,
  findDueDeliveries,
  findWebhookWithOwner,
  insertUnqueuedDelivery,
  markWebhookDisabled,
  recordAttempts,
  recordStreak,
  type BatchWebhook,
  type DueDelivery,
  type RecordedAttempt,
  type WebhookRow,
} from './store';
import { signatureHeaders } from './signature';
import type { WebhookPoster } from './http';
import type { AttemptOutcome } from '../domain/webhooks';

// Webhook deliveries are rows queued per endpoint (webhook_deliveries, due at next_retry_at). Each
// endpoint's workflow sends its due rows in batches; every attempt is recorded before the next is due.

export interface DeliveryDeps {
  db: Db;
  secretKey: Buffer;
  poster: WebhookPoster;
}

export type { AttemptOutcome };

/** A Retry-After longer than this is not believed: the schedule never waits more than a day. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * A webhook.test ping, sent now: a delivery of its own, with an event id that is in no events table and
 * no due time (the webhook's queue never sends it). Returns the delivery's id.
 */
export async function sendTestPing(deps: DeliveryDeps, webhookId: string): Promise<string> {
  const id = newId('event');
  const body = envelopeText({ id, type: TEST_EVENT_TYPE, created_at: new Date(), data: { webhookId, message: 'Signet test ping' } });
  const pingId = await insertUnqueuedDelivery(deps.db, { webhook_id: webhookId, event_id: id, event_type: TEST_EVENT_TYPE, body });
  await attemptDelivery(deps, pingId);
  return pingId;
}

/** The current secret, then the previous one while its rotation grace period lasts. */
function signingSecrets(webhook: Pick<WebhookRow, 'secret_ciphertext' | 'previous_secret_ciphertext' | 'previous_secret_expires_at'>, key: Buffer) {
  const secrets = [decryptSecret(key, webhook.secret_ciphertext)];
  if (webhook.previous_secret_ciphertext && webhook.previous_secret_expires_at && webhook.previous_secret_expires_at.getTime() > Date.now()) {
    secrets.push(decryptSecret(key, webhook.previous_secret_ciphertext));
  }
  return secrets;
}

/** ±10%, so that deliveries failing together do not all come back at the same moment. */
const jittered = (delayMs: number) => Math.round(delayMs * (0.9 + Math.random() * 0.2));

/** The wait after attempt number `attempt` (1, 2, …) of `waits` (before attempt 1, 2, …), or null after the last. */
export const waitAfterAttempt = (attempt: number, waits: number[]) => (attempt < waits.length ? jittered(waits[attempt]) : null);

/** One attempt, sent and not yet recorded. */
interface Attempt extends RecordedAttempt {
  /** What went wrong, for the workflow's status: the transport error or the HTTP status. */
  error: string | null;
  outcome: AttemptOutcome;
}

/**
 * POSTs a delivery's stored body, signed, and decides the delivery's next state. `nextDelayMs` is the
 * wait before the next attempt, or null when none follows.
 */
async function send(
  { poster }: DeliveryDeps,
  url: string,
  secrets: string[],
  row: DueDelivery,
  nextDelayMs: number | null,
  keepPending = false,
): Promise<Attempt> {
  const result = await poster.post(url, row.body, signatureHeaders(secrets, row.event_id, row.body));
  const code = result.statusCode;
  const delivered = code !== null && code >= 200 && code < 300;
  const gone = code === 410;
  const retryInMs = delivered || gone || nextDelayMs === null ? null : Math.max(nextDelayMs, Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  return {
    id: row.id,
    status: delivered ? 'succeeded' : retryInMs !== null || keepPending ? 'pending' : 'failed',
    code,
    latencyMs: result.latencyMs,
    responseBody: result.responseBody,
    transportError: result.error,
    error: delivered ? null : (result.error ?? `HTTP ${code}`),
    nextRetryAt: retryInMs !== null ? new Date(Date.now() + retryInMs) : keepPending && !delivered ? row.next_retry_at : null,
    outcome: delivered ? 'delivered' : gone ? 'gone' : retryInMs !== null ? 'retry' : 'failed',
  };
}

/** What one batch of a webhook's queue did, and what is left. Null when the webhook no longer exists. */
export interface BatchResult {
  health: 'healthy' | 'failing' | 'disabled';
  attempted: number;
  /** The endpoint answered 410 Gone: the webhook is to be disabled. */
  gone: boolean;
  /** How long the webhook has failed without a single success, when it is failing. */
  failingForMs: number | null;
  lastError: string | null;
  backlog: number;
  oldestPendingAt: string | null;
  /** When the next pending delivery is due: 0 when some already are, null when none is pending. */
  nextDueInMs: number | null;
}

/** While deliveries keep coming due, one batch goes on sending them, for this long at most. */
const BATCH_MS = 10_000;
/** How often a batch looks for more while fewer than a group are due. */
const POLL_MS = 25;

/**
 * Sends the due deliveries of one webhook, `concurrency` at once, each retried on `retryScheduleMs` (the
 * wait before attempt 1, 2, …; Retry-After when longer). Goes on while more come due, up to `limit`
 * deliveries or BATCH_MS, and ends once none has been due for WAKE_WINDOW_MS: the dispatcher wakes a
 * queue at most once a window, so the events of a window are picked up here, and a burst is one batch.
 * Safe to repeat: every attempt is recorded before its delivery can be sent again, so a repeat sends only
 * what was not recorded (again, with the same webhook-id). A disabled webhook's pending deliveries are
 * cancelled. `heartbeat` is called as it goes.
 *
 * Each statement may wait its turn behind other transactions (on the embedded database, behind every
 * open one: PGlite has one session), so a round of a burst waits once, not once per group: a group's
 * attempts are recorded while the next group is sent, and the next round's due deliveries (but those
 * not recorded yet) are read while the last group's are recorded, beside the webhook.
 */
export async function sendDueDeliveries(
  deps: DeliveryDeps,
  input: { webhookId: string; retryScheduleMs: number[]; concurrency: number; limit: number },
  onOutcome: (outcome: AttemptOutcome) => void = () => undefined,
  heartbeat: () => void = () => undefined,
): Promise<BatchResult | null> {
  const { db, secretKey } = deps;
  const readWebhook = () => findBatchWebhook(db, input.webhookId);
  let webhook = await readWebhook();
  if (!webhook) return null;
  let attempted = 0;
  let gone = false;
  let lastError: string | null = null;
  if (!webhook.enabled) {
    await cancelQueuedDeliveries(db, webhook.id);
  } else {
    const results: Attempt[] = [];
    // Attempts sent and being recorded, each group in one statement; at most a round's are under way.
    const recording = new Set<string>();
    const records: Promise<void>[] = [];
    let recordFailure: { error: unknown } | null = null;
    const recordGroup = (group: Attempt[]) => {
      for (const attempt of group) recording.add(attempt.id);
      records.push(
        recordAttempts(db, group).then(
          () => {
            for (const attempt of group) {
              recording.delete(attempt.id);
              onOutcome(attempt.outcome);
            }
          },
          (error) => void (recordFailure ??= { error }),
        ),
      );
    };
    const recorded = async () => {
      await Promise.all(records.splice(0));
      if (recordFailure) throw recordFailure.error;
    };
    const started = Date.now();
    let lastDue = started;
    let inBurst = false;
    try {
      while (!gone && results.length < input.limit && Date.now() - started < BATCH_MS) {
        // In a burst (the last round found some due), the webhook is read beside the due deliveries.
        const reading: Promise<BatchWebhook | undefined> | null = inBurst ? readWebhook() : null;
        const [due]: [DueDelivery[], unknown] = await Promise.all([
          findDueDeliveries(db, webhook.id, Math.min(input.concurrency * 4, input.limit - results.length), [...recording]),
          reading,
        ]);
        await recorded(); // the last round's, before anything more is sent
        inBurst = due.length > 0;
        if (due.length > 0 && results.length > 0) {
          // A batch outlives edits to its webhook: each round sends to the URL, with the secrets, of now.
          webhook = await (reading ?? readWebhook());
          if (!webhook) return null; // deleted, and its deliveries with it
          if (!webhook.enabled) break; // the next batch cancels what is left
        }
        if (due.length === 0) {
          if (Date.now() - lastDue >= WAKE_WINDOW_MS) break;
        } else {
          const { url } = webhook;
          const secrets = signingSecrets(webhook, secretKey);
          // `concurrency` at a time, each group recorded (in one statement) while the next is sent.
          for (let i = 0; i < due.length && !gone; i += input.concurrency) {
            const group = await Promise.all(
              due.slice(i, i + input.concurrency).map((row) => send(deps, url, secrets, row, waitAfterAttempt(row.attempts + 1, input.retryScheduleMs))),
            );
            recordGroup(group);
            results.push(...group);
            gone = group.some((result) => result.outcome === 'gone');
            lastDue = Date.now();
          }
        }
        heartbeat();
        if (due.length < input.concurrency) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } finally {
      await Promise.all(records); // nothing left running on a way out by an error
    }
    await recorded();
    attempted = results.length;
    lastError = results.reduce<string | null>((last, result) => result.error ?? last, null);
    // One streak per batch: any success ends it, failures alone start it.
    const anyDelivered = results.some((result) => result.outcome === 'delivered');
    if (results.length > 0 && (anyDelivered ? webhook.failing_since !== null : webhook.failing_since === null)) {
      webhook.failing_since = await recordStreak(db, webhook.id, anyDelivered);
    }
  }
  const { backlog, oldestPendingAt, nextDueInMs } = await getBacklog(db, webhook.id);
  return {
    health: !webhook.enabled ? 'disabled' : webhook.failing_since ? 'failing' : 'healthy',
    attempted,
    gone,
    failingForMs: webhook.failing_since ? Date.now() - new Date(webhook.failing_since).getTime() : null,
    lastError,
    backlog,
    oldestPendingAt: oldestPendingAt?.toISOString() ?? null,
    nextDueInMs,
  };
}

/**
 * A test ping or a redelivery: one attempt now, whatever the delivery's state, recorded like any other.
 * A delivery its queue is still retrying stays pending when this attempt fails too.
 */
export async function attemptDelivery(deps: DeliveryDeps, deliveryId: string) {
  const { db, secretKey } = deps;
  const row = await findDeliveryToAttempt(db, deliveryId);
  if (!row) return;
  const queued = row.status === 'pending' && row.event_type !== TEST_EVENT_TYPE;
  const attempt = await send(deps, row.url, signingSecrets(row, secretKey), row, null, queued);
  await recordAttempts(db, [attempt]);
  // A ping says nothing about real deliveries.
  if (row.event_type !== TEST_EVENT_TYPE) await recordStreak(db, row.webhook_id, attempt.outcome === 'delivered');
}

/**
 * Disables a webhook that answered 410 or kept failing, and e-mails its owner once. Safe to repeat:
 * the e-mail is keyed by the moment it was disabled.
 */
export async function disableWebhook(
  { db, mail, config }: { db: Db; mail: MailTransport; config: Pick<Config, 'MAIL_FROM'> },
  webhookId: string,
  reason: 'gone' | 'failing',
) {
  await markWebhookDisabled(db, webhookId, reason);
  const webhook = await findWebhookWithOwner(db, webhookId);
  if (!webhook || webhook.enabled || webhook.disabled_reason !== reason || !webhook.disabled_at) return;
  await mail.send({
    idempotencyKey: `webhook-disabled:${webhookId}:${webhook.disabled_at.toISOString()}`,
    to: webhook.owner_email,
    toName: webhook.owner_name ?? undefined,
    ...mailSender(config),
    ...webhookDisabledMail({ url: webhook.url, reason, webhookId }),
  });
}
