import type { Client } from '@elastic/elasticsearch';
import type { Db } from '../db';
import { withAdvisoryLock } from '../db/advisoryLock';
import type { Logger } from '../logger';
import type { SearchBackend } from './backend';
import { isUnavailable, unlessUnavailable } from './elasticsearch';
import { idsByType, loadForIndex, withRequestsHolding, writeToIndex } from './esDocuments';
import { aliasOf, createVersionedIndex, flipAlias, indicesBehind, mappingVersion, searchTypesOf } from './esIndices';
import { searchElasticsearch } from './esSearch';
import { eventCursor, oldestRunning } from './eventCursor';
import { resourcesOf } from './indexer';
import { searchTables } from './postgres';
import type { SearchType } from './schema';

const PAGE = 500;

export interface RebuildProgress {
  type: SearchType;
  done: number;
  total: number;
}

/**
 * Builds a new index for `type` from PostgreSQL, flips the alias to it and drops the old one. Changes made
 * while it ran went to the old index; replaying their events afterwards brings them into the new one.
 */
export async function rebuildIndex(db: Db, client: Client, prefix: string, type: SearchType, onProgress?: (progress: RebuildProgress) => void) {
  // Events of transactions that ended before this are in the tables read below; later ones are replayed.
  const xmin = await oldestRunning(db);
  const live = () => db(searchTables[type]).modify((builder) => (type === 'signing_request' ? builder : builder.whereNull('deleted_at')));
  const [{ total }] = await live().count({ total: '*' });
  const index = await createVersionedIndex(client, prefix, type);
  let done = 0;
  let after = '';
  for (;;) {
    const ids: string[] = (await live().where('id', '>', after).orderBy('id').limit(PAGE).select('id')).map((row: { id: string }) => row.id);
    if (ids.length === 0) break;
    await writeToIndex(client, index, await loadForIndex(db, type, ids), { viaAlias: false, refresh: false });
    done += ids.length;
    after = ids[ids.length - 1];
    onProgress?.({ type, done, total: Number(total) });
  }
  await client.indices.refresh({ index });
  await flipAlias(client, aliasOf(prefix, type), index);
  const replay = await db('events').whereRaw('xid >= ?::xid8', [xmin]).select('id', 'data');
  const refs = (await withRequestsHolding(db, resourcesOf(replay))).filter((ref) => ref.type === type);
  for (const group of idsByType(refs)) await writeThroughAlias(db, client, prefix, group, false);
  return { index, documents: done };
}

/** Writes the resources of one type to its alias, PAGE at a time. */
async function writeThroughAlias(db: Db, client: Client, prefix: string, { type, ids }: { type: SearchType; ids: string[] }, refresh: boolean | 'wait_for') {
  for (let i = 0; i < ids.length; i += PAGE) {
    await writeToIndex(client, aliasOf(prefix, type), await loadForIndex(db, type, ids.slice(i, i + PAGE)), { viaAlias: true, refresh });
  }
}

/**
 * Creates or rebuilds the indices whose alias is missing or points to an older mapping version. Processes
 * starting at once take turns (a PostgreSQL advisory lock): two rebuilding the same alias would each flip
 * it and drop the other's index, with whatever the indexer had written to it in between.
 */
export async function ensureIndices(db: Db, client: Client, prefix: string, logger?: Logger) {
  await withAdvisoryLock(db, `search indices ${prefix}`, logger ?? { info() {} }, () => ensureIndicesNow(db, client, prefix, logger));
}

async function ensureIndicesNow(db: Db, client: Client, prefix: string, logger?: Logger) {
  const xmin = await oldestRunning(db);
  let rebuilt = 0;
  for (const type of searchTypesOf) {
    const current = await indicesBehind(client, aliasOf(prefix, type));
    if (current.length === 1 && current[0].version === mappingVersion(type)) continue;
    logger?.info({ alias: aliasOf(prefix, type), from: current.map((entry) => entry.index) }, 'building the search index from PostgreSQL');
    await rebuildIndex(db, client, prefix, type);
    rebuilt++;
  }
  // A new prefix's indices were built from tables that hold every event committed before xmin; an
  // existing prefix keeps its cursor, and only the events past it are indexed (never skipped).
  await eventCursor(db, prefix).start(rebuilt === searchTypesOf.length ? xmin : null);
}

export function createElasticsearchSearch({ db, client, prefix, logger }: { db: Db; client: Client; prefix: string; logger: Logger }): SearchBackend {
  // The indices are checked once; until that succeeds (Elasticsearch down at start) every use tries again.
  let ready: Promise<void> | undefined;
  const ensureReady = () => {
    ready ??= ensureIndices(db, client, prefix, logger).catch((error) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
  ensureReady().catch((error) => logger.warn({ err: error, unavailable: isUnavailable(error) }, 'search index not ready; will retry on use'));

  const cursor = eventCursor(db, prefix);
  return {
    kind: 'elasticsearch',
    events: {
      next: async (limit) => {
        await ensureReady(); // which starts the cursor
        return cursor.next(limit);
      },
      advance: cursor.advance,
    },
    search: (accountId, query) => unlessUnavailable(async () => searchElasticsearch(client, prefix, accountId, query)),
    elasticsearch: { client, prefix },
    async index(refs, { searchable = true } = {}) {
      await ensureReady();
      // The types at once: a write is answered at the refresh after it (up to 1 s), and a document's
      // change, then the requests holding it, one after the other, took two.
      const refresh = searchable ? 'wait_for' : false;
      await Promise.all(idsByType(await withRequestsHolding(db, refs)).map((group) => writeThroughAlias(db, client, prefix, group, refresh)));
    },
    health: () => client.cluster.health({}, { requestTimeout: 2000, maxRetries: 0 }),
    close: () => client.close(),
  };
}
