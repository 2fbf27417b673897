import { expect } from 'chai';
import type { Knex } from 'knex';
import { findTemplate, findTemplateFile } from '../../src/templates/store';
import { presentTemplate } from '../../src/templates/presenter';
import { migrationsWhere, scratchDatabaseMigratedBy } from '../support/scratchDatabase';
import { accountRow } from '../support/factories';

const MIGRATION = '20261126150433_template_documents';

// Migration 20261126150433 on a database of its own (a fresh PGlite, or a scratch PostgreSQL database):
// templates of one PDF become templates whose one document is that PDF, and answer as they did.
describe(`migration ${MIGRATION}: a template's PDF becomes its first document`, function () {
  this.timeout(120_000);
  let knex: Knex;
  scratchDatabaseMigratedBy(
    'template-documents',
    migrationsWhere((name) => name < MIGRATION),
    (opened) => (knex = opened),
  );

  it('moves each PDF in place with its document’s name, keeps roles and fields as signers on it, and goes down again', async () => {
    await knex('accounts').insert(accountRow());
    await knex('documents').insert({
      id: 'doc_1',
      account_id: 'acct_1',
      file_name: 'lease.pdf',
      file_size: 4,
      status: 'ready',
      page_count: 1,
      sha256: 'a'.repeat(64),
    });
    const template = (id: string, sourceDocumentId: string | null) => ({
      id,
      account_id: 'acct_1',
      name: `Template ${id}`,
      source_document_id: sourceDocumentId,
      page_count: 1,
      page_sizes: JSON.stringify([[595, 842]]),
      sha256: 'b'.repeat(64),
      roles: JSON.stringify([{ name: 'tenant', order: 1 }]),
      fields: JSON.stringify([{ role: 'tenant', type: 'signature', required: true, label: null, page: 1, x: 1, y: 1, width: 10, height: 10 }]),
    });
    await knex('templates').insert([template('tpl_1', 'doc_1'), template('tpl_2', null)]);
    await knex('template_files').insert([
      { template_id: 'tpl_1', content: Buffer.from('%PDF1') },
      { template_id: 'tpl_2', content: Buffer.from('%PDF2') },
    ]);

    await knex.migrate.latest({ migrationSource: migrationsWhere((name) => name <= MIGRATION) });

    const rows = await knex('template_documents')
      .orderBy('template_id')
      .select('template_id', 'position', 'source_document_id', 'file_name', 'page_count', 'sha256');
    expect(rows).to.deep.equal([
      { template_id: 'tpl_1', position: 1, source_document_id: 'doc_1', file_name: 'lease.pdf', page_count: 1, sha256: 'b'.repeat(64) },
      { template_id: 'tpl_2', position: 1, source_document_id: null, file_name: 'Template tpl_2.pdf', page_count: 1, sha256: 'b'.repeat(64) },
    ]);
    expect((await findTemplateFile(knex, 'tpl_2')).toString()).to.equal('%PDF2');
    const migrated = presentTemplate((await findTemplate(knex, 'acct_1', 'tpl_1'))!);
    expect(migrated).to.include({ sourceDocumentId: 'doc_1', pageCount: 1, sha256: 'b'.repeat(64) });
    expect(migrated.roles).to.deep.equal([{ name: 'tenant', order: 1 }]);
    expect(migrated.fields).to.deep.equal([{ role: 'tenant', type: 'signature', required: true, label: null, page: 1, x: 1, y: 1, width: 10, height: 10 }]);
    expect(migrated.documents).to.deep.equal([
      { documentId: 'doc_1', fileName: 'lease.pdf', pageCount: 1, pages: [{ width: 595, height: 842 }], sha256: 'b'.repeat(64) },
    ]);

    await knex.migrate.down({ migrationSource: migrationsWhere((name) => name <= MIGRATION) });
    const files = await knex('template_files').orderBy('template_id').select('template_id', 'content');
    expect(files.map((file) => [file.template_id, Buffer.from(file.content).toString()])).to.deep.equal([
      ['tpl_1', '%PDF1'],
      ['tpl_2', '%PDF2'],
    ]);
  });
});
