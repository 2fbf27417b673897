import type { Db } from '../db';

/** An event for the search indexer, with its place in the cursor's order. */
export interface CursorEvent {
  id: string;
  xid: string;
  data: Record<string, unknown> | null;
}

/**
 * Where the search indexer is in the events, one cursor per Elasticsearch index prefix. Events are
 * taken in the order of the transactions that wrote them (xid, then id), and only those whose
 * transaction has ended: every transaction below the oldest one still running has committed or rolled
 * back, so nothing can appear behind the cursor once it has passed. No event is written to twice.
 */
export function eventCursor(db: Db, prefix: string) {
  return {
    /**
     * Creates the cursor unless it exists: from `xmin` (see `oldestRunning`) when the indices were
     * just built from the tables, else from the first event (one marked by the indexer before cursors).
     */
    async start(xmin: string | null) {
      await db('search_event_cursors').insert({ prefix, xid: xmin ?? '0', event_id: '' }).onConflict('prefix').ignore();
    },

    /** Up to `limit` events past the cursor, oldest first; none while the cursor does not exist. */
    async next(limit: number): Promise<CursorEvent[]> {
      const { rows } = await db.raw(
        `select e.id, e.xid::text as xid, e.data from search_event_cursors c
           join events e on (e.xid, e.id) > (c.xid, c.event_id)
          where c.prefix = ? and e.xid < pg_snapshot_xmin(pg_current_snapshot())
          order by e.xid, e.id limit ?`,
        [prefix, limit],
      );
      return rows;
    },

    /** Moves the cursor past `event`, never back (two indexers on one prefix may race). */
    async advance(event: CursorEvent) {
      await db.raw(
        `update search_event_cursors set xid = ?::xid8, event_id = ?, updated_at = now()
          where prefix = ? and (xid, event_id) < (?::xid8, ?)`,
        [event.xid, event.id, prefix, event.xid, event.id],
      );
    },
  };
}

export type EventCursor = ReturnType<typeof eventCursor>;

/** The oldest transaction still running (or the next one): every event below it is final. */
export async function oldestRunning(db: Db): Promise<string> {
  const { rows } = await db.raw('select pg_snapshot_xmin(pg_current_snapshot())::text as xmin');
  return rows[0].xmin;
}
