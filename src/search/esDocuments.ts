import type { Client, estypes } from '@elastic/elasticsearch';
import type { Db } from '../db';
import { waitingOn } from '../domain/signingRequests';
import type { ResourceRef } from './backend';
import { WRITE_REQUEST_OPTIONS } from './elasticsearch';
import type { SearchType } from './schema';
import { searchWords } from './text';

// What Elasticsearch holds of each resource, read from PostgreSQL (the source of truth). Every copy
// carries the moment it was read as its external version: a slower, older read never overwrites a newer one.

export interface Loaded {
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

/**
 * Of n documents, a request's copy holds the first REQUEST_TEXT_CHARS / n characters of each one's text,
 * as its search_vector does on PostgreSQL (migration 20261126151000): every document has its share.
 */
const REQUEST_TEXT_CHARS = 200_000;

/** The names and the request's share of the text of each request's documents, in the order signers see them. */
async function documentsOfRequests(db: Db, ids: string[]) {
  const rows: { signing_request_id: string; file_name: string; text: string | null }[] = await db('signing_request_documents as rd')
    .join('documents as d', 'd.id', 'rd.document_id')
    .whereIn('rd.signing_request_id', ids)
    .orderBy(['rd.signing_request_id', 'rd.position'])
    .select(
      'rd.signing_request_id',
      'd.file_name',
      db.raw(`left(d.body_text, (${REQUEST_TEXT_CHARS} / count(*) over (partition by rd.signing_request_id))::int) as text`),
    );
  const byRequest = new Map<string, typeof rows>();
  for (const row of rows) {
    if (!byRequest.has(row.signing_request_id)) byRequest.set(row.signing_request_id, []);
    byRequest.get(row.signing_request_id)!.push(row);
  }
  return byRequest;
}

/**
 * A document's name and text are in the copies of the requests that hold it: when its own words may have
 * changed (`holders`), those requests are written again too.
 */
export async function withRequestsHolding(db: Db, refs: ResourceRef[]): Promise<ResourceRef[]> {
  const changed = refs.filter((ref) => ref.type === 'document' && ref.holders).map((ref) => ref.id);
  if (changed.length === 0) return refs;
  const requestIds: string[] = await db('signing_request_documents').whereIn('document_id', changed).pluck('signing_request_id');
  return [...refs, ...requestIds.map((id) => ({ type: 'signing_request' as const, id }))];
}

async function loadSigningRequests(db: Db, ids: string[]): Promise<Loaded[]> {
  const rows = await db('signing_requests')
    .whereIn('id', ids)
    .select('id', 'account_id', 'document_id', 'title', 'message', 'signer_text', 'status', 'created_at', 'completed_at', db.raw(readVersion));
  const signers = (
    await db('signers').whereIn('signing_request_id', ids).select('signing_request_id', 'email', 'status', 'decline_reason', 'recipient_type', 'routing_order')
  ).map((row) => ({ ...row, recipientType: row.recipient_type, routingOrder: row.routing_order }));
  const documents = await documentsOfRequests(db, ids);
  const found = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = found.get(id);
    if (!row) return { id, version: Date.now() * 1000, body: null };
    const completed = row.status === 'completed' && row.completed_at;
    const signersOf = signers.filter((signer) => signer.signing_request_id === id);
    const waited = new Set(waitingOn(row.status, signersOf));
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
        fileName: (documents.get(id) ?? []).map((document) => searchWords(document.file_name)),
        text: (documents.get(id) ?? []).map((document) => searchWords(document.text)),
        status: row.status,
        createdAt: row.created_at.toISOString(),
        completedAt: row.completed_at?.toISOString() ?? null,
        secondsToComplete: completed ? (row.completed_at.getTime() - row.created_at.getTime()) / 1000 : null,
        signerStates: signersOf.map((signer) => ({
          email: signer.email.toLowerCase(),
          status: signer.status,
          declineReason: signer.decline_reason,
          waitedOn: waited.has(signer),
        })),
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

/** The most one _bulk request carries: answered well within the client's timeout on a busy machine. */
export const MAX_BULK_BYTES = 4 * 1024 * 1024;

/**
 * Writes the copies in _bulk requests of at most MAX_BULK_BYTES (a batch of events about documents
 * with their texts once made one of 24 MB, which timed out and was retried for minutes), the refresh
 * asked for on the last. `target` is the alias (require_alias: a write never creates a stray index) or,
 * while rebuilding, the new index itself. Version conflicts mean a newer copy is there.
 */
export async function writeToIndex(client: Client, target: string, loaded: Loaded[], options: { viaAlias: boolean; refresh: boolean | 'wait_for' }) {
  // Each copy is serialised once, here: the client passes a string through as one line of the bulk body.
  const pieces: { entry: Loaded; json?: string }[][] = [];
  let bytes = Infinity;
  for (const entry of loaded) {
    const json = entry.body ? JSON.stringify(entry.body) : undefined;
    const size = json?.length ?? 100;
    if (bytes + size > MAX_BULK_BYTES) {
      pieces.push([]);
      bytes = 0;
    }
    pieces[pieces.length - 1].push({ entry, json });
    bytes += size;
  }
  for (const [index, piece] of pieces.entries()) {
    const operations = piece.flatMap(({ entry, json }): (estypes.BulkOperationContainer | string)[] => {
      const meta = { _index: target, _id: entry.id, version: entry.version, version_type: 'external_gte' as const };
      return json === undefined ? [{ delete: meta }] : [{ index: meta }, json];
    });
    const refresh = index === pieces.length - 1 ? options.refresh : false;
    const response = await client.bulk<string>({ operations, refresh, require_alias: options.viaAlias }, WRITE_REQUEST_OPTIONS);
    if (!response.errors) continue;
    const failed = response.items.map((item) => Object.values(item)[0]).filter((result) => result?.error && result.status !== 409 && result.status !== 404);
    if (failed.length > 0)
      throw new Error(`Elasticsearch refused ${failed.length} of ${piece.length} writes: ${JSON.stringify(failed[0]?.error).slice(0, 500)}`);
  }
}

/** Groups resources by type for loading. */
export function idsByType(refs: ResourceRef[]) {
  const groups = new Map<SearchType, Set<string>>();
  for (const ref of refs) groups.set(ref.type, (groups.get(ref.type) ?? new Set()).add(ref.id));
  return [...groups].map(([type, ids]) => ({ type, ids: [...ids] }));
}
