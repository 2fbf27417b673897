import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { openDatabase } from '../../src/db';
import { migrationSource } from '../../src/db/migrations';
import { databaseKind } from './system';

/** The migrations whose names pass `keep` (e.g. those before the one under test): a schema as it was. */
export const migrationsWhere = (keep: (name: string) => boolean): Knex.MigrationSource<string> => ({
  ...migrationSource,
  getMigrations: async (loaders) => (await migrationSource.getMigrations(loaders)).filter(keep),
});

/** An empty database of the test's own, with no migrations run: a fresh PGlite, or a scratch PostgreSQL database. */
export async function openScratchDatabase(label: string): Promise<{ knex: Knex; close(): Promise<void> }> {
  if (databaseKind === 'pglite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `signet-${label}-`));
    const database = await openDatabase({ DATABASE_URL: undefined, DATABASE_POOL_MAX: 2, dataDir: dir });
    return {
      knex: database.knex,
      async close() {
        await database.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const admin = knexFactory({ client: 'pg', connection: process.env.DATABASE_URL, pool: { min: 0, max: 1 } });
  const name = `signet_${label.replaceAll('-', '_')}_${process.pid}`;
  await admin.raw(`drop database if exists ${name} with (force)`);
  await admin.raw(`create database ${name}`);
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  const knex = knexFactory({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 2 } });
  return {
    knex,
    async close() {
      await knex.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

/**
 * A migration test's database: before the describe's tests, a database of their own (openScratchDatabase)
 * migrated by `migrations` (the schema as it was before the migration under test) and handed to `opened`;
 * closed after them. Call it in the describe.
 */
export function scratchDatabaseMigratedBy(label: string, migrations: Knex.MigrationSource<string>, opened: (knex: Knex) => void) {
  let close: (() => Promise<void>) | undefined;
  before(async () => {
    const database = await openScratchDatabase(label);
    close = database.close;
    await database.knex.migrate.latest({ migrationSource: migrations });
    opened(database.knex);
  });
  after(() => close?.());
}
