import type { Config } from '../config';
import { parseAllowList } from './addressPolicy';
import { createWebhookPoster } from './http';
import { loadWebhookSecretKey } from './secrets';

/** What both the api and the worker need to manage and deliver webhooks; close() ends kept-alive connections. */
export async function setUpWebhooks(config: Config) {
  const allowList = parseAllowList(config.webhookAllowedPrivateHosts);
  const secretKey = loadWebhookSecretKey(config.WEBHOOK_SECRET_KEY, config.dataDir);
  const poster = await createWebhookPoster(allowList, config.WEBHOOK_TIMEOUT_MS);
  return { allowList, secretKey, poster };
}

export type Webhooks = Awaited<ReturnType<typeof setUpWebhooks>>;
