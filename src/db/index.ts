import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import type { Config } from '../config';
import { openEmbeddedDatabase } from './embedded';
import { migrationSource } from './migrations';

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
    pool: { min: 0, max: Math.min(config.DATABASE_POOL_MAX, 8) },
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

export async function migrateLatest(knex: Knex) {
  const [, applied] = await knex.migrate.latest({ migrationSource });
  return applied as string[];
}
