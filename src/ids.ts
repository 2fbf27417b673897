import { typeid } from 'typeid-js';
import { idPrefixes, type IdKind } from './domain/ids';

// Making ids: a new TypeID of a kind (src/domain/ids.ts names the kinds and their shape), or many in SQL.

export function newId(kind: IdKind): string {
  return typeid(idPrefixes[kind]).toString();
}

/** TypeID's base 32 (Crockford's, lower case). */
const base32 = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * SQL for the n-th of many ids made from one: the id `base` (an SQL expression) with its last four
 * characters, 20 of its random bits, replaced by `n` (0 … 2^20 - 1) in base 32. For rows a statement
 * makes in numbers known only to PostgreSQL: still a valid, time-sortable TypeID of the same kind, and
 * as unlikely to collide as two ids made in the same millisecond with 54 random bits.
 */
export const nthIdSql = (base: string, n: string) =>
  `left(${base}, -4) || ${[15, 10, 5, 0].map((shift) => `substr('${base32}', ((${n}) >> ${shift} & 31)::int + 1, 1)`).join(' || ')}`;
