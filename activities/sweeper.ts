import { Context } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db';
import { tellSendersOfLocks } from '../src/signingRequests/verification';
import { startOrphanedSigningRequests } from '../src/signingRequests/workflow';
import { startOrphanedBulkSends } from '../src/bulkSends/workflow';
import type { MailTransport } from '../src/mail';
import { findUndispatchedEvents } from '../src/events/store';
import { adoptLegacyDeliveries } from '../src/webhooks/legacy';
import { findStalledWebhooks } from '../src/webhooks/store';
import type { SweeperActivities } from '../workflows/activities';
import { activityEventDispatcher } from './events';

export interface SweeperActivityDeps {
  db: Db;
  config: Pick<Config, 'WEBHOOK_RETRY_SCALE' | 'MAIL_FROM'>;
  mail: MailTransport;
}

const cutoff = (olderThanMs: number) => new Date(Date.now() - olderThanMs);

// What a process that died between a commit and its hand-over to Temporal left behind. Starting it
// twice is harmless: workflow ids are the events' and the requests' own.
export function createSweeperActivities({ db, config, mail }: SweeperActivityDeps): SweeperActivities {
  return {
    /** E-mails the senders of signers locked `olderThanMs` ago or more whom the api did not tell (it died after the lock). */
    tellSendersOfLocks: (input: { olderThanMs: number; limit: number }): Promise<number> => tellSendersOfLocks({ db, mail, config }, input),

    /** Starts delivery of events committed at least `olderThanMs` ago but never dispatched. */
    async dispatchStaleEvents(input: { olderThanMs: number; limit: number }): Promise<number> {
      const stale = await findUndispatchedEvents(db, cutoff(input.olderThanMs), input.limit);
      await activityEventDispatcher(db, config.WEBHOOK_RETRY_SCALE).dispatch(stale);
      return stale.length;
    },

    /**
     * Wakes the workflows of webhooks with deliveries due `olderThanMs` ago or more: the process that
     * queued them died before waking the workflow, or the workflow ended before a wake reached it.
     */
    async wakeStalledWebhooks(input: { olderThanMs: number; limit: number }): Promise<number> {
      const stalled = await findStalledWebhooks(db, cutoff(input.olderThanMs), input.limit);
      await activityEventDispatcher(db, config.WEBHOOK_RETRY_SCALE).wakeAll(stalled);
      return stalled.length;
    },

    /** Hands the deliveries of the per-event workflows of earlier versions to their webhooks' queues. */
    async adoptLegacyDeliveries(input: { limit: number }): Promise<number> {
      const context = Context.current();
      const adopted = await adoptLegacyDeliveries(db, context.client, context.info.taskQueue, input.limit);
      await activityEventDispatcher(db, config.WEBHOOK_RETRY_SCALE).wakeAll(adopted);
      return adopted.length;
    },

    /** Starts the workflows of signing requests committed at least `olderThanMs` ago but never started. */
    startOrphanedSigningRequests(input: { olderThanMs: number; limit: number }): Promise<number> {
      const { client, info } = Context.current();
      return startOrphanedSigningRequests(db, client, info.taskQueue, input);
    },

    /** Starts the workflows of bulk sends committed at least `olderThanMs` ago but never started. */
    startOrphanedBulkSends(input: { olderThanMs: number; limit: number }): Promise<number> {
      const { client, info } = Context.current();
      return startOrphanedBulkSends(db, client, info.taskQueue, input);
    },

    /** Deletes up to `limit` Idempotency-Keys past their 24 hours (the api already treats them as free). */
    async deleteExpiredIdempotencyKeys(input: { limit: number }): Promise<number> {
      const expired = db('idempotency_keys').where('expires_at', '<=', db.fn.now()).limit(input.limit).select('account_id', 'key');
      return db('idempotency_keys').whereIn(['account_id', 'key'], expired).delete();
    },
  };
}
