import { planNames, plans } from '../domain/plans';
import { queryPrepared, type Db } from '../db';
import { newId, nthIdSql } from '../ids';
import type { DeliveryListQuery, WebhookListQuery } from './schema';

// The queries of webhooks, webhook_deliveries and webhook_delivery_attempts. Each takes a Db, which may
// be the caller's transaction.

export interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: 'gone' | 'failing' | null;
  disabled_at: Date | null;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  body: string;
  status: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  attempts: number;
  last_status_code: number | null;
  last_latency_ms: number | null;
  last_response_body: string | null;
  last_error: string | null;
  next_retry_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  response_body: string | null;
  error: string | null;
  created_at: Date;
}

/** A webhook whose queue has work. */
export interface QueuedWebhook {
  webhookId: string;
  accountId: string;
}

// Webhooks

export async function insertWebhook(db: Db, webhook: Partial<WebhookRow> & Pick<WebhookRow, 'id' | 'account_id' | 'url'>): Promise<WebhookRow> {
  const [inserted] = await db<WebhookRow>('webhooks').insert(webhook).returning('*');
  return inserted;
}

export const findWebhook = (db: Db, accountId: string, id: string): Promise<WebhookRow | undefined> =>
  db<WebhookRow>('webhooks').where({ id, account_id: accountId }).first();

export function listWebhookRows(db: Db, accountId: string, query: WebhookListQuery): Promise<WebhookRow[]> {
  return db('webhooks')
    .where({ account_id: accountId })
    .modify((builder) => {
      if (query.cursor) builder.where('id', '<', query.cursor);
    })
    .orderBy('id', 'desc')
    .limit(query.limit + 1);
}

/** Changes a webhook of the account; undefined when there is none. */
export async function updateWebhookRow(db: Db, accountId: string, id: string, changes: Record<string, unknown>): Promise<WebhookRow | undefined> {
  const [webhook]: WebhookRow[] = await db('webhooks').where({ id, account_id: accountId }).update(changes).returning('*');
  return webhook;
}

/** Deletes a webhook of the account (its deliveries with it); false when there is none. */
export const deleteWebhookRow = async (db: Db, accountId: string, id: string) => (await db('webhooks').where({ id, account_id: accountId }).delete()) > 0;

/** Of a batch, what it sends with. Its columns are named: a prepared statement must not change shape under a migration. */
export type BatchWebhook = Pick<
  WebhookRow,
  'id' | 'url' | 'enabled' | 'failing_since' | 'secret_ciphertext' | 'previous_secret_ciphertext' | 'previous_secret_expires_at'
>;
const batchWebhookSql = `select id, url, enabled, failing_since, secret_ciphertext, previous_secret_ciphertext, previous_secret_expires_at from webhooks where id = $1`;

/** Prepared: a batch to a busy endpoint reads its webhook again every round. */
export const findBatchWebhook = async (db: Db, webhookId: string): Promise<BatchWebhook | undefined> =>
  (await queryPrepared<BatchWebhook>(db, 'batch_webhook', batchWebhookSql, [webhookId]))[0];

/** Ends the webhook's failing streak on a success, or starts it on a failure; returns when it began. */
export async function recordStreak(db: Db, webhookId: string, delivered: boolean): Promise<Date | null> {
  const [webhook] = await db('webhooks')
    .where({ id: webhookId })
    .update({ failing_since: delivered ? null : db.raw('coalesce(failing_since, now())') })
    .returning('failing_since');
  return webhook?.failing_since ?? null;
}

/** Disables the webhook if it is enabled, for `reason`. */
export async function markWebhookDisabled(db: Db, webhookId: string, reason: 'gone' | 'failing') {
  await db('webhooks')
    .where({ id: webhookId, enabled: true })
    .update({ enabled: false, disabled_reason: reason, disabled_at: db.fn.now(), updated_at: db.fn.now() });
}

/** A webhook with its owner's e-mail and name. */
export const findWebhookWithOwner = (db: Db, webhookId: string): Promise<(WebhookRow & { owner_email: string; owner_name: string | null }) | undefined> =>
  db('webhooks as w').join('accounts as a', 'a.id', 'w.account_id').where('w.id', webhookId).first('w.*', 'a.email as owner_email', 'a.name as owner_name');

/** Up to `limit` webhooks with a delivery pending since before `before`. */
export const findStalledWebhooks = (db: Db, before: Date, limit: number): Promise<QueuedWebhook[]> =>
  db('webhooks as w')
    .whereExists(db('webhook_deliveries as d').whereRaw('d.webhook_id = w.id').where('d.status', 'pending').where('d.next_retry_at', '<', before))
    .limit(limit)
    .select('w.id as webhookId', 'w.account_id as accountId');

// Queueing

const plansWithWebhooks = planNames.filter((plan) => plans[plan].webhooks);

