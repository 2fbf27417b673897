import { expect } from 'chai';
import type { Knex } from 'knex';
import { migrationSource } from '../../src/db/migrations';
import { searchPostgres } from '../../src/search/postgres';
import { SearchQuerySchema } from '../../src/search/schema';
import { migrationsWhere, scratchDatabaseMigratedBy } from '../support/scratchDatabase';
import { accountRow, documentRow } from '../support/factories';
import { databaseKind } from '../support/system';

const MIGRATION = '20261127053600_text_compression_lz4';

// Migration 20261127053600 on a database of its own: a PDF's text and the words of documents and requests
// are compressed with lz4 where PostgreSQL has it (not PGlite, which keeps pglz and runs the migration all
// the same), texts stay readable and found either way, and the migration goes down again.
describe(`migration ${MIGRATION}: texts and their words compressed with lz4 where PostgreSQL has it`, function () {
  this.timeout(120_000);
  let knex: Knex;
  scratchDatabaseMigratedBy(
    'text-compression-migration',
    migrationsWhere((name) => name < MIGRATION),
    (opened) => (knex = opened),
  );

  /** Each column's compression method: '' the server's default (pglz), 'l' lz4. */
  const methods = async () =>
    (
      await knex.raw(
        `select attrelid::regclass::text || '.' || attname as "column", attcompression::text as method from pg_attribute
          where (attrelid = 'documents'::regclass and attname in ('body_text', 'search_vector'))
             or (attrelid = 'signing_requests'::regclass and attname = 'search_vector')
          order by 1`,
      )
    ).rows.map((row: { column: string; method: string }) => `${row.column}: ${row.method}`);
  const TEXT = 'The tenant pays the rent on the first day of each month. '.repeat(1000); // 57 KB, stored out of line
  const storedWith = async (id: string) =>
    (await knex('documents').where({ id }).first(knex.raw('pg_column_compression(body_text) as method'), knex.raw('length(body_text) as length'))) as {
      method: string | null;
      length: number;
    };
  const found = async (q: string) =>
    (await searchPostgres(knex, 'acct_1', SearchQuerySchema.parse({ q: `${q} `, type: 'document' }))).hits.map((hit) => hit.id);

  it('sets lz4 on PostgreSQL and leaves PGlite as it is; texts stay readable and found, down and up again', async () => {
    const before = ['documents.body_text: ', 'documents.search_vector: ', 'signing_requests.search_vector: '];
    expect(await methods()).to.deep.equal(before);
    await knex('accounts').insert(accountRow());
    await knex('documents').insert(documentRow('doc_1', 'acct_1', 'lease.pdf', TEXT));

    await knex.migrate.latest({ migrationSource });
    const lz4 = databaseKind === 'postgres';
    expect(await methods()).to.deep.equal(lz4 ? before.map((column) => `${column}l`) : before);
    await knex('documents').insert(documentRow('doc_2', 'acct_1', 'deed.pdf', TEXT.replaceAll('tenant', 'lodger')));
    expect(await storedWith('doc_1')).to.deep.equal({ method: 'pglz', length: TEXT.length }); // written before: left as it was
    expect(await storedWith('doc_2')).to.deep.equal({ method: lz4 ? 'lz4' : 'pglz', length: TEXT.length });
    expect(await found('tenant')).to.deep.equal(['doc_1']);
    expect(await found('lodger')).to.deep.equal(['doc_2']);

    await knex.migrate.rollback({ migrationSource });
    expect(await methods()).to.deep.equal(before);
    expect(await storedWith('doc_2'), 'a value written as lz4 stays readable').to.deep.equal({ method: lz4 ? 'lz4' : 'pglz', length: TEXT.length });
    await knex.migrate.latest({ migrationSource });
    expect(await found('lodger')).to.deep.equal(['doc_2']);
  });
});
