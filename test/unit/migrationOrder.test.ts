import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { formerNames, migrationSource } from '../../src/db/migrations';

const root = path.resolve(__dirname, '../..');
const folder = 'src/db/migrations';
const isMigration = (file: string) => /^\d{14}_\w+\.ts$/.test(file);
const nameOf = (file: string) => file.replace(/\.ts$/, '');

/** The migrations on the branch `main`, under their current names; undefined where git or `main` is not at hand. */
function migrationsOnMain(): string[] | undefined {
  try {
    const files = execFileSync('git', ['ls-tree', '--name-only', 'main', `${folder}/`], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return files
      .split('\n')
      .map((file) => path.basename(file))
      .filter(isMigration)
      .map(nameOf)
      .map((name) => formerNames[name] ?? name);
  } catch {
    return undefined;
  }
}

// knex runs the migrations in the order src/db/migrations/index.ts lists them, and a database that has
// applied some runs only the rest. The rule that keeps every database on the same path: a migration is
// named after the moment it was written (never a date still to come), the list is in name order, and a
// new one sorts after every migration that is already on `main` (it is appended, never slipped in).
describe('migration names', () => {
  const listed = () => migrationSource.getMigrations([]);

  it('the list is every file of src/db/migrations, in name order', async () => {
    const files = fs.readdirSync(path.join(root, folder)).filter(isMigration).map(nameOf);
    expect(await listed()).to.deep.equal([...files].sort());
    expect(await listed()).to.deep.equal([...(await listed())].sort());
  });

  it('none is dated after today', async () => {
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    expect((await listed()).filter((name) => name.slice(0, 8) > today)).to.deep.equal([]);
  });

  it('a migration that is not on main yet sorts after every one that is', async function () {
    const onMain = migrationsOnMain();
    if (!onMain?.length) this.skip();
    const last = [...onMain!].sort().at(-1)!;
    const added = (await listed()).filter((name) => !onMain!.includes(name));
    expect(
      added.filter((name) => name < last),
      `must sort after ${last}`,
    ).to.deep.equal([]);
  });

  it('every former name is gone from the list, and renames to one that is in it', async () => {
    for (const [former, current] of Object.entries(formerNames)) {
      expect(await listed())
        .to.include(current)
        .and.not.include(former);
    }
  });
});
