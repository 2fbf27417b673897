import type { Knex } from 'knex';

export async function up(knex: Knex) {
  // Where e-mails go when neither SendGrid nor SMTP is configured (development and tests); read at /dev/mail.
  await knex.schema.createTable('mail_outbox', (table) => {
    table.bigIncrements('id').primary().comment('sequence number, newest highest');
    table.text('idempotency_key').notNullable().comment('one row per key: a retried send stores nothing new');
    table.text('to_address').notNullable().comment('recipient, "Name" <address> or an address');
    table.text('from_address').notNullable().comment('sender, "Name" <address> or an address');
    table.text('subject').notNullable().comment('subject line as sent');
    table.text('text').notNullable().comment('plain-text body');
    table.text('html').notNullable().comment('HTML body');
    table.jsonb('attachments').notNullable().defaultTo('[]').comment('[{filename, contentType, size, content (base64)}]');
    table.timestamp('created_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now()).comment('when the first send stored it');
    table.unique(['idempotency_key'], { indexName: 'mail_outbox_idempotency_key_unique' });
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('mail_outbox');
}