/**
 * SQL for a where clause on webhooks (as w): those that receive an event of `account` and `type` (two SQL
 * expressions): enabled, subscribed to the type or to *, of an account on a plan with webhooks (they
 * stay with an account that leaves the Business plan, but receive nothing until it returns).
 */
const subscribersOf = (account: string, type: string) =>
  `w.account_id = ${account} and w.enabled and w.events && array[${type}, '*']
   and exists (select 1 from accounts a where a.id = w.account_id and a.plan in (${plansWithWebhooks.map((plan) => `'${plan}'`).join(', ')}))`;

const queueEventSql = `
  insert into webhook_deliveries (id, webhook_id, event_id, event_type, body, next_retry_at)
  select ${nthIdSql('$1', 's.n')}, s.id, $2, $4, $5, now()
  from (select w.id, row_number() over (order by w.id) - 1 as n from webhooks w where ${subscribersOf('$3', '$4')}) s
  returning webhook_id`;

/**
 * Queues an event's delivery, due now, to each webhook subscribed to it; returns their ids. One prepared
 * statement for every event; the deliveries' ids are made from one (`firstId`), however many webhooks subscribe.
 */
export async function insertEventDeliveries(trx: Db, event: { firstId: string; id: string; accountId: string; type: string; body: string }) {
  const queued = await queryPrepared<{ webhook_id: string }>(trx, 'queue_event_deliveries', queueEventSql, [
    event.firstId,
    event.id,
    event.accountId,
    event.type,
    event.body,
  ]);
  return queued.map((row) => row.webhook_id);
}

/** An event recorded earlier, with each webhook subscribed to it. */
export type SubscribedEvent = QueuedWebhook & { id: string; type: string; created_at: Date; data: unknown };

export async function findSubscribersOfEvents(trx: Db, eventIds: string[]): Promise<SubscribedEvent[]> {
  const { rows }: { rows: SubscribedEvent[] } = await trx.raw(
    `select w.id as "webhookId", w.account_id as "accountId", e.id, e.type, e.created_at, e.data
     from events e join webhooks w on ${subscribersOf('e.account_id', 'e.type')} where e.id = any(?)`,
    [eventIds],
  );
  return rows;
}

/** Queues deliveries, due now; a (webhook, event) already queued is left as it is. */
export async function insertDeliveryRows(trx: Db, deliveries: Pick<DeliveryRow, 'webhook_id' | 'event_id' | 'event_type' | 'body'>[]) {
  await trx('webhook_deliveries')
    .insert(deliveries.map((delivery) => ({ id: newId('delivery'), ...delivery, next_retry_at: trx.fn.now() })))
    .onConflict(['webhook_id', 'event_id'])
    .ignore();
}

/** A test ping's delivery: no due time, so its webhook's queue never sends it. Returns its id. */
export async function insertUnqueuedDelivery(db: Db, delivery: Pick<DeliveryRow, 'webhook_id' | 'event_id' | 'event_type' | 'body'>): Promise<string> {
  const [inserted] = await db<DeliveryRow>('webhook_deliveries')
    .insert({ id: newId('delivery'), ...delivery })
    .returning('id');
  return inserted.id;
}

// Legacy per-event workflows (legacy.ts)

export const hasDeliveriesOfEvent = async (trx: Db, eventId: string) => Boolean(await trx('webhook_deliveries').where({ event_id: eventId }).first('id'));

/** Makes due now the event's pending deliveries that have no due time (an attempt was in flight). */
export async function makeDeliveriesOfEventDue(trx: Db, eventId: string) {
  await trx('webhook_deliveries').where({ event_id: eventId, status: 'pending' }).whereNull('next_retry_at').update({ next_retry_at: trx.fn.now() });
}

