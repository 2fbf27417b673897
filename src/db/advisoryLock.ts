import type { Knex } from 'knex';
import type { ProgressLog } from '../logger';

/**
 * Runs `work` while this process holds the PostgreSQL advisory lock `name`, so that several processes
 * starting at once (api and workers on an empty database) do one-time work one after the other. The
 * lock is a session lock on one pooled connection, taken before anything else exists: tables included.
 * A process that has to wait says so. On the embedded PGlite every connection shares one session, so
 * the lock is always granted: one process owns that database anyway.
 */
const LOCK_POLL_MS = 200;

export async function withAdvisoryLock<T>(knex: Knex, name: string, logger: ProgressLog, work: () => Promise<T>): Promise<T> {
  const connection = await knex.client.acquireConnection();
  const lock = (sql: string) => knex.raw(`select ${sql}(hashtext(?)) as ok`, [`signet:${name}`]).connection(connection);
  try {
    const { rows } = await lock('pg_try_advisory_lock');
    if (!rows[0].ok) {
      logger.info({ lock: name }, `waiting for another process to finish: ${name}`);
      // Asked again and again, not waited for in one statement: a statement blocked on the lock holds a
      // snapshot, and a migration building an index CONCURRENTLY waits for every older snapshot, the
      // waiters' too, while they wait for it (processes started at once on one database hung so).
      while (!(await lock('pg_try_advisory_lock')).rows[0].ok) await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
      logger.info({ lock: name }, `done waiting: ${name}`);
    }
    try {
      return await work();
    } finally {
      await lock('pg_advisory_unlock');
    }
  } finally {
    await knex.client.releaseConnection(connection);
  }
}
