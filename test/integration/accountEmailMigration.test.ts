import { expect } from 'chai';
import type { Knex } from 'knex';
import { migrationsWhere, scratchDatabaseMigratedBy } from '../support/scratchDatabase';

const MIGRATION = '20261126063200_email_verification';

const earlier = migrationsWhere((name) => name < MIGRATION);
const through = migrationsWhere((name) => name <= MIGRATION);

// Migration 20261126063200 on a database of its own (a fresh PGlite, or a scratch PostgreSQL database):
// addresses that several accounts shared before it, the attack among them.
describe(`migration ${MIGRATION}: one account per address`, function () {
  this.timeout(120_000);
  let knex: Knex;
  scratchDatabaseMigratedBy('migration', earlier, (opened) => (knex = opened));

  it('keeps each address on one account (proven with a user, proven, unproven, then the oldest), moves the others to a sub-address, and refuses new duplicates', async () => {
    const account = (id: string, email: string, createdAt: string) => knex('accounts').insert({ id, email, plan: 'free', created_at: createdAt });
    const user = (id: string, accountId: string, email: string, verified: boolean) =>
      knex('users').insert({ id, account_id: accountId, email, password_hash: 'scrypt$x', email_verified_at: verified ? new Date() : null });
    // The attack before the owner came: the operator's Owner@…, then a console sign-up as owner@….
    await account('acct_operator', 'Owner@claimed.example', '2026-01-01');
    await account('acct_attacker', 'owner@claimed.example', '2026-01-02');
    await user('user_attacker', 'acct_attacker', 'owner@claimed.example', false);
    // After the owner came: their reset proved the console account's address (the one they have used since).
    await account('acct_cli', 'boss@used.example', '2026-01-01');
    await account('acct_console', 'BOSS@used.example', '2026-01-02');
    await user('user_console', 'acct_console', 'boss@used.example', true);
    // The CLI made three accounts for one address.
    await account('acct_second', 'ops@many.example', '2026-01-02');
    await account('acct_first', 'ops@many.example', '2026-01-01');
    await account('acct_third', 'OPS@many.example', '2026-01-03');
    // Alone: an unproven sign-up, a proven one.
    await account('acct_unproven', 'new@alone.example', '2026-01-01');
    await user('user_unproven', 'acct_unproven', 'new@alone.example', false);
    await account('acct_proven', 'old@alone.example', '2026-01-01');
    await user('user_proven', 'acct_proven', 'old@alone.example', true);

    await knex.migrate.latest({ migrationSource: through });

    const accounts = Object.fromEntries(
      (await knex('accounts').select('id', 'email', 'email_verified_at')).map((row) => [row.id, [row.email, row.email_verified_at !== null]]),
    );
    expect(accounts).to.deep.equal({
      acct_operator: ['Owner@claimed.example', true],
      acct_attacker: ['owner+acct_attacker@claimed.example', false],
      acct_console: ['BOSS@used.example', true],
      acct_cli: ['boss+acct_cli@used.example', true],
      acct_first: ['ops@many.example', true],
      acct_second: ['ops+acct_second@many.example', true],
      acct_third: ['OPS+acct_third@many.example', true],
      acct_unproven: ['new@alone.example', false],
      acct_proven: ['old@alone.example', true],
    });
    const users = Object.fromEntries((await knex('users').select('id', 'email')).map((row) => [row.id, row.email]));
    expect(users).to.deep.equal({
      user_attacker: 'owner+acct_attacker@claimed.example',
      user_console: 'boss@used.example',
      user_unproven: 'new@alone.example',
      user_proven: 'old@alone.example',
    });

    for (const taken of ['OWNER@claimed.example', 'ops@MANY.example']) {
      const refused = await knex('accounts')
        .insert({ id: 'acct_again', email: taken, plan: 'free' })
        .catch((error) => error);
      expect(refused, taken).to.include({ code: '23505', constraint: 'accounts_email_lower_unique' });
    }
    const refused = await knex('users')
      .insert({ id: 'user_again', account_id: 'acct_operator', email: 'Old@alone.example' })
      .catch((error) => error);
    expect(refused).to.include({ code: '23505', constraint: 'users_email_lower_unique' });
  });

  it('goes down and up again', async () => {
    await knex.migrate.down({ migrationSource: through });
    expect((await knex('users').where({ id: 'user_console' }).first()).email_verified_at).to.be.an.instanceOf(Date);
    expect((await knex('users').where({ id: 'user_unproven' }).first()).email_verified_at).to.equal(null);
    await knex.migrate.latest({ migrationSource: through });
    expect(await knex('email_verifications')).to.deep.equal([]);
  });
});
