import { Context } from '@temporalio/activity';
import type { Db } from '../src/db';
// The api's own dispatcher, so that a wake-up from the sweeper works as one after a commit (docs/architecture.md, "Tiers").
import { createEventDispatcher } from '../src/temporal/eventDispatcher';

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
