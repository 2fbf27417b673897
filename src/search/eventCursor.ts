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
      await db('search_event_cursors')
        .insert({ prefix, xid: xmin ?? '0', event_id: '' })
        .onConflict('prefix')
        .ignore();
    },

    /** Up to `limit` events past the cursor, oldest first; none while the cursor does not exist. */
    async next(limit: number): Promise<CursorEvent[]> {
      const cursor: { xid: string; event_id: string } | undefined = await db('search_event_cursors')
        .where({ prefix })
        .first(db.raw('xid::text as xid'), 'event_id');
      if (!cursor) return [];
      // The cursor's own values, not a join: so that the index on (xid, id) starts at the cursor.
      const { rows } = await db.raw(
        `select id, xid::text as xid, data from events
          where (xid, id) > (?::xid8, ?) and xid < pg_snapshot_xmin(pg_current_snapshot())
          order by events.xid, events.id limit ?`, // (events.xid: the column, not the text of it selected)
        [cursor.xid, cursor.event_id, limit],
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
