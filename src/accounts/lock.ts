import type { Db } from '../db';

/**
 * Serialises one account's quota and allowance checks: concurrent creations wait here for each other.
 * FOR NO KEY UPDATE, not FOR UPDATE: a row inserted with a foreign key to the account (a signing request,
 * a document) holds a KEY SHARE lock on it, which FOR UPDATE waits for; two transactions that each had
 * inserted one and then took FOR UPDATE deadlocked (40P01, a 500). FOR NO KEY UPDATE still excludes
 * itself, so the checks stay one at a time.
 */
export async function lockAccount(trx: Db, accountId: string) {
  await trx('accounts').where({ id: accountId }).forNoKeyUpdate().first('id');
}
