import crypto from 'node:crypto';
import type { Client } from '@elastic/elasticsearch';
import type { SearchType } from './schema';

// One index per resource type behind an alias (`<prefix>documents`, `<prefix>signing_requests`). The
// index name carries a hash of its settings and mappings: changing them makes a new index, loaded from
// PostgreSQL, and the alias flips to it in one atomic step.

const keyword = { type: 'keyword' } as const;
const date = { type: 'date' } as const;
const words = { type: 'text', analyzer: 'standard' } as const;
// index_prefixes: a word's first 2–5 letters are indexed as terms of their own, so the prefix being typed
// is one term to look up, not every word that starts with it (esSearch.ts marks those words by a wildcard).
const text = { ...words, index_prefixes: { min_chars: 2, max_chars: 5 } } as const;
// Offsets let the highlighter find matches in a long text without analysing it again.
const longText = { ...text, index_options: 'offsets' } as const;
// A PDF's text matches whole words only (esSearch.ts): prefixes of its every word would double what a
// text costs to index, and the index's size.
const pdfText = { ...words, index_options: 'offsets' } as const;

// A refresh interval set, even to the default: a shard that nobody has searched for 30 s then still
// refreshes every second, so what the event indexer writes without waiting is searchable within one.
const settings = { number_of_shards: 1, auto_expand_replicas: '0-1', refresh_interval: '1s' };

export const indexDefinitions: Record<SearchType, { name: string; settings: object; properties: Record<string, object> }> = {
  document: {
    name: 'documents',
    settings,
    properties: { id: keyword, accountId: keyword, fileName: text, text: pdfText, status: keyword, createdAt: date },
  },
  signing_request: {
    name: 'signing_requests',
    settings,
    properties: {
      id: keyword,
      accountId: keyword,
      documentId: keyword,
      title: text,
      message: longText,
      signers: text,
      // The names and the text of all its documents (the request's share of each text, as PostgreSQL's).
      fileName: text,
      text: pdfText,
      status: keyword,
      createdAt: date,
      completedAt: date,
      secondsToComplete: { type: 'double' },
      // waitedOn: the request is waiting on this recipient (waitingOn of domain/signingRequests.ts, when copied).
      signerStates: { type: 'nested', properties: { email: keyword, status: keyword, declineReason: keyword, waitedOn: { type: 'boolean' } } },
    },
  },
  template: {
    name: 'templates',
    settings,
    properties: { id: keyword, accountId: keyword, name: text, createdAt: date },
  },
};

export const searchTypesOf = Object.keys(indexDefinitions) as SearchType[];

export const mappingVersion = (type: SearchType) => crypto.createHash('sha256').update(JSON.stringify(indexDefinitions[type])).digest('hex').slice(0, 10);

export const aliasOf = (prefix: string, type: SearchType) => `${prefix}${indexDefinitions[type].name}`;

/** The concrete indices behind an alias, with the mapping version each was built for. */
export async function indicesBehind(client: Client, alias: string): Promise<{ index: string; version: string | undefined }[]> {
  if (!(await client.indices.existsAlias({ name: alias }))) return [];
  const mappings = await client.indices.getMapping({ index: alias });
  return Object.entries(mappings).map(([index, mapping]) => ({ index, version: (mapping.mappings?._meta as { version?: string } | undefined)?.version }));
}

/** A new, empty index for `type` at the current mapping version; the alias does not point to it yet. */
export async function createVersionedIndex(client: Client, prefix: string, type: SearchType) {
  const version = mappingVersion(type);
  const index = `${aliasOf(prefix, type)}-${version}-${Date.now()}`;
  const { settings: indexSettings, properties } = indexDefinitions[type];
  await client.indices.create({ index, settings: indexSettings, mappings: { dynamic: 'strict', _meta: { version }, properties } as never });
  return index;
}

/** Points the alias at `index` alone, atomically, then drops the indices it left. */
export async function flipAlias(client: Client, alias: string, index: string) {
  const previous = (await indicesBehind(client, alias)).map((entry) => entry.index).filter((name) => name !== index);
  const actions: object[] = [{ add: { index, alias } }, ...previous.map((name) => ({ remove: { index: name, alias } }))];
  // A write that reached Elasticsearch before the alias existed made a plain index of that name: replace it.
  if (previous.length === 0 && (await client.indices.exists({ index: alias }))) actions.push({ remove_index: { index: alias } });
  await client.indices.updateAliases({ actions: actions as never });
  if (previous.length > 0) await client.indices.delete({ index: previous, ignore_unavailable: true });
}
