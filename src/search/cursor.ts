import { isId } from '../domain/ids';

export const searchSorts = ['relevance', '-createdAt', 'createdAt'] as const;
export type SearchSort = (typeof searchSorts)[number];

/** Where the previous page ended: the sort it belongs to, the last hit's sort value (score or epoch ms) and id. */
export interface SearchCursor {
  sort: SearchSort;
  value: number;
  id: string;
}

export const encodeCursor = (cursor: SearchCursor) => Buffer.from(JSON.stringify([cursor.sort, cursor.value, cursor.id])).toString('base64url');

// The largest time a Date holds (epoch ms); scores are far below it. Beyond it a cursor is not ours.
const MAX_SORT_VALUE = 8.64e15;

/** The cursor, or null when it is not one this service made. */
export function decodeCursor(text: string): SearchCursor | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 3) return null;
    const [sort, value, id] = parsed;
    if (!(searchSorts as readonly unknown[]).includes(sort) || typeof value !== 'number' || !(Math.abs(value) <= MAX_SORT_VALUE)) return null;
    if (typeof id !== 'string' || !(isId('document', id) || isId('signingRequest', id) || isId('template', id))) return null;
    return { sort, value, id };
  } catch {
    return null;
  }
}
