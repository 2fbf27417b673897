import type { Knex } from 'knex';

// An e-mail address belongs to one account, whatever its letter case, and an account proves its address
// before it can send anything: a console sign-up by a link (email_verifications), an account the
// operator makes with the CLI by the operator's word. The proof moves from users to accounts, since the
// account's address is the one signers see as the sender and the one the API key's account is checked by.
export async function up(knex: Knex) {
  await knex.schema.alterTable('accounts', (table) => {
    table
      .timestamp('email_verified_at', { useTz: true, precision: 3 })
      .comment('when the address was proven (a link, a password reset) or vouched for (the operator); null: the account only reads');
  });
  // An account with no console user was made by the operator, who vouches for its address; the others
  // are as proven as their user (a reset link was the only proof until now).
  await knex.raw(`update accounts a set email_verified_at = case
      when exists (select 1 from users u where u.account_id = a.id) then (select max(u.email_verified_at) from users u where u.account_id = a.id)
      else a.created_at end`);

  // Addresses shared by several accounts (the CLI made them freely, a console sign-up could take an
  // operator-made address in another letter case): one account keeps the address, in this order of
  // claim: proven with a console user, proven (the operator's), unproven; then the oldest. Each other
  // account keeps working under a sub-address of the same mailbox, local+<account id>@domain (delivered
  // to the same inbox by most providers), so nothing is lost and the operator can see what happened.
  await knex.raw(`
    with ranked as (
      select a.id, row_number() over (
        partition by lower(a.email)
        order by a.email_verified_at is null, not exists (select 1 from users u where u.account_id = a.id), a.created_at, a.id
      ) as place
      from accounts a
    )
    update accounts a set
      email = case when position('@' in a.email) > 0 then regexp_replace(a.email, '@([^@]*)$', '+' || a.id || '@\\1') else a.email || '+' || a.id end,
      updated_at = now()
    from ranked where ranked.id = a.id and ranked.place > 1`);
  // A console user signs in with their account's address.
  await knex.raw('update users u set email = lower(a.email), updated_at = now() from accounts a where u.account_id = a.id and u.email <> lower(a.email)');
  await knex.raw('create unique index accounts_email_lower_unique on accounts (lower(email))');
  await knex.raw('alter table users drop constraint users_email_unique');
  await knex.raw('create unique index users_email_lower_unique on users (lower(email))');
  await knex.schema.alterTable('users', (table) => {
    table.dropColumn('email_verified_at');
  });

  await knex.schema.createTable('email_verifications', (table) => {
    table.text('token_hash').primary().comment('hex SHA-256 of the token e-mailed in the verification link');
    table
      .text('user_id')
      .notNullable()
      .references('users.id')
      .onDelete('CASCADE')
      .comment('the person who signed up; only their session (or password) confirms');
    table.text('email').notNullable().comment('the address the link was sent to: it proves that one only');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('expires_at', { useTz: true, precision: 3 }).notNullable();
    table.timestamp('used_at', { useTz: true, precision: 3 }).comment('set once; a used link never works again');
    table.index(['user_id'], 'email_verifications_user_id_index');
  });
}

// Addresses renamed as duplicates keep their new names.
export async function down(knex: Knex) {
  await knex.schema.dropTable('email_verifications');
  await knex.schema.alterTable('users', (table) => {
    table.timestamp('email_verified_at', { useTz: true, precision: 3 }).comment('null until the address is confirmed');
  });
  await knex.raw('update users u set email_verified_at = a.email_verified_at from accounts a where u.account_id = a.id');
  await knex.raw('drop index users_email_lower_unique');
  await knex.schema.alterTable('users', (table) => {
    table.unique(['email'], { indexName: 'users_email_unique' });
  });
  await knex.raw('drop index accounts_email_lower_unique');
  await knex.schema.alterTable('accounts', (table) => {
    table.dropColumn('email_verified_at');
  });
}
