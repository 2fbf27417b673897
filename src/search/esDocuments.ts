import type { Client } from '@elastic/elasticsearch';
import type { Db } from '../db';
import type { ResourceRef } from './backend';
import type { SearchType } from './schema';
import { searchWords } from './text';

// What Elasticsearch holds of each resource, read from PostgreSQL (the source of truth). Every copy
// carries the moment it was read as its external version: a slower, older read never overwrites a newer one.

interface Loaded {
  id: string;
  version: number;
  /** Null: the resource is gone (or deleted) and leaves the index. */
  body: Record<string, unknown> | null;
}

const readVersion = `(extract(epoch from clock_timestamp()) * 1000000)::bigint as version`;

async function loadDocuments(db: Db, ids: string[]): Promise<Loaded[]> {
  const rows = await db('documents')
    .whereIn('id', ids)
    .select('id', 'account_id', 'file_name', 'body_text', 'status', 'created_at', 'deleted_at', db.raw(readVersion));
  const found = new Map(rows.map((row) => [row.id, row]));
  const version = rows[0]?.version ?? Date.now() * 1000;
  return ids.map((id) => {
    const row = found.get(id);
    if (!row || row.deleted_at) return { id, version: row?.version ?? version, body: null };
    return {
      id,
      version: row.version,
      body: {
        id,
        accountId: row.account_id,
        fileName: searchWords(row.file_name),
        text: searchWords(row.body_text),
        status: row.status,
        createdAt: row.created_at.toISOString(),
      },
    };
  });
}

async function loadSigningRequests(db: Db, ids: string[]): Promise<Loaded[]> {
  const rows = await db('signing_requests')
    .whereIn('id', ids)
    .select('id', 'account_id', 'document_id', 'title', 'message', 'signer_text', 'status', 'created_at', 'completed_at', db.raw(readVersion));
  const signers = await db('signers').whereIn('signing_request_id', ids).select('signing_request_id', 'email', 'status', 'decline_reason');
  const found = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = found.get(id);
    if (!row) return { id, version: Date.now() * 1000, body: null };
    const completed = row.status === 'completed' && row.completed_at;
    return {
      id,
      version: row.version,
      body: {
        id,
        accountId: row.account_id,
        documentId: row.document_id,
        title: searchWords(row.title),
        message: searchWords(row.message),
        signers: searchWords(row.signer_text),
        status: row.status,
        createdAt: row.created_at.toISOString(),
        completedAt: row.completed_at?.toISOString() ?? null,
        secondsToComplete: completed ? (row.completed_at.getTime() - row.created_at.getTime()) / 1000 : null,
        signerStates: signers
          .filter((signer) => signer.signing_request_id === id)
          .map((signer) => ({ email: signer.email.toLowerCase(), status: signer.status, declineReason: signer.decline_reason })),
      },
    };
  });
}

async function loadTemplates(db: Db, ids: string[]): Promise<Loaded[]> {
  const rows = await db('templates').whereIn('id', ids).select('id', 'account_id', 'name', 'created_at', 'deleted_at', db.raw(readVersion));
  const found = new Map(rows.map((row) => [row.id, row]));
  const version = rows[0]?.version ?? Date.now() * 1000;
  return ids.map((id) => {
    const row = found.get(id);
    if (!row || row.deleted_at) return { id, version: row?.version ?? version, body: null };
    return { id, version: row.version, body: { id, accountId: row.account_id, name: searchWords(row.name), createdAt: row.created_at.toISOString() } };
  });
}

const loaders: Record<SearchType, (db: Db, ids: string[]) => Promise<Loaded[]>> = {
  document: loadDocuments,
  signing_request: loadSigningRequests,
  template: loadTemplates,
};

export const loadForIndex = (db: Db, type: SearchType, ids: string[]) => loaders[type](db, ids);

/**
 * Writes the copies in one _bulk request. `target` is the alias (require_alias: a write never creates a
 * stray index) or, while rebuilding, the new index itself. Version conflicts mean a newer copy is there.
 */
export async function writeToIndex(client: Client, target: string, loaded: Loaded[], options: { viaAlias: boolean; refresh: boolean | 'wait_for' }) {
  if (loaded.length === 0) return;
  const operations = loaded.flatMap((entry) => {
    const meta = { _index: target, _id: entry.id, version: entry.version, version_type: 'external_gte' as const };
    return entry.body ? [{ index: meta }, entry.body] : [{ delete: meta }];
  });
  const response = await client.bulk({ operations, refresh: options.refresh, require_alias: options.viaAlias });
  if (!response.errors) return;
  const failed = response.items.map((item) => Object.values(item)[0]).filter((result) => result?.error && result.status !== 409 && result.status !== 404);
  if (failed.length > 0)
    throw new Error(`Elasticsearch refused ${failed.length} of ${loaded.length} writes: ${JSON.stringify(failed[0]?.error).slice(0, 500)}`);
}

/** Groups resources by type for loading. */
export function idsByType(refs: ResourceRef[]) {
  const groups = new Map<SearchType, Set<string>>();
  for (const ref of refs) groups.set(ref.type, (groups.get(ref.type) ?? new Set()).add(ref.id));
  return [...groups].map(([type, ids]) => ({ type, ids: [...ids] }));
}
