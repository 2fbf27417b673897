import fs from 'node:fs';
import { expect } from 'chai';
import { uploadDirOf } from '../../src/api/receivedFile';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import type { Db } from '../../src/db';
import { newId } from '../../src/ids';
import { createLogger } from '../../src/logger';
import { startSystem, type RunningSystem } from '../../src/system';
import { client, type Request } from '../support/http';
import { makeLargePdf } from '../support/pdfs';
import { documentRow } from '../support/factories';
import { uniqueWord } from '../support/searchFixture';
import { eventually } from '../support/signing';
import { createTestAccount, databaseKind, stopLeavingNothing, testConfig } from '../support/system';
import { uploadDocument } from '../support/documents';

// The upload answers with what it needs (structure, pages, hash); the worker extracts the PDF's text after
// the commit, and the document is then found by a word of it, on either search backend. How soon (within
// 2 s) is measured by `npm run bench` (bench/search.ts), not asserted here against a shared machine's clock.

const hitIds = async (request: Request, word: string) => {
  const response = await request('GET', `/api/v1/search?q=${word}`);
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  return response.body.data.map((hit: { id: string }) => hit.id);
};

/** Uploads a PDF and polls search for a word on its second page: the time from sending the upload to the first hit. */
async function expectSearchableByItsText(request: Request) {
  const word = uniqueWord();
  const { id } = await uploadDocument(request, { pages: ['Cover page', `The ${word} clause applies`] });
  await eventually(async () => expect(await hitIds(request, word)).to.deep.equal([id]), 30_000);
  return { id, word };
}

/** Whether the document's search_vector holds the words of its text, as its flag and the vector itself say. */
const textInVector = async (db: Db, id: string, word: string) => {
  const row = await db('documents')
    .where({ id })
    .first('body_text_in_vector', db.raw(`search_vector @@ to_tsquery('simple', ?) as holds`, [word]));
  return { flag: row.body_text_in_vector, vector: row.holds };
};

describe('the text of an uploaded PDF, extracted by the worker after the upload', function () {
  this.timeout(120_000);

  it(`becomes searchable by a word of its text on the running system's backend${process.env.ELASTICSEARCH_URL ? ' (Elasticsearch)' : ''}`, async () => {
    const { request, db, system } = await createTestAccount();
    const { id, word } = await expectSearchableByItsText(request);
    // PostgreSQL computes the words of the text only when its own search reads them.
    const inVector = system.search.kind === 'postgres';
    expect(await textInVector(db, id, word)).to.deep.equal({ flag: inVector, vector: inVector });
  });

  it('a PDF over 1 MiB, which the worker reads through a temporary file, is found by its text and leaves no file', async () => {
    const { request, system } = await createTestAccount();
    const word = uniqueWord();
    const pdf = await makeLargePdf(3 * 1024 * 1024, ['Cover page', `The ${word} clause applies`]);
    const created = await request('POST', '/api/v1/documents', { json: { fileName: 'large-agreement.pdf', fileSize: pdf.length } });
    const uploaded = await request('PUT', `/api/v1/documents/${created.body.id}/file`, { body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(200);
    await eventually(async () => expect(await hitIds(request, word)).to.deep.equal([created.body.id]), 30_000);
    const uploadDir = uploadDirOf(system.config.dataDir);
    expect(fs.existsSync(uploadDir) ? fs.readdirSync(uploadDir) : []).to.deep.equal([]);
  });

  it('a scanned PDF (no text) is found by its name, and its text stays empty', async () => {
    const { request, db } = await createTestAccount();
    const created = await uploadDocument(request, { fileName: 'scanned-lease.pdf', pages: [''] });
    await eventually(async () => expect((await db('documents').where({ id: created.id }).first('body_text')).body_text).to.equal(''));
    await eventually(async () => expect(await hitIds(request, 'lease')).to.deep.equal([created.id]));
  });

  describe('on PostgreSQL full-text search (a system without Elasticsearch)', () => {
    let system: RunningSystem;

    before(async () => {
      // Its own task queue and search indexer; on SIGNET_TEST_DB=postgres it shares the database with the
      // shared system, whose worker may extract some of these texts first: either way, they are found.
      const config = { ...testConfig({ TEMPORAL_TASK_QUEUE: `signet-test-${databaseKind}-${process.pid}-pgsearch` }), ELASTICSEARCH_URL: undefined };
      system = await startSystem(config, createLogger('silent'));
    });
    after(() => stopLeavingNothing(system));

    it('becomes searchable by a word of its text', async () => {
      expect(system.search.kind).to.equal('postgres');
      const db = system.database.knex;
      const account = await createAccount(db, { email: `pgsearch-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
      const { secret } = await createApiKey(db, account.id);
      const { id, word } = await expectSearchableByItsText(client(system.url!, secret));
      expect(await textInVector(db, id, word)).to.deep.equal({ flag: true, vector: true });
    });

    it('finds by its words a text stored under Elasticsearch, once the worker has brought them into PostgreSQL', async () => {
      const db = system.database.knex;
      const account = await createAccount(db, { email: `pgsearch-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
      const { secret } = await createApiKey(db, account.id);
      const word = uniqueWord();
      const id = newId('document');
      // As a worker on Elasticsearch leaves it.
      await db('documents').insert({ ...documentRow(id, account.id, 'agreement.pdf', `The ${word} clause applies`), body_text_in_vector: false });
      await eventually(async () => expect(await hitIds(client(system.url!, secret), word)).to.deep.equal([id]), 30_000);
      expect(await textInVector(db, id, word)).to.deep.equal({ flag: true, vector: true });
    });
  });
});
