import type { Account } from '../accounts/service';
import { plans } from '../domain/plans';
import type { Db } from '../db';
import { toPage } from '../db/pagination';
import { AppError, notFound, validationError } from '../errors';
import { newId } from '../ids';
import { isAllowListed, refusedAddress, type AllowList } from './addressPolicy';
import type { DeliveryListQuery, WebhookCreateInput, WebhookListQuery, WebhookUpdateInput } from './schema';
import { encryptSecret, generateWebhookSecret } from './secrets';
import {
  deleteWebhookRow,
  findAttempts,
  findDelivery,
  findWebhook,
  insertWebhook,
  listDeliveryRows,
  listWebhookRows,
  summarizeQueues,
  updateWebhookRow,
  type WebhookRow,
} from './store';

// The signet_webhook_backlog gauge (src/system.ts) reads it here, with the rest of webhook management.

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
  const webhook = await insertWebhook(db, {
    id: newId('webhook'),
    account_id: account.id,
    url: input.url,
    description: input.description ?? null,
    events: input.events,
    enabled: input.enabled,
    secret_ciphertext: encryptSecret(settings.secretKey, secret),
  });
  return { webhook, secret };
}

export async function getWebhook(db: Db, accountId: string, id: string): Promise<WebhookRow> {
  const webhook = await findWebhook(db, accountId, id);
  if (!webhook) throw notFound('Webhook');
  return webhook;
}

export async function listWebhooks(db: Db, accountId: string, query: WebhookListQuery) {
  return toPage(await listWebhookRows(db, accountId, query), query.limit);
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
  const webhook = await updateWebhookRow(db, account.id, id, changes);
  if (!webhook) throw notFound('Webhook');
  return webhook;
}

export async function deleteWebhook(db: Db, accountId: string, id: string) {
  if (!(await deleteWebhookRow(db, accountId, id))) throw notFound('Webhook');
}

/** A new secret; the current one keeps signing alongside it for ROTATION_GRACE_MS. */
export async function rotateWebhookSecret(db: Db, settings: WebhookSettings, account: Account, id: string) {
  const current = await getWebhook(db, account.id, id);
  const secret = generateWebhookSecret();
  const webhook = await updateWebhookRow(db, account.id, id, {
    secret_ciphertext: encryptSecret(settings.secretKey, secret),
    previous_secret_ciphertext: current.secret_ciphertext,
    previous_secret_expires_at: new Date(Date.now() + ROTATION_GRACE_MS),
    updated_at: db.fn.now(),
  });
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
  const rows = await summarizeQueues(db, webhookIds);
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

export async function listDeliveries(db: Db, accountId: string, webhookId: string, query: DeliveryListQuery) {
  await getWebhook(db, accountId, webhookId);
  return toPage(await listDeliveryRows(db, webhookId, query), query.limit);
}

export async function getDelivery(db: Db, accountId: string, webhookId: string, deliveryId: string) {
  await getWebhook(db, accountId, webhookId);
  const delivery = await findDelivery(db, webhookId, deliveryId);
  if (!delivery) throw notFound('Delivery');
  const attempts = await findAttempts(db, deliveryId);
  return { delivery, attempts };
}
