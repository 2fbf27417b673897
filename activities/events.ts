import { Context } from '@temporalio/activity';
import type { Db } from '../src/db';
import { createEventDispatcher } from '../src/worker/eventDispatcher';

/** The event dispatcher of the running activity: its worker's client and task queue. */
export function activityEventDispatcher(db: Db, retryScale: number) {
  const context = Context.current();
  return createEventDispatcher({
    client: context.client,
    taskQueue: context.info.taskQueue,
    db,
    retryScale,
    onError: (error, webhooks) => context.log.warn('waking webhook queues failed; the sweeper will', { error: String(error), webhooks }),
  });
}
