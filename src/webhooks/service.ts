import type { Account } from '../accounts/service';
import { plans } from '../domain/plans';
import type { Db } from '../db';
import { toPage } from '../db/pagination';
import { AppError, notFound, validationError } from '../errors';
import { newId } from '../ids';
import { isAllowListed, refusedAddress, type AllowList } from './addressPolicy';
import type { DeliveryListQuery, WebhookCreateInput, WebhookListQuery, WebhookUpdateInput } from './schema';
import { encryptSecret, generateWebhookSecret } from './secrets';

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

/** What webhook management needs besides the database: the encryption key and the operator's allow-list. */
export interface WebhookSettings {
  secretKey: Buffer;
  allowList: AllowList;
}

/** The old secret keeps signing alongside the new one for this long after a rotation. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export const planUpgradeRequired = (plan: string) =>
  new AppError(403, 'plan_upgrade_required', `Webhooks need the Business plan; this account is on the ${plan} plan.`);

function assertWebhookPlan(account: Account) {
  if (!plans[account.plan].webhooks) throw planUpgradeRequired(account.plan);
}

function assertDeliverableUrl(urlText: string, allowList: AllowList) {
  const url = new URL(urlText);
  if (url.protocol === 'http:' && !isAllowListed(url, allowList)) throw validationError(['url must be an absolute https:// URL']);
  const refused = refusedAddress(url, allowList);
  if (refused) throw validationError([refused]);
}

export async function createWebhook(db: Db, settings: WebhookSettings, account: Account, input: WebhookCreateInput) {
  assertWebhookPlan(account);
  assertDeliverableUrl(input.url, settings.allowList);
  const secret = generateWebhookSecret();
  const [webhook] = await db<WebhookRow>('webhooks')
    .insert({
      id: newId('webhook'),
      account_id: account.id,
      url: input.url,
      description: input.description ?? null,
      events: input.events,
      enabled: input.enabled,
      secret_ciphertext: encryptSecret(settings.secretKey, secret),
    })
    .returning('*');
  return { webhook, secret };
}

export async function getWebhook(db: Db, accountId: string, id: string): Promise<WebhookRow> {
  const webhook = await db<WebhookRow>('webhooks').where({ id, account_id: accountId }).first();
  if (!webhook) throw notFound('Webhook');
  return webhook;
}

export async function listWebhooks(db: Db, accountId: string, query: WebhookListQuery) {
  const rows: WebhookRow[] = await db('webhooks')
    .where({ account_id: accountId })
    .modify((builder) => {
      if (query.cursor) builder.where('id', '<', query.cursor);
    })
    .orderBy('id', 'desc')
    .limit(query.limit + 1);
  return toPage(rows, query.limit);
}

export async function updateWebhook(db: Db, settings: WebhookSettings, account: Account, id: string, input: WebhookUpdateInput) {
  assertWebhookPlan(account);
  await getWebhook(db, account.id, id);
  if (input.url) assertDeliverableUrl(input.url, settings.allowList);
  const changes: Record<string, unknown> = { updated_at: db.fn.now() };
  if (input.url !== undefined) changes.url = input.url;
  if (input.events !== undefined) changes.events = input.events;
  if (input.description !== undefined) changes.description = input.description;
  if (input.enabled !== undefined) {
    changes.enabled = input.enabled;
    // Enabled again by its owner: the failure streak and Signet's reason start over.
    if (input.enabled) Object.assign(changes, { disabled_reason: null, disabled_at: null, failing_since: null });
  }
  const [webhook]: WebhookRow[] = await db('webhooks').where({ id, account_id: account.id }).update(changes).returning('*');
  if (!webhook) throw notFound('Webhook');
  return webhook;
}

export async function deleteWebhook(db: Db, accountId: string, id: string) {
  const deleted = await db('webhooks').where({ id, account_id: accountId }).delete();
  if (deleted === 0) throw notFound('Webhook');
}

/** A new secret; the current one keeps signing alongside it for ROTATION_GRACE_MS. */
export async function rotateWebhookSecret(db: Db, settings: WebhookSettings, account: Account, id: string) {
  const current = await getWebhook(db, account.id, id);
  const secret = generateWebhookSecret();
  const [webhook] = await db<WebhookRow>('webhooks')
    .where({ id, account_id: account.id })
    .update({
      secret_ciphertext: encryptSecret(settings.secretKey, secret),
      previous_secret_ciphertext: current.secret_ciphertext,
      previous_secret_expires_at: new Date(Date.now() + ROTATION_GRACE_MS),
      updated_at: db.fn.now(),
    })
    .returning('*');
  if (!webhook) throw notFound('Webhook');
  return { webhook, secret };
}

export interface Backlog {
  backlog: number;
  oldestPendingAt: Date | null;
  nextDueInMs: number | null;
}

/**
 * The deliveries of each webhook waiting to be sent or retried, in one query: how many, when the oldest
 * was queued, and in how long the next is due (0 when some already are, null when none waits). A ping
 * or a redelivery in flight has no due time and is not in it.
 */
export async function getBacklogs(db: Db, webhookIds: string[]): Promise<Map<string, Backlog>> {
  const rows: { webhook_id: string; backlog: number; oldest: Date; next_due: Date; now: Date }[] = await db('webhook_deliveries')
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
  const found = new Map(rows.map((row) => [row.webhook_id, row]));
  return new Map(
    webhookIds.map((id) => {
      const row = found.get(id);
      return [
        id,
        row
          ? {
              backlog: Number(row.backlog),
              oldestPendingAt: new Date(row.oldest),
              nextDueInMs: Math.max(0, new Date(row.next_due).getTime() - new Date(row.now).getTime()),
            }
          : { backlog: 0, oldestPendingAt: null, nextDueInMs: null },
      ];
    }),
  );
}

export const getBacklog = async (db: Db, webhookId: string): Promise<Backlog> => (await getBacklogs(db, [webhookId])).get(webhookId)!;

/** The backlogs of every webhook together (for the signet_webhook_backlog gauge), given up after `timeoutMs`. */
export async function countWebhookBacklog(db: Db, timeoutMs: number): Promise<number> {
  const row = await db('webhook_deliveries').where({ status: 'pending' }).whereNotNull('next_retry_at').count({ count: '*' }).first().timeout(timeoutMs);
  return Number(row?.count ?? 0);
}

export async function listDeliveries(db: Db, accountId: string, webhookId: string, query: DeliveryListQuery) {
  await getWebhook(db, accountId, webhookId);
  const rows: DeliveryRow[] = await db('webhook_deliveries')
    .where({ webhook_id: webhookId })
    .modify((builder) => {
      if (query.cursor) builder.where('id', '<', query.cursor);
      if (query.status) builder.where('status', query.status);
      if (query.eventType) builder.where('event_type', query.eventType);
    })
    .orderBy('id', 'desc')
    .limit(query.limit + 1);
  return toPage(rows, query.limit);
}

export async function getDelivery(db: Db, accountId: string, webhookId: string, deliveryId: string) {
  await getWebhook(db, accountId, webhookId);
  const delivery = await db<DeliveryRow>('webhook_deliveries').where({ id: deliveryId, webhook_id: webhookId }).first();
  if (!delivery) throw notFound('Delivery');
  const attempts = await db<AttemptRow>('webhook_delivery_attempts').where({ delivery_id: deliveryId }).orderBy('attempt');
  return { delivery, attempts };
}
