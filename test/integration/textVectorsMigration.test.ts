import { expect } from 'chai';
import type { Knex } from 'knex';
import { migrationSource } from '../../src/db/migrations';
import { searchPostgres } from '../../src/search/postgres';
import { SearchQuerySchema, type SearchType } from '../../src/search/schema';
import { migrationsWhere, scratchDatabaseMigratedBy } from '../support/scratchDatabase';
import { accountRow, documentRow, insertRequestRows } from '../support/factories';

const MIGRATION = '20261127012900_text_vectors_by_backend';

// Migration 20261127012900 on a database of its own (a fresh PGlite, or a scratch PostgreSQL database):
// documents and requests made before it are found by their text as they were, a trigger keeps
// documents.search_vector from then on, following body_text_in_vector, and the migration goes down again.
describe(`migration ${MIGRATION}: search_vector holds a document's text when body_text_in_vector says so`, function () {
  this.timeout(120_000);
  let knex: Knex;
  scratchDatabaseMigratedBy(
    'text-vectors-migration',
    migrationsWhere((name) => name < MIGRATION),
    (opened) => (knex = opened),
  );

  /** The rows whose search_vector holds the word, as the column alone says. */
  const holding = async (table: string, word: string) =>
    (await knex.raw(`select id from ?? where search_vector @@ to_tsquery('simple', ?) order by id`, [table, word])).rows.map((row: { id: string }) => row.id);
  const found = async (q: string, type: SearchType) =>
    (await searchPostgres(knex, 'acct_1', SearchQuerySchema.parse({ q: `${q} `, type }))).hits.map((hit) => hit.id);
  const generated = async () =>
    (await knex.raw(`select attgenerated as generated from pg_attribute where attrelid = 'documents'::regclass and attname = 'search_vector'`)).rows[0]
      .generated;
  const document = (id: string, fileName: string, text: string | null) => documentRow(id, 'acct_1', fileName, text);

  it('keeps the rows made before found by their text, follows the flag from then on, and goes down again', async () => {
    await knex('accounts').insert(accountRow());
    await knex('documents').insert([document('doc_1', 'lease.pdf', 'The tenant pays'), document('doc_2', 'inventory.pdf', 'Three chairs and a wardrobe')]);
    await insertRequestRows(knex, { id: 'sr_1', accountId: 'acct_1', documentIds: ['doc_1', 'doc_2'] });
    expect(await generated()).to.equal('s');

    await knex.migrate.latest({ migrationSource });
    expect(await generated(), 'kept by a trigger').to.equal('');
    expect(await knex('documents').orderBy('id').pluck('body_text_in_vector')).to.deep.equal([true, true]);
    expect(await found('tenant', 'document')).to.deep.equal(['doc_1']);
    expect(await found('wardrobe', 'document')).to.deep.equal(['doc_2']);
    expect(await found('wardrobe', 'signing_request')).to.deep.equal(['sr_1']);

    // Documents made, renamed and given their text afterwards.
    await knex('documents').insert(document('doc_3', 'deed.pdf', null));
    await knex('documents').where({ id: 'doc_3' }).update({ body_text: 'The garden gate' });
    await knex('documents').where({ id: 'doc_1' }).update({ file_name: 'tenancy.pdf' });
    expect(await found('garden', 'document')).to.deep.equal(['doc_3']);
    expect(await found('tenancy', 'document')).to.deep.equal(['doc_1']);
    expect(await found('lease', 'document')).to.deep.equal([]);

    // A text stored without its words (under Elasticsearch), then brought back.
    await knex('documents').where({ id: 'doc_2' }).update({ body_text_in_vector: false });
    expect(await holding('documents', 'wardrobe')).to.deep.equal([]);
    expect(await holding('documents', 'inventory'), 'its name stays').to.deep.equal(['doc_2']);
    expect(await holding('signing_requests', 'wardrobe')).to.deep.equal([]);
    expect(await holding('signing_requests', 'tenant')).to.deep.equal(['sr_1']);
    await knex('documents').where({ id: 'doc_2' }).update({ body_text: 'Four chairs and a wardrobe' }); // a new text, still out of both vectors
    expect(await holding('signing_requests', 'four')).to.deep.equal([]);
    await knex('documents').where({ id: 'doc_2' }).update({ body_text_in_vector: true });
    expect(await holding('documents', 'four')).to.deep.equal(['doc_2']);
    expect(await holding('signing_requests', 'four')).to.deep.equal(['sr_1']);

    // Down, with a text out of the vectors: the generated column holds every text again, as do the requests.
    await knex('documents').where({ id: 'doc_2' }).update({ body_text_in_vector: false });
    await knex.migrate.rollback({ migrationSource });
    expect(await generated()).to.equal('s');
    expect(await knex.schema.hasColumn('documents', 'body_text_in_vector')).to.equal(false);
    expect(await holding('documents', 'wardrobe')).to.deep.equal(['doc_2']);
    expect(await holding('documents', 'tenancy')).to.deep.equal(['doc_1']);
    expect(await holding('signing_requests', 'wardrobe')).to.deep.equal(['sr_1']);
    await knex('documents').where({ id: 'doc_3' }).update({ body_text: 'The orchard gate' });
    expect(await holding('documents', 'orchard')).to.deep.equal(['doc_3']);

    // And up again.
    await knex.migrate.latest({ migrationSource });
    expect(await found('orchard', 'document')).to.deep.equal(['doc_3']);
    expect(await found('wardrobe', 'signing_request')).to.deep.equal(['sr_1']);
  });
});
