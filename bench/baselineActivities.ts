import type { Db } from '../src/db';

/** The activity of bench/workflows/echo.ts's baselines. */
export function createBaselineActivities(db: Db) {
  return {
    /** One transaction that commits durably (a transaction id is assigned, so the commit waits for its WAL flush). */
    async transact(): Promise<void> {
      await db.transaction(async (trx) => {
        await trx.raw('select txid_current()');
      });
    },
  };
}

export type BaselineActivities = ReturnType<typeof createBaselineActivities>;
