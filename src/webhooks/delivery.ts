import { planNames, plans } from '../accounts/plans';
import type { Knex } from 'knex';
import type { Config } from '../config';
import type { Db } from '../db';
import { newId } from '../ids';
import { mailSender, type MailTransport } from '../mail';
import { webhookDisabledMail } from '../mail/templates';
import { TEST_EVENT_TYPE } from './schema';
import { decryptSecret } from './secrets';
import type { DeliveryRow, WebhookRow } from './service';
import { signatureHeaders } from './signature';
import type { WebhookPoster } from './http';

// Delivering one event to one webhook, attempt by attempt. The workflow decides when to attempt and
// when to give up; these functions make one attempt and record it before the next is scheduled.

export interface DeliveryDeps {
  db: Db;
  secretKey: Buffer;
  poster: WebhookPoster;
}

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'gone' | 'stopped';

export interface AttemptResult {
  outcome: AttemptOutcome;
  /** When the next attempt is due (retry): the schedule's delay, or Retry-After when longer. */
  retryInMs: number | null;
  /** How long the webhook has failed without a single success, when it is failing. */
  failingForMs: number | null;
}

/** A Retry-After longer than this is not believed: the schedule never waits more than a day. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/** The envelope of spec §6, as the exact text that is sent and signed. */
export const envelopeText = (event: { id: string; type: string; created_at: Date; data: unknown }) =>
  JSON.stringify({ id: event.id, type: event.type, timestamp: event.created_at.toISOString(), data: event.data });

const plansWithWebhooks = planNames.filter((plan) => plans[plan].webhooks);

/**
 * Joins a query on events (as e) to the webhooks (as w) that receive them: enabled, subscribed to the
 * type or to *, of an account on a plan with webhooks (they stay with an account that leaves the
 * Business plan, but receive nothing until it returns).
 */
export function joinSubscribers(events: Knex.QueryBuilder) {
  return events
    .join('webhooks as w', 'w.account_id', 'e.account_id')
    .join('accounts as a', 'a.id', 'e.account_id')
    .where('w.enabled', true)
    .whereIn('a.plan', plansWithWebhooks)
    .whereRaw(`w.events && array[e.type, '*']`);
}

/**
 * The deliveries of one event: one per enabled webhook of the event's account that subscribes to its
 * type (or to *). Safe to repeat: a delivery is unique per (webhook, event). Returns those still pending.
 */
export async function prepareDeliveries(db: Db, eventId: string) {
  const event = await db('events').where({ id: eventId }).first();
  if (!event) return [];
  const webhooks: { id: string }[] = await joinSubscribers(db('events as e').where('e.id', eventId)).select('w.id');
  if (webhooks.length > 0) {
    const body = envelopeText(event);
    await db('webhook_deliveries')
      .insert(webhooks.map((webhook) => ({ id: newId('delivery'), webhook_id: webhook.id, event_id: event.id, event_type: event.type, body })))
      .onConflict(['webhook_id', 'event_id'])
      .ignore();
  }
  const pending: { id: string; webhook_id: string }[] = await db('webhook_deliveries').where({ event_id: eventId, status: 'pending' }).select('id', 'webhook_id');
  return pending.map((delivery) => ({ deliveryId: delivery.id, webhookId: delivery.webhook_id }));
}

/** A webhook.test ping: a delivery of its own, with an event id that is in no events table. */
export async function createTestDelivery(db: Db, webhookId: string): Promise<DeliveryRow> {
  const id = newId('event');
  const body = JSON.stringify({ id, type: TEST_EVENT_TYPE, timestamp: new Date().toISOString(), data: { webhookId, message: 'Signet test ping' } });
  const [delivery] = await db<DeliveryRow>('webhook_deliveries')
    .insert({ id: newId('delivery'), webhook_id: webhookId, event_id: id, event_type: TEST_EVENT_TYPE, body })
    .returning('*');
  return delivery;
}

/** The current secret, then the previous one while its rotation grace period lasts. */
function signingSecrets(webhook: Pick<WebhookRow, 'secret_ciphertext' | 'previous_secret_ciphertext' | 'previous_secret_expires_at'>, key: Buffer) {
  const secrets = [decryptSecret(key, webhook.secret_ciphertext)];
  if (webhook.previous_secret_ciphertext && webhook.previous_secret_expires_at && webhook.previous_secret_expires_at.getTime() > Date.now()) {
    secrets.push(decryptSecret(key, webhook.previous_secret_ciphertext));
  }
  return secrets;
}

