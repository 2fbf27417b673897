import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { openDatabase, type Database } from '../../src/db';

// The embedded default serves one PGlite session to many connections (the server's pool, the CLI).
// These show that transactions from different connections still never see or undo each other's work.
describe('embedded PGlite shared over its socket', () => {
  let dataDir: string;
  let server: Database;
  let cli: Database;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-pglite-'));
    const config = { dataDir, DATABASE_URL: undefined, DATABASE_POOL_MAX: 4 };
    server = await openDatabase(config); // opens PGlite and serves the socket
    cli = await openDatabase(config); // finds the socket, like `npx signet` while `npm start` runs
    await server.knex.schema.createTable('counters', (table) => {
      table.text('name').primary();
      table.integer('value').notNullable();
    });
    await server.knex('counters').insert({ name: 'shared', value: 0 });
  });

  after(async () => {
    await cli.close();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('the second opener connects to the first one’s PGlite instead of opening its own', () => {
    expect(server.embedded).to.equal(true);
    expect(cli.embedded).to.equal(true);
    expect(fs.existsSync(path.join(dataDir, '.s.PGSQL.5432'))).to.equal(true);
  });

  it('another connection never reads a row that is later rolled back', async () => {
    await cli.knex.raw('select 1'); // the CLI's connection is open before the transaction starts (the socket starts one only between transactions)
    const transaction = await server.knex.transaction();
    await transaction('counters').insert({ name: 'uncommitted', value: 1 });
    // The read is sent while the transaction holds the row (knex emits 'query' as it hands the query to
    // its connection), and only then is the transaction rolled back: the read waits for it, and sees nothing.
    const sent = new Promise((resolve) => cli.knex.once('query', resolve));
    const read = cli
      .knex('counters')
      .where({ name: 'uncommitted' })
      .select('name')
      .then((rows) => rows);
    await sent;
    await transaction.rollback();
    expect(await read).to.deep.equal([]);
  });

  it('parameterised queries and transactions from many connections at once each get their own answer', async () => {
    // Each query is Parse, Bind, Execute, Sync on the one shared session; another connection's Parse
    // between them would replace the unnamed statement ("unnamed prepared statement does not exist").
    const work = Array.from({ length: 120 }, (_, i) => {
      const db = (i % 2 ? server : cli).knex;
      if (i % 3) return db.raw('select ?::int + 1 as n', [i]).then((result) => result.rows[0].n);
      return db.transaction(async (trx) => {
        await trx('counters').insert({ name: `t${i}`, value: i });
        return (
          (
            await trx('counters')
              .where({ name: `t${i}` })
              .first('value')
          ).value + 1
        );
      });
    });
    expect(await Promise.all(work)).to.deep.equal(Array.from({ length: 120 }, (_, i) => i + 1));
  });

  it('a rollback on one connection does not undo another connection’s committed write', async () => {
    const failing = cli.knex.transaction(async (trx) => {
      await trx('counters').insert({ name: 'doomed', value: 1 });
      throw new Error('roll back');
    });
    const committed = server.knex.transaction((trx) => trx('counters').insert({ name: 'kept', value: 1 }));
    await Promise.allSettled([failing, committed]);
    const names = (await server.knex('counters').select('name')).map((row) => row.name);
    expect(names).to.include('kept');
    expect(names).not.to.include('doomed');
  });

  it('concurrent read-modify-write transactions from two clients lose no update', async () => {
    const increment = (db: Database) =>
      db.knex.transaction(async (trx) => {
        const { value } = await trx('counters').where({ name: 'shared' }).first('value');
        await new Promise((resolve) => setImmediate(resolve));
        await trx('counters')
          .where({ name: 'shared' })
          .update({ value: value + 1 });
      });
    await Promise.all(Array.from({ length: 40 }, (_, i) => increment(i % 2 ? server : cli)));
    const { value } = await server.knex('counters').where({ name: 'shared' }).first('value');
    expect(value).to.equal(40);
  });
});
