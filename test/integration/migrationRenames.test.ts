import { expect } from 'chai';
import type { Knex } from 'knex';
import { migrateLatest } from '../../src/db';
import { formerNames, migrationSource } from '../../src/db/migrations';
import { openScratchDatabase } from '../support/scratchDatabase';

const currentName = (name: string) => formerNames[name] ?? name;
const formerName = Object.fromEntries(Object.entries(formerNames).map(([former, current]) => [current, former]));

/** The migrations as a database made before the renames applied them: under their former names, in those names' order. */
const sourceWithFormerNames: Knex.MigrationSource<string> = {
  getMigrations: async (loaders) => (await migrationSource.getMigrations(loaders)).map((name) => formerName[name] ?? name).sort(),
  getMigrationName: (name) => name,
  getMigration: (name) => migrationSource.getMigration(currentName(name)),
};

describe('migrations renamed to when they were written', function () {
  this.timeout(120_000);
  let database: Awaited<ReturnType<typeof openScratchDatabase>>;

  before(async () => {
    database = await openScratchDatabase('migration-renames');
    await database.knex.migrate.latest({ migrationSource: sourceWithFormerNames });
  });

  after(() => database?.close());

  it('a database made under the former names is upgraded: its rows carry the new names and nothing runs again', async () => {
    const { knex } = database;
    const before = await knex('knex_migrations').orderBy('id').pluck('name');
    expect(before).to.include.members(Object.keys(formerNames));

    expect(await migrateLatest(knex), 'migrations run again').to.deep.equal([]);
    const after: string[] = await knex('knex_migrations').orderBy('id').pluck('name');
    expect(after).to.deep.equal(before.map(currentName));
    expect([...after].sort()).to.deep.equal(await migrationSource.getMigrations([]));

    expect(await migrateLatest(knex), 'a second start').to.deep.equal([]);
    expect(await knex('knex_migrations').orderBy('id').pluck('name')).to.deep.equal(after);
  });
});
