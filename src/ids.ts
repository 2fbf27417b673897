import { typeid } from 'typeid-js';

// Prefixed, time-sortable identifiers (TypeID): the prefix tells what a thing is at a glance.
export const idPrefixes = {
  account: 'acct',
  apiKey: 'key',
  document: 'doc',
  signingRequest: 'sr',
  signer: 'sgr',
  template: 'tpl',
  webhook: 'wh',
  delivery: 'whd',
  event: 'evt',
} as const;

export type IdKind = keyof typeof idPrefixes;

export function newId(kind: IdKind): string {
  return typeid(idPrefixes[kind]).toString();
}

/** The shape of an id of one kind: its prefix and a TypeID suffix. */
export const idPattern = (kind: IdKind) => new RegExp(`^${idPrefixes[kind]}_[0-7][0-9a-hjkmnp-tv-z]{25}$`);

export function isId(kind: IdKind, value: string): boolean {
  return idPattern(kind).test(value);
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
