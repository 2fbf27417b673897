import type { Db } from './index';

type Hook = () => void;

// The after-commit hooks of each open unit of work, keyed by its transaction object. Only this file
// reads or writes it: a unit of work registers its transaction here and removes it once it ends.
const hooksOf = new WeakMap<Db, Hook[]>();

/**
 * Runs `work` in a transaction of `db` (a savepoint when `db` is itself a transaction) and, once the
 * outermost transaction has committed, the hooks that `work` registered with `afterCommit`. On a
 * rollback they are dropped. A hook runs after its caller has its result's promise resolved, and is
 * not awaited: what it starts must tell its own failures.
 */
export async function unitOfWork<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  const hooks: Hook[] = [];
  const result = await db.transaction(async (trx) => {
    hooksOf.set(trx, hooks);
    try {
      return await work(trx);
    } finally {
      hooksOf.delete(trx);
    }
  });
  // A savepoint committed: its hooks wait for the transaction around it.
  const outer = db.isTransaction ? hooksOf.get(db) : undefined;
  if (outer) outer.push(...hooks);
  else for (const hook of hooks) hook();
  return result;
}

/**
 * Runs `hook` once the unit of work of `trx` has committed (see unitOfWork). Outside a transaction
 * there is nothing to wait for: it runs now. A transaction opened without unitOfWork cannot say when
 * it commits, so it is refused.
 */
export function afterCommit(trx: Db, hook: Hook) {
  if (!trx.isTransaction) return hook();
  const hooks = hooksOf.get(trx);
  if (!hooks) throw new Error('afterCommit needs a transaction opened with unitOfWork (src/db/unitOfWork.ts)');
  hooks.push(hook);
}
