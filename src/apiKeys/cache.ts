import type pg from 'pg';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { onAuthChanged } from '../accounts/authChanges';
import { authenticateApiKey, hashKey, type Authenticated } from './service';

// Authenticating a request costs a database round trip; with the cache, a key seen in the last minute
// costs none (it halves the round trips of GET /documents/:id). A cached key must never outlive its
// revocation, nor a plan its change, so the cache empties whenever api_keys or accounts change:
// - changes made in this process call authChanged() and empty it at once;
// - any change, by any process or by hand, makes PostgreSQL notify every listener at commit
//   (migration 20261121001400), which empties it within milliseconds.
// Nothing is cached while the listening connection is down, nor on the embedded database, whose
// clients share one session, so that a notification reaches the client that caused it, not the listener.

// The channel the triggers of migration 20261121001400 notify.
const AUTH_CHANGED_CHANNEL = 'signet_auth_changed';
const MAX_ENTRIES = 10_000;
// As often as last_used_at is written: a cached key is looked up, and touched, once a minute.
const ENTRY_TTL_MS = 60_000;
const RELISTEN_MS = 1000;

export interface ApiKeyAuthenticator {
  /** The account a presented key belongs to, or null for a malformed, unknown or revoked key. */
  authenticate(presented: string): Promise<Authenticated | null>;
  close(): Promise<void>;
}

export function uncachedAuthenticator(db: Db): ApiKeyAuthenticator {
  return { authenticate: (presented) => authenticateApiKey(db, presented), close: async () => undefined };
}

/** Starts listening for changes first: once this resolves, keys are cached (or the listener is retrying). */
export async function cachedAuthenticator(db: Db, logger: Logger): Promise<ApiKeyAuthenticator> {
  const entries = new Map<string, { result: Authenticated; expiresAt: number }>();
  // Bumped whenever the cache empties: a lookup that began before then may have read the old state.
  let generation = 0;
  let listener: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let relisten: NodeJS.Timeout | undefined;

  const forget = () => {
    generation++;
    entries.clear();
  };
  const stopHearingLocalChanges = onAuthChanged(forget);

  async function listen() {
    let client: pg.Client | undefined;
    let lost = false;
    const onLost = (reason: unknown) => {
      if (lost) return;
      lost = true;
      listening = false;
      forget();
      if (listener === client) listener = undefined;
      if (closed) return;
      logger.warn({ reason: reason instanceof Error ? reason.message : String(reason) }, 'API key cache off until the change notifications are back');
      relisten = setTimeout(() => void listen(), RELISTEN_MS);
      relisten.unref();
    };
    try {
      client = (await db.client.acquireRawConnection()) as pg.Client;
      listener = client;
      client.on('notification', forget);
      client.on('error', onLost);
      client.on('end', () => onLost('connection ended'));
      await client.query(`listen ${AUTH_CHANGED_CHANNEL}`);
      if (closed) return void (await client.end());
      if (lost) return;
      forget(); // whatever changed before LISTEN took effect was not notified
      listening = true;
    } catch (error) {
      onLost(error);
      client?.end().catch(() => undefined);
    }
  }
  await listen();

  return {
    async authenticate(presented) {
      const hash = hashKey(presented);
      const hit = entries.get(hash);
      if (hit && hit.expiresAt > Date.now()) return hit.result;
      const started = generation;
      const result = await authenticateApiKey(db, presented);
      if (result && listening && started === generation) {
        if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
        entries.set(hash, { result: Object.freeze({ ...result, account: Object.freeze(result.account) }), expiresAt: Date.now() + ENTRY_TTL_MS });
      } else if (!result) {
        entries.delete(hash);
      }
      return result;
    },
    async close() {
      closed = true;
      clearTimeout(relisten);
      stopHearingLocalChanges();
      forget();
      await listener?.end().catch(() => undefined);
    },
  };
}
