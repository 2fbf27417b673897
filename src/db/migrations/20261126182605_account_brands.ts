import type { Knex } from 'knex';

// An account's brand: what signers see in place of Signet's name, on the signing page and in every
// e-mail to them. One row per account that set any of it; the logo's bytes are kept here, as documents'
// PDFs are, and served from this origin under their SHA-256.
export async function up(knex: Knex) {
  await knex.schema.createTable('account_brands', (table) => {
    table.text('account_id').primary().references('accounts.id').onDelete('CASCADE');
    table.text('name').comment('shown in place of "Signet"; null: Signet');
    table.text('accent_color').comment('#rrggbb, at least 4.5:1 against white (buttons, links)');
    table.text('email_footer').comment('the closing line of every e-mail to signers');
    table.text('support_email').comment('where signers may write with questions');
    table.binary('logo').comment('PNG, or SVG as sanitized, at most 200 KB');
    table.text('logo_type').comment('image/png | image/svg+xml');
    table.text('logo_sha256').comment('hex SHA-256 of logo: its URL, /brand-logos/<sha256>');
    table.timestamp('updated_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    table.index(['logo_sha256'], 'account_brands_logo_index');
  });
}

export async function down(knex: Knex) {
  await knex.schema.dropTable('account_brands');
}