/**
 * One attempt: POST the stored body, signed, and record the attempt and the delivery's new state in one
 * transaction. `nextDelayMs` is the schedule's wait before the next attempt, or null when this is the last.
 * A manual attempt (test ping, redelivery) runs whatever the delivery's state and schedules nothing.
 */
export async function attemptDelivery(
  { db, secretKey, poster }: DeliveryDeps,
  deliveryId: string,
  options: { nextDelayMs: number | null; manual?: boolean },
): Promise<AttemptResult> {
  const stopped: AttemptResult = { outcome: 'stopped', retryInMs: null, failingForMs: null };
  const row = await db('webhook_deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .where('d.id', deliveryId)
    .first('d.*', 'w.url', 'w.enabled', 'w.secret_ciphertext', 'w.previous_secret_ciphertext', 'w.previous_secret_expires_at');
  if (!row) return stopped; // the webhook was deleted, and its deliveries with it
  if (!options.manual && row.status !== 'pending') return stopped; // delivered by a redelivery meanwhile
  if (!options.manual && !row.enabled) {
    await db('webhook_deliveries').where({ id: deliveryId, status: 'pending' }).update({ status: 'cancelled', next_retry_at: null, updated_at: db.fn.now() });
    return stopped;
  }

  const result = await poster.post(row.url, row.body, signatureHeaders(signingSecrets(row, secretKey), row.event_id, row.body));
  const code = result.statusCode;
  const delivered = code !== null && code >= 200 && code < 300;
  const gone = code === 410;
  const retryInMs =
    delivered || gone || options.nextDelayMs === null ? null : Math.max(options.nextDelayMs, Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  // A failed redelivery leaves a delivery that its workflow is still retrying as it was; a ping has no workflow.
  const stillRetrying = options.manual && row.status === 'pending' && row.event_type !== TEST_EVENT_TYPE && !delivered;
  const status = delivered ? 'succeeded' : retryInMs !== null || stillRetrying ? 'pending' : 'failed';
  const nextRetryAt = retryInMs !== null ? new Date(Date.now() + retryInMs) : stillRetrying ? row.next_retry_at : null;

  const failingSince = await db.transaction(async (trx) => {
    const [{ attempts }] = await trx('webhook_deliveries')
      .where({ id: deliveryId })
      .update({
        attempts: trx.raw('attempts + 1'),
        status,
        last_status_code: code,
        last_latency_ms: result.latencyMs,
        last_response_body: result.responseBody,
        last_error: result.error,
        next_retry_at: nextRetryAt,
        updated_at: trx.fn.now(),
      })
      .returning('attempts');
    await trx('webhook_delivery_attempts').insert({
      delivery_id: deliveryId,
      attempt: attempts,
      status_code: code,
      latency_ms: result.latencyMs,
      response_body: result.responseBody,
      error: result.error,
    });
    if (row.event_type === TEST_EVENT_TYPE) return null; // a ping says nothing about real deliveries
    const [webhook] = await trx('webhooks')
      .where({ id: row.webhook_id })
      .update({ failing_since: delivered ? null : trx.raw('coalesce(failing_since, now())') })
      .returning('failing_since');
    return (webhook?.failing_since as Date | null) ?? null;
  });

  const outcome: AttemptOutcome = delivered ? 'delivered' : gone ? 'gone' : retryInMs !== null ? 'retry' : 'failed';
  return { outcome, retryInMs, failingForMs: failingSince ? Date.now() - failingSince.getTime() : null };
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
  await db('webhooks')
    .where({ id: webhookId, enabled: true })
    .update({ enabled: false, disabled_reason: reason, disabled_at: db.fn.now(), updated_at: db.fn.now() });
  const webhook = await db('webhooks as w').join('accounts as a', 'a.id', 'w.account_id').where('w.id', webhookId).first('w.*', 'a.email as owner_email', 'a.name as owner_name');
  if (!webhook || webhook.enabled || webhook.disabled_reason !== reason || !webhook.disabled_at) return;
  await mail.send({
    idempotencyKey: `webhook-disabled:${webhookId}:${webhook.disabled_at.toISOString()}`,
    to: webhook.owner_email,
    toName: webhook.owner_name ?? undefined,
    ...mailSender(config),
    ...webhookDisabledMail({ url: webhook.url, reason, webhookId }),
  });
}
