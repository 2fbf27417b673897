import { Context } from '@temporalio/activity';
import type { Db } from '../src/db';
import { createWebhookDispatcher } from '../src/webhooks/dispatcher';

/** The api's webhook dispatcher, on the running activity's client and task queue: a wake-up from the sweeper works as one after a commit. */
export function activityEventDispatcher(db: Db, retryScale: number) {
  const context = Context.current();
  return createWebhookDispatcher({
    client: context.client,
    taskQueue: context.info.taskQueue,
    db,
    retryScale,
    onError: (error, webhooks) => context.log.warn('waking webhook queues failed; the sweeper will', { error: String(error), webhooks }),
  });
}
