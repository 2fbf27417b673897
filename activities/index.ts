import { Context } from '@temporalio/activity';
import { createSigningActivities, type SigningActivityDeps } from './signingRequest';
import { createSweeperActivities, type SweeperActivityDeps } from './sweeper';
import { createWebhookActivities, type WebhookActivityDeps } from './webhooks';
import { createSearchActivities, type SearchActivityDeps } from './search';

// Activities are the only code the workflows call that touches the world. They get their
// dependencies from this factory and must be safe to retry: keyed by ids, conditional updates.
export type ActivityDeps = SigningActivityDeps & WebhookActivityDeps & SweeperActivityDeps & SearchActivityDeps;

const HEARTBEAT_EVERY_MS = 5_000;

// Every activity heartbeats while it runs, so a worker that dies mid-activity is noticed within the
// workflow's heartbeatTimeout (seconds), not after the whole startToCloseTimeout.
function heartbeating<Args extends unknown[], Result>(work: (...args: Args) => Promise<Result>) {
  return async (...args: Args): Promise<Result> => {
    const context = Context.current();
    if (context.info.isLocal) return work(...args); // local activities cannot heartbeat
    const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      return await work(...args);
    } finally {
      clearInterval(timer);
    }
  };
}

export function createActivities(deps: ActivityDeps) {
  const activities = {
    ...createSigningActivities(deps),
    ...createWebhookActivities(deps),
    ...createSweeperActivities(deps),
    ...createSearchActivities(deps),
  };
  return Object.fromEntries(
    Object.entries(activities).map(([name, work]) => [name, heartbeating(work as (...args: unknown[]) => Promise<unknown>)]),
  ) as typeof activities;
}

export type Activities = ReturnType<typeof createActivities>;
