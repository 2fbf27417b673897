import type { Knex } from 'knex';

// PostgreSQL compresses a large value with pglz unless told otherwise. Measured on the bench's PDF texts
// (60 KB), an insert took 1.3 ms of the database's CPU with pglz, which then kept the text uncompressed
// (it saved less than a quarter), and 0.2 ms with lz4, which kept it compressed. A text's words
// (search_vector, on the PostgreSQL backend) are as large, and read on every phrase search. Only values
// written from now on are compressed so: nothing is rewritten, and each table is locked for a moment.
// A PostgreSQL built without lz4 (the embedded PGlite) keeps pglz.

const COLUMNS = [
  ['documents', 'body_text'],
  ['documents', 'search_vector'],
  ['signing_requests', 'search_vector'],
];

const setCompression = (method: 'lz4' | 'default') =>
  COLUMNS.map(([table, column]) => `alter table ${table} alter column ${column} set compression ${method};`).join('\n');

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`do $$ begin
    ${setCompression('lz4')}
  exception when feature_not_supported then null;
  end $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(setCompression('default'));
}
