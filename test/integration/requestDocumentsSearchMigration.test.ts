import { expect } from 'chai';
import type { Knex } from 'knex';
import { migrationSource } from '../../src/db/migrations';
import { searchPostgres } from '../../src/search/postgres';
import { SearchQuerySchema } from '../../src/search/schema';
import { migrationsWhere, scratchDatabaseMigratedBy } from '../support/scratchDatabase';
import { accountRow, documentRow, insertRequestRows } from '../support/factories';

const MIGRATION = '20261126151000_request_documents_search';
const NAME_MIGRATION = '20261126155300_request_name_search';

// Migration 20261126151000 on a database of its own (a fresh PGlite, or a scratch PostgreSQL database):
// requests made before it are found by their documents' words once it has run (with 20261126155300,
// their title and documents' names in a small vector of their own), and both go down again.
describe(`migrations ${MIGRATION} and ${NAME_MIGRATION}: a request's search vectors hold its documents' words`, function () {
  this.timeout(120_000);
  let knex: Knex;
  scratchDatabaseMigratedBy(
    'request-documents-search',
    migrationsWhere((name) => name < MIGRATION),
    (opened) => (knex = opened),
  );

  /** The requests whose search_vector holds the word, as the column alone says (without the search code of after the migration). */
  const holding = async (word: string) =>
    (await knex.raw(`select id from signing_requests where search_vector @@ to_tsquery('simple', ?)`, [word])).rows.map((row: { id: string }) => row.id);
  const found = async (q: string) => {
    const query = SearchQuerySchema.parse({ q: `${q} `, type: 'signing_request' });
    return (await searchPostgres(knex, 'acct_1', query)).hits.map((hit) => hit.id);
  };

  it('fills the requests made before, follows later texts and names, and goes down again', async () => {
    await knex('accounts').insert(accountRow());
    const document = (id: string, fileName: string, text: string | null) => documentRow(id, 'acct_1', fileName, text);
    await knex('documents').insert([document('doc_1', 'lease.pdf', 'The tenant pays'), document('doc_2', 'inventory.pdf', null)]);
    await insertRequestRows(knex, { id: 'sr_1', accountId: 'acct_1', documentIds: ['doc_1', 'doc_2'] });
    expect(await holding('inventory')).to.deep.equal([]);

    await knex.migrate.latest({ migrationSource });
    expect(await found('elm')).to.deep.equal(['sr_1']);
    expect(await found('inventory')).to.deep.equal(['sr_1']);
    expect(await found('tenant')).to.deep.equal(['sr_1']);
    // The second document's text arrives, the first is renamed.
    await knex('documents').where({ id: 'doc_2' }).update({ body_text: 'Three chairs and a wardrobe' });
    await knex('documents').where({ id: 'doc_1' }).update({ file_name: 'tenancy.pdf' });
    expect(await found('wardrobe')).to.deep.equal(['sr_1']);
    expect(await found('tenancy')).to.deep.equal(['sr_1']);
    expect(await found('lease')).to.deep.equal([]);

    expect(await found('tenancy elm')).to.deep.equal(['sr_1']);
    expect((await knex('signing_requests').where({ id: 'sr_1' }).first(knex.raw('name_search_vector::text as words'))).words).to.not.contain('wardrobe');

    await knex.migrate.rollback({ migrationSource }); // both: the batch they ran in
    expect(await holding('elm')).to.deep.equal(['sr_1']);
    expect(await holding('wardrobe')).to.deep.equal([]);
    const [{ generated }] = (
      await knex.raw(`select attgenerated as generated from pg_attribute where attrelid = 'signing_requests'::regclass and attname = 'search_vector'`)
    ).rows;
    expect(generated).to.equal('s');
  });
});
