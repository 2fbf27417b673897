import { expect } from 'chai';
import type { createTestAccount } from './system';
import { eventually } from './signing';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

/**
 * Resolves once none of the account's queued deliveries is pending: each was sent and its attempt
 * recorded, which happens after the receiver answered. Events are queued in the transaction of their
 * change, so once the api has answered, nothing more can reach a receiver and a test may count what
 * arrived (rather than sleep "to let anything wrongly sent arrive"). For deliveries that succeed.
 */
export async function webhooksSettled(account: Account, ms = 30_000) {
  await eventually(async () => {
    const [{ pending }] = await account
      .db('webhook_deliveries as d')
      .join('webhooks as w', 'w.id', 'd.webhook_id')
      .where({ 'w.account_id': account.account.id, 'd.status': 'pending' })
      .whereNotNull('d.next_retry_at')
      .count({ pending: '*' });
    expect(Number(pending), 'pending deliveries').to.equal(0);
  }, ms);
}
