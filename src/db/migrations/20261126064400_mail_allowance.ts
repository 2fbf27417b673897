import type { Knex } from 'knex';

// E-mails are limited twice: a signer gets at most one e-mail with their link an hour (a reminder waits
// an hour after the invitation or the last reminder), and an account sends at most its plan's e-mails
// per sliding hour (src/mail/allowance.ts). One request to 50 signers and 15 reminds had queued 750.
export async function up(knex: Knex) {
  await knex.schema.alterTable('signers', (table) => {
    table
      .timestamp('last_mailed_at', { useTz: true, precision: 3 })
      .comment('when the last invitation or reminder went out: the next reminder waits an hour from it');
  });
  await knex.raw('update signers set last_mailed_at = notified_at');
  await knex.schema.createTable('account_mail_log', (table) => {
    table.text('idempotency_key').primary().comment("the e-mail's own key (as mail_outbox and the transports have it): a retried send counts once");
    table.text('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE').comment('whose signing request sent it');
    table
      .timestamp('counted_at', { useTz: true, precision: 3 })
      .notNullable()
      .defaultTo(knex.fn.now())
      .comment('when it was counted; rows older than an hour are deleted as the account sends more');
    table.index(['account_id', 'counted_at'], 'account_mail_log_account_counted_index');
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('account_mail_log');
  await knex.schema.alterTable('signers', (table) => {
    table.dropColumn('last_mailed_at');
  });
}
