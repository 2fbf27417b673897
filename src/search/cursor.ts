import { isId } from '../ids';

export const searchSorts = ['relevance', '-createdAt', 'createdAt'] as const;
export type SearchSort = (typeof searchSorts)[number];

/** Where the previous page ended: the sort it belongs to, the last hit's sort value (score or epoch ms) and id. */
export interface SearchCursor {
  sort: SearchSort;
  value: number;
  id: string;
}

export const encodeCursor = (cursor: SearchCursor) => Buffer.from(JSON.stringify([cursor.sort, cursor.value, cursor.id])).toString('base64url');

/** The cursor, or null when it is not one this service made. */
export function decodeCursor(text: string): SearchCursor | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 3) return null;
    const [sort, value, id] = parsed;
    if (!(searchSorts as readonly unknown[]).includes(sort) || typeof value !== 'number' || !Number.isFinite(value)) return null;
    if (typeof id !== 'string' || !(isId('document', id) || isId('signingRequest', id))) return null;
    return { sort, value, id };
  } catch {
    return null;
  }
}
