import { createHash } from 'node:crypto';
import { TypeID, typeid } from 'typeid-js';
import { idPrefixes, type IdKind } from './domain/ids';

// Making ids: a new TypeID of a kind (src/domain/ids.ts names the kinds and their shape), or many in SQL.

export function newId(kind: IdKind): string {
  return typeid(idPrefixes[kind]).toString();
}

/**
 * The id of a kind that `seed` always gives: a TypeID whose time is `at` (so it sorts among the ids made
 * then) and whose 74 random bits are taken from SHA-256 of the kind and the seed. Made twice from the same
 * seed and time, it is the same id, which a unique key (a primary key, a Temporal workflow id) then
 * refuses a second time.
 */
export function idFromSeed(kind: IdKind, at: Date, seed: string): string {
  const hash = createHash('sha256').update(`${kind}\n${seed}`).digest();
  const bytes = new Uint8Array(16);
  const ms = at.getTime();
  for (let i = 0; i < 6; i++) bytes[i] = Math.floor(ms / 2 ** (8 * (5 - i))) & 0xff;
  bytes[6] = 0x70 | (hash[0] & 0x0f); // UUIDv7: version 7, then random bits
  bytes[7] = hash[1];
  bytes[8] = 0x80 | (hash[2] & 0x3f); // the RFC 4122 variant, then random bits
  bytes.set(hash.subarray(3, 10), 9);
  return TypeID.fromUUIDBytes(idPrefixes[kind], bytes).toString();
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
