import { expect } from 'chai';
import type { Knex } from 'knex';
import { authenticateApiKey, hashKey } from '../../src/apiKeys/service';
import { migrationsWhere, scratchDatabaseMigratedBy } from '../support/scratchDatabase';

const MIGRATION = '20261206000000_members';

const earlier = migrationsWhere((name) => name < MIGRATION);
const through = migrationsWhere((name) => name <= MIGRATION);

// Migration 20261206000000 on a database of its own (a fresh PGlite, or a scratch PostgreSQL database):
// today's accounts become accounts with one owner, and their keys work as before.
describe(`migration ${MIGRATION}: members and roles`, function () {
  this.timeout(120_000);
  let knex: Knex;
  scratchDatabaseMigratedBy('migration', earlier, (opened) => (knex = opened));
  const secret = `sk_live_${'A'.repeat(43)}`;

  it('makes every existing person the owner of their account, and keeps their keys working with every scope', async () => {
    await knex('accounts').insert({ id: 'acct_one', email: 'one@example.com', plan: 'free', email_verified_at: new Date() });
    await knex('users').insert({ id: 'user_one', account_id: 'acct_one', email: 'one@example.com', password_hash: 'scrypt$x' });
    await knex('api_keys').insert({ id: 'key_one', account_id: 'acct_one', name: 'old', prefix: secret.slice(0, 16), key_hash: hashKey(secret) });

    await knex.migrate.latest({ migrationSource: through });

    expect(await knex('users').select('id', 'role')).to.deep.equal([{ id: 'user_one', role: 'owner' }]);
    const authenticated = await authenticateApiKey(knex, secret);
    expect(authenticated).to.deep.include({ keyId: 'key_one', scopes: null });
    expect(authenticated!.actor).to.deep.equal({ type: 'api_key', id: 'key_one', name: 'old', memberId: null, memberEmail: null });
    // One owner an account, and only the four roles.
    const second = await knex('users')
      .insert({ id: 'user_two', account_id: 'acct_one', email: 'two@example.com', role: 'owner' })
      .catch((error) => error);
    expect(second).to.include({ code: '23505', constraint: 'users_one_owner' });
    const odd = await knex('users')
      .insert({ id: 'user_two', account_id: 'acct_one', email: 'two@example.com', role: 'superuser' })
      .catch((error) => error);
    expect(odd).to.include({ code: '23514' });
    await knex('users').insert({ id: 'user_two', account_id: 'acct_one', email: 'two@example.com', role: 'viewer' });
  });

  it('goes down to one person per account, its owner, and up again', async () => {
    await knex.migrate.down({ migrationSource: through });
    expect(await knex('users').select('id')).to.deep.equal([{ id: 'user_one' }]);
    expect(await knex.schema.hasColumn('users', 'role')).to.equal(false);
    expect(await knex.schema.hasTable('invitations')).to.equal(false);
    expect((await authenticateApiKeyBefore(knex, secret))?.id).to.equal('key_one');
    await knex.migrate.latest({ migrationSource: through });
    expect(await knex('users').select('id', 'role')).to.deep.equal([{ id: 'user_one', role: 'owner' }]);
    expect((await authenticateApiKey(knex, secret))?.scopes).to.equal(null);
  });
});

/** The key's row as the version before this migration found it (its query names no column this migration adds). */
const authenticateApiKeyBefore = (knex: Knex, presented: string) =>
  knex('api_keys')
    .where({ prefix: presented.slice(0, 16), key_hash: hashKey(presented) })
    .first('id');
