import type { Knex } from 'knex';

// The people who sign in to the console (/app): each owns one account; their sessions and password resets.
export async function up(knex: Knex) {
  await knex.schema.createTable('users', (table) => {
    table.text('id').primary().comment('user_… TypeID');
    table.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE').comment('the account this person owns');
    table.text('email').notNullable().comment('sign-in e-mail, stored lower-case');
    table.text('password_hash').comment('scrypt$N$r$p$salt$hash (base64url); null until a password is set');
    table.timestamp('email_verified_at', { useTz: true, precision: 3 }).comment('null until the address is confirmed');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.unique(['email'], { indexName: 'users_email_unique' });
    table.index(['account_id'], 'users_account_id_index');
  });

  await knex.schema.createTable('console_sessions', (table) => {
    table.text('token_hash').primary().comment('hex SHA-256 of the session token; the token itself is only in the cookie');
    table.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable().comment('the session ends here, used or not');
    table.index(['user_id'], 'console_sessions_user_id_index');
    table.index(['expires_at'], 'console_sessions_expires_at_index');
  });

  await knex.schema.createTable('password_resets', (table) => {
    table.text('token_hash').primary().comment('hex SHA-256 of the token e-mailed in the reset link');
    table.text('user_id').notNullable().references('users.id').onDelete('CASCADE');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    table.timestamp('used_at', { useTz: true, precision: 3 }).comment('set once; a used link never works again');
    table.index(['user_id'], 'password_resets_user_id_index');
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('password_resets');
  await knex.schema.dropTable('console_sessions');
  await knex.schema.dropTable('users');
}
