// SQLSTATE classes whose errors the same statement meets again however often it is retried: data
// exceptions (22: text or JSON PostgreSQL cannot take, such as an unpaired surrogate or a NUL; a number
// or date out of range), integrity constraint violations (23) and program limits (54: an index row too
// large). Every other class (connections, deadlocks and serialization, shutdowns, resources, and 42,
// which a worker ahead of its migrations meets) may pass on a retry.
const PERMANENT_CLASSES = new Set(['22', '23', '54']);

/** True for a PostgreSQL error that retrying the same statement cannot get past. */
export function isRefusedForGood(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && PERMANENT_CLASSES.has(code.slice(0, 2));
}

/** True for a unique violation (23505) of this index or constraint, on PostgreSQL as on PGlite. */
export function violatesUnique(error: unknown, index: string): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23505' && constraint === index;
}
