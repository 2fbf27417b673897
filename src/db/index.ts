import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Config } from '../config';
import type { ProgressLog } from '../logger';
import { withAdvisoryLock } from './advisoryLock';
import { openEmbeddedDatabase } from './embedded';
import { formerNames, migrationSource } from './migrations';

// bigint counts and sizes come back as JS numbers; they stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export type Db = Knex;

export interface Database {
  knex: Knex;
  embedded: boolean;
  close(): Promise<void>;
}

export async function openDatabase(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX' | 'dataDir'>): Promise<Database> {
  if (config.DATABASE_URL) {
    const knex = knexFactory({
      client: 'pg',
      connection: config.DATABASE_URL,
      pool: { min: 0, max: config.DATABASE_POOL_MAX },
    });
    return { knex, embedded: false, close: () => knex.destroy() };
  }
  const embedded = await openEmbeddedDatabase(config.dataDir);
  const knex = knexFactory({
    client: 'pg',
    connection: { host: embedded.socketDir, user: 'postgres', database: 'postgres' },
    pool: { min: 0, max: Math.min(config.DATABASE_POOL_MAX, 8), afterCreate: unnamePreparedStatements },
  });
  return {
    knex,
    embedded: true,
    async close() {
      await knex.destroy();
      await embedded.close();
    },
  };
}

// pglite-socket runs every connection in PGlite's one session, where a named prepared statement can
// exist only once; a second connection preparing the same name (rate-limiter-flexible does) would fail.
// Unnamed statements behave the same on one session or many.
function unnamePreparedStatements(connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) {
  const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
  (connection as { query: unknown }).query = (config: unknown, ...rest: unknown[]) =>
    query(config && typeof config === 'object' && 'name' in config ? { ...config, name: undefined } : config, ...rest);
  done(null, connection);
}

/**
 * One fixed statement, run straight on a pooled connection (or the transaction's) and prepared once per
 * connection under `name`: for the hottest statements (a document read, an event written, the due
 * deliveries fetched), where knex's query building and runner cost more CPU than PostgreSQL spends answering.
 */
export async function queryPrepared<Row>(db: Knex, name: string, text: string, values: unknown[]): Promise<Row[]> {
  const connection: pg.Client = await db.client.acquireConnection();
  try {
    return (await connection.query<Row & pg.QueryResultRow>({ name, text, values })).rows;
  } finally {
    await db.client.releaseConnection(connection);
  }
}

/** Applies pending migrations; processes starting at once on one database take turns (see withAdvisoryLock). */
export async function migrateLatest(knex: Knex, logger: ProgressLog = silent) {
  return withAdvisoryLock(knex, 'migrations', logger, async () => {
    await renameAppliedMigrations(knex);
    const [, applied] = await knex.migrate.latest({ migrationSource });
    return applied as string[];
  });
}

/** Renames the rows of migrations applied under a former name (see formerNames), at once or not at all; a no-op once done. */
export async function renameAppliedMigrations(knex: Knex) {
  if (!(await knex.schema.hasTable('knex_migrations'))) return;
  await knex.transaction(async (trx) => {
    for (const [former, current] of Object.entries(formerNames)) await trx('knex_migrations').where({ name: former }).update({ name: current });
  });
}

const silent: ProgressLog = { info() {} };