/** The webhooks with a pending delivery of the event. */
export const findWebhooksPendingEvent = (trx: Db, eventId: string): Promise<QueuedWebhook[]> =>
  trx('webhook_deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .where({ 'd.event_id': eventId, 'd.status': 'pending' })
    .select<QueuedWebhook[]>('w.id as webhookId', 'w.account_id as accountId');

// Sending

/** What an attempt needs of its delivery. */
export type DueDelivery = Pick<DeliveryRow, 'id' | 'event_id' | 'body' | 'attempts' | 'next_retry_at'>;

// Due deliveries but those in $3: sent, their attempts still being recorded.
const dueDeliveriesSql = `select id, event_id, body, attempts, next_retry_at from webhook_deliveries
  where webhook_id = $1 and status = 'pending' and next_retry_at <= now() and id <> all($3::text[]) order by next_retry_at, id limit $2`;

/** Up to `limit` due deliveries of the webhook, soonest first, but those of `except`. */
export const findDueDeliveries = (db: Db, webhookId: string, limit: number, except: string[]) =>
  queryPrepared<DueDelivery>(db, 'due_deliveries_not_recording', dueDeliveriesSql, [webhookId, limit, except]);

/** Cancels the webhook's deliveries waiting in its queue. */
export async function cancelQueuedDeliveries(db: Db, webhookId: string) {
  await db('webhook_deliveries')
    .where({ webhook_id: webhookId, status: 'pending' })
    .whereNotNull('next_retry_at')
    .update({ status: 'cancelled', next_retry_at: null, updated_at: db.fn.now() });
}

/** A delivery with what its webhook signs and sends it with. */
export type DeliveryToAttempt = DeliveryRow & Pick<WebhookRow, 'url' | 'secret_ciphertext' | 'previous_secret_ciphertext' | 'previous_secret_expires_at'>;

export const findDeliveryToAttempt = (db: Db, deliveryId: string): Promise<DeliveryToAttempt | undefined> =>
  db('webhook_deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .where('d.id', deliveryId)
    .first('d.*', 'w.url', 'w.secret_ciphertext', 'w.previous_secret_ciphertext', 'w.previous_secret_expires_at');

/** One attempt and its delivery's new state. */
export interface RecordedAttempt {
  id: string;
  status: DeliveryRow['status'];
  code: number | null;
  latencyMs: number;
  responseBody: string | null;
  /** Why no response came (timeout, refused, blocked); null when one did. */
  transportError: string | null;
  nextRetryAt: Date | null;
}

const recordAttemptsSql = `
  with input as (
    select * from unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[], $7::timestamptz[])
      as i (id, status, code, latency, body, error, next_retry_at)),
  updated as (
    update webhook_deliveries d set attempts = d.attempts + 1, status = i.status, last_status_code = i.code, last_latency_ms = i.latency,
      last_response_body = i.body, last_error = i.error, next_retry_at = i.next_retry_at, updated_at = now()
    from input i where d.id = i.id returning d.id, d.attempts)
  insert into webhook_delivery_attempts (delivery_id, attempt, status_code, latency_ms, response_body, error)
  select u.id, u.attempts, i.code, i.latency, i.body, i.error from updated u join input i on i.id = u.id`;

/** Records attempts and their deliveries' new states, all in one statement (prepared: one per group sent). */
export async function recordAttempts(db: Db, attempts: RecordedAttempt[]) {
  if (attempts.length === 0) return;
  const column = <K extends keyof RecordedAttempt>(key: K) => attempts.map((attempt) => attempt[key]);
  await queryPrepared(db, 'record_attempts', recordAttemptsSql, [
    column('id'),
    column('status'),
    column('code'),
    column('latencyMs'),
    column('responseBody'),
    column('transportError'),
    column('nextRetryAt'),
  ]);
}

// Backlogs and history

/** Per webhook of `webhookIds` with deliveries waiting in its queue: how many, the oldest's creation, the soonest due time, and the database's now. */
export const summarizeQueues = (db: Db, webhookIds: string[]): Promise<{ webhook_id: string; backlog: number; oldest: Date; next_due: Date; now: Date }[]> =>
  db('webhook_deliveries')
    .whereIn('webhook_id', webhookIds)
    .where({ status: 'pending' })
    .whereNotNull('next_retry_at')
    .groupBy('webhook_id')
    .select(
      'webhook_id',
      db.raw('count(*)::int as backlog'),
      db.raw('min(created_at) as oldest'),
      db.raw('min(next_retry_at) as next_due'),
      db.raw('now() as now'),
    );

/** The backlogs of every webhook together (for the signet_webhook_backlog gauge), given up after `timeoutMs`. */
export async function countWebhookBacklog(db: Db, timeoutMs: number): Promise<number> {
  const row = await db('webhook_deliveries').where({ status: 'pending' }).whereNotNull('next_retry_at').count({ count: '*' }).first().timeout(timeoutMs);
  return Number(row?.count ?? 0);
}

export function listDeliveryRows(db: Db, webhookId: string, query: DeliveryListQuery): Promise<DeliveryRow[]> {
  return db('webhook_deliveries')
    .where({ webhook_id: webhookId })
    .modify((builder) => {
      if (query.cursor) builder.where('id', '<', query.cursor);
      if (query.status) builder.where('status', query.status);
      if (query.eventType) builder.where('event_type', query.eventType);
    })
    .orderBy('id', 'desc')
    .limit(query.limit + 1);
}

export const findDelivery = (db: Db, webhookId: string, deliveryId: string): Promise<DeliveryRow | undefined> =>
  db<DeliveryRow>('webhook_deliveries').where({ id: deliveryId, webhook_id: webhookId }).first();

export const findAttempts = (db: Db, deliveryId: string): Promise<AttemptRow[]> =>
  db<AttemptRow>('webhook_delivery_attempts').where({ delivery_id: deliveryId }).orderBy('attempt');
