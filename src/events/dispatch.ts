import type { Client } from '@temporalio/client';
import type { Db } from '../db';
import { startDeliverEventWorkflow } from '../temporal/client';
import { joinSubscribers } from '../webhooks/delivery';

const STARTS_AT_ONCE = 16;

export interface EventDispatcherOptions {
  client: Client;
  taskQueue: string;
  db: Db;
  retryScale: number;
  /** Told when a dispatch after commit fails; the sweeper picks the events up later. */
  onError?: (error: unknown, eventIds: string[]) => void;
}

/**
 * Hands committed events to Temporal: one deliverEventWorkflow per event that a webhook subscribes to,
 * then marks them dispatched. Starting twice is harmless (the workflow id is the event's), so when a
 * start is lost with its process, the sweeper starts it again.
 */
export function createEventDispatcher({ client, taskQueue, db, retryScale, onError }: EventDispatcherOptions) {
  const start = (eventId: string) => startDeliverEventWorkflow(client, taskQueue, { eventId, retryScale });

  async function dispatch(eventIds: string[]) {
    // Most events have no webhook to go to: they are marked dispatched at once, in the same statement
    // that finds them, and cost Temporal nothing.
    const idle: { id: string }[] = await db('events')
      .whereIn('id', eventIds)
      .whereNull('dispatched_at')
      .whereNotExists(joinSubscribers(db('events as e').whereRaw('e.id = events.id')).select(db.raw('1')))
      .update({ dispatched_at: db.fn.now() })
      .returning('id');
    // Read, not derived from what this call marked: a concurrent dispatch (the sweeper, a second
    // dispatcher) may have marked an idle event first, and it must not get a workflow here.
    const deliverable: string[] = idle.length === eventIds.length ? [] : await db('events')
      .whereIn('id', eventIds)
      .whereNull('dispatched_at')
      .whereExists(joinSubscribers(db('events as e').whereRaw('e.id = events.id')).select(db.raw('1')))
      .pluck('id');
    for (let i = 0; i < deliverable.length; i += STARTS_AT_ONCE) {
      const batch = deliverable.slice(i, i + STARTS_AT_ONCE);
      await Promise.all(batch.map(start));
      await db('events').whereIn('id', batch).whereNull('dispatched_at').update({ dispatched_at: db.fn.now() });
    }
  }

  /**
   * Dispatches once `trx` commits, without holding up its caller. A failure is only logged: the event
   * is committed and undispatched, which is what the sweeper looks for.
   */
  function afterCommit(trx: Db, eventIds: string[]) {
    const committed = trx.isTransaction ? (trx as unknown as { executionPromise: Promise<unknown> }).executionPromise : Promise.resolve();
    committed.then(
      () => dispatch(eventIds).catch((error) => onError?.(error, eventIds)),
      () => undefined, // rolled back: there is nothing to deliver
    );
  }

  return { dispatch, afterCommit };
}

export type EventDispatcher = ReturnType<typeof createEventDispatcher>;
