import type { Knex } from 'knex';

// Many people in one account. Each person (a users row) is a member of one account with a role; exactly one
// member is its owner (today's one user per account, whose role the default gives). Invitations bring the
// others in. API keys and signing requests name who made them, so that past actions stay attributed after
// their maker leaves. A role change or removal narrows the keys its member made: the cached keys of every
// api process are dropped, as for any change to api_keys (migration 20261121001400).
export async function up(knex: Knex) {
  await knex.schema.alterTable('users', (table) => {
    table.text('role').notNullable().defaultTo('owner').comment('owner | admin | sender | viewer (src/domain/roles.ts)');
  });
  await knex.raw(`alter table users add constraint users_role_check check (role in ('owner', 'admin', 'sender', 'viewer'))`);
  await knex.raw(`create unique index users_one_owner on users (account_id) where role = 'owner'`);
  await knex.raw(`create trigger users_auth_changed after update of role, account_id or delete
    on users for each statement execute function notify_auth_changed()`);

  await knex.schema.createTable('invitations', (table) => {
    table.text('id').primary().comment('inv_… TypeID');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    table.text('email').notNullable().comment('the address invited, stored lower-case; whoever follows the link proves it');
    table.text('role').notNullable().comment('admin | sender | viewer: the role the invitee joins with');
    table.text('token_hash').notNullable().comment('hex SHA-256 of the token e-mailed in the link');
    table.text('invited_by').comment('the member who invited (user id), null once they have left');
    table.text('invited_by_email').comment('who invited, as shown in the e-mail and kept after they leave');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    table.timestamp('accepted_at', { useTz: true, precision: 3 }).comment('set once; an accepted link never works again');
    table.timestamp('revoked_at', { useTz: true, precision: 3 }).comment('set once, while not accepted');
    table.unique(['token_hash'], { indexName: 'invitations_token_hash_unique' });
    table.index(['account_id'], 'invitations_account_id_index');
  });
  await knex.raw(`alter table invitations add constraint invitations_role_check check (role in ('admin', 'sender', 'viewer'))`);

  await knex.schema.alterTable('api_keys', (table) => {
    table.text('created_by').references('users.id').onDelete('SET NULL').comment('the member who made it; null: made by the CLI or before members');
    table.text('created_by_email').comment('who made it, kept after they leave');
  });
  await knex.schema.alterTable('signing_requests', (table) => {
    table.jsonb('sent_by').comment('who sent it: {type: member | api_key, …} (src/domain/actors.ts); null before members');
  });
  await knex.schema.alterTable('bulk_sends', (table) => {
    table.jsonb('sent_by').comment('who made the job, and so sent each of its requests');
  });
}

export async function down(knex: Knex) {
  await knex.schema.alterTable('bulk_sends', (table) => table.dropColumn('sent_by'));
  await knex.schema.alterTable('signing_requests', (table) => table.dropColumn('sent_by'));
  await knex.schema.alterTable('api_keys', (table) => {
    table.dropColumn('created_by');
    table.dropColumn('created_by_email');
  });
  await knex.schema.dropTable('invitations');
  await knex.raw('drop trigger users_auth_changed on users');
  // Down to one person per account: its owner.
  await knex('users').whereNot({ role: 'owner' }).delete();
  await knex.raw('drop index users_one_owner');
  await knex.schema.alterTable('users', (table) => table.dropColumn('role'));
}
