import { isId } from '../domain/ids';

export const searchSorts = ['relevance', '-createdAt', 'createdAt'] as const;
export type SearchSort = (typeof searchSorts)[number];

/**
 * Where the previous page ended: the sort it belongs to, the last hit's sort value (score or epoch ms) and
 * id; sorted by relevance, its creation time too (epoch ms), the tie-breaker before the id.
 */
export type SearchCursor =
  { sort: 'relevance'; value: number; id: string; createdAt: number } | { sort: Exclude<SearchSort, 'relevance'>; value: number; id: string };

export const encodeCursor = (cursor: SearchCursor) =>
  Buffer.from(
    JSON.stringify(cursor.sort === 'relevance' ? [cursor.sort, cursor.value, cursor.id, cursor.createdAt] : [cursor.sort, cursor.value, cursor.id]),
  ).toString('base64url');

// The largest time a Date holds (epoch ms); scores are far below it. Beyond it a cursor is not ours.
const MAX_SORT_VALUE = 8.64e15;

/** The cursor, or null when it is not one this service made. */
export function decodeCursor(text: string): SearchCursor | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== (parsed[0] === 'relevance' ? 4 : 3)) return null;
    const [sort, value, id, createdAt] = parsed;
    const sortValue = (candidate: unknown): candidate is number => typeof candidate === 'number' && Math.abs(candidate) <= MAX_SORT_VALUE;
    if (!(searchSorts as readonly unknown[]).includes(sort) || !sortValue(value)) return null;
    if (typeof id !== 'string' || !(isId('document', id) || isId('signingRequest', id) || isId('template', id))) return null;
    if (sort !== 'relevance') return { sort, value, id };
    return sortValue(createdAt) ? { sort, value, id, createdAt } : null;
  } catch {
    return null;
  }
}
