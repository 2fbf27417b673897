import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { openDatabase } from '../../src/db';
import { databaseKind } from './system';

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
