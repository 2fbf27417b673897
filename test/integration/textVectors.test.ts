import { MockActivityEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createSearchActivities } from '../../activities/search';
import { createAccount } from '../../src/accounts/service';
import { migrateLatest } from '../../src/db';
import { vectorizeStoredTexts } from '../../src/documents/service';
import { storeDocumentText } from '../../src/documents/store';
import { newId } from '../../src/ids';
import { createLogger } from '../../src/logger';
import type { PdfTextExtractor } from '../../src/pdf/text';
import type { SearchBackend } from '../../src/search/backend';
import { createElasticsearchClient } from '../../src/search/elasticsearch';
import { createElasticsearchSearch } from '../../src/search/elasticsearchBackend';
import { indexNewTexts } from '../../src/search/indexer';
import { createPostgresSearch } from '../../src/search/postgres';
import { SearchQuerySchema, type SearchType } from '../../src/search/schema';
import { openScratchDatabase } from '../support/scratchDatabase';
import { insertDocument, insertRequestRows } from '../support/factories';
import { uniqueWord } from '../support/searchFixture';
import { databaseKind } from '../support/system';

// Where the words of a PDF's text go, on a database of its own: into PostgreSQL's search_vector only when
// PostgreSQL is the search backend; under Elasticsearch they stay out of it, and PostgreSQL search, run
// later, brings them back (migration 20261127012900).

/** An extractor whose text of a PDF is the PDF's bytes. */
const extractor: PdfTextExtractor = {
  processes: 1,
  fileDir: '/nonexistent',
  extractText: async ({ bytes }) => Buffer.from(bytes!).toString(),
  close: async () => undefined,
};

describe("the words of a document's text in PostgreSQL's search_vector, by search backend", function () {
  this.timeout(120_000);
  let database: Awaited<ReturnType<typeof openScratchDatabase>>;
  let db: Knex;
  let accountId: string;

  before(async () => {
    database = await openScratchDatabase('text-vectors');
    db = database.knex;
    await migrateLatest(db);
    accountId = (await createAccount(db, { email: 'texts@example.com', plan: 'business' })).id;
  });
  after(() => database?.close());
  beforeEach(async () => {
    await db('signing_request_documents').del();
    await db('signing_requests').del();
    await db('document_files').del();
    await db('documents').del();
  });

  /** An uploaded document whose PDF is `text`, waiting for its text. */
  const upload = (text: string) => insertDocument(db, accountId, Buffer.from(text));
  /** A pending signing request of the account holding the document. */
  async function requestHolding(documentId: string) {
    const id = newId('signingRequest');
    await insertRequestRows(db, { id, accountId, documentIds: [documentId] });
    return id;
  }
  const vectorOf = async (id: string, word: string) =>
    db('documents')
      .where({ id })
      .first('body_text', 'body_text_in_vector', db.raw(`search_vector @@ to_tsquery('simple', ?) as holds_word`, [word]));
  const found = async (search: SearchBackend, word: string, type: SearchType = 'document') =>
    (await search.search(accountId, SearchQuerySchema.parse({ q: word, type }))).hits.map((hit) => hit.id);
  const postgres = () => createPostgresSearch(db);
  /** Runs `use` with an Elasticsearch backend on indices of its own, removed afterwards. */
  async function withElasticsearch(name: string, use: (elasticsearch: SearchBackend, client: ReturnType<typeof createElasticsearchClient>) => Promise<void>) {
    const url = process.env.ELASTICSEARCH_URL;
    if (!url) throw new Error('ELASTICSEARCH_URL is not set: this test runs against a real Elasticsearch (npm test starts one).');
    const prefix = `signet-test-${name}-${databaseKind}-${process.pid}-`;
    const client = createElasticsearchClient(url);
    const elasticsearch = createElasticsearchSearch({ db, client, prefix, logger: createLogger('silent') });
    try {
      await use(elasticsearch, client);
    } finally {
      await client.indices.delete({ index: `${prefix}*` }).catch(() => undefined);
      await elasticsearch.close();
    }
  }

  it('under Elasticsearch, stores the text without its words in search_vector, and Elasticsearch finds it by them', () =>
    withElasticsearch('text-vectors', async (elasticsearch) => {
      const word = uniqueWord();
      const id = await upload(`The ${word} clause applies`);
      expect(await indexNewTexts(db, elasticsearch, extractor, { keepGoing: () => true })).to.equal(1);

      expect(await vectorOf(id, word)).to.deep.equal({ body_text: `The ${word} clause applies`, body_text_in_vector: false, holds_word: false });
      expect((await vectorOf(id, 'agreement')).holds_word, 'the name keeps its words').to.equal(true);
      expect(await found(elasticsearch, word)).to.deep.equal([id]);
      expect(await found(postgres(), word)).to.deep.equal([]);
    }));

  it("under Elasticsearch, writes a document's text and the requests holding it at once, not one refresh after the other", () =>
    withElasticsearch('text-vectors-at-once', async (elasticsearch, client) => {
      await elasticsearch.index([]); // creates the indices, before bulk is watched
      // Each write is held until the other has begun, or 5 s: written one after the other, the first is
      // held the whole time and the other never overlaps it.
      const bulk = client.bulk.bind(client);
      let inFlight = 0;
      let mostAtOnce = 0;
      let other: () => void = () => undefined;
      const overlapping = new Promise<void>((resolve) => (other = resolve));
      Object.assign(client, {
        bulk: async (...args: Parameters<typeof bulk>) => {
          mostAtOnce = Math.max(mostAtOnce, ++inFlight);
          if (inFlight === 2) other();
          await Promise.race([overlapping, new Promise((resolve) => setTimeout(resolve, 5000))]);
          try {
            return await bulk(...args);
          } finally {
            inFlight--;
          }
        },
      });

      const word = uniqueWord();
      const id = await upload(`The ${word} clause applies`);
      const requestId = await requestHolding(id);
      expect(await indexNewTexts(db, elasticsearch, extractor, { keepGoing: () => true })).to.equal(1);

      expect(mostAtOnce).to.equal(2);
      expect(await found(elasticsearch, word)).to.deep.equal([id]);
      expect(await found(elasticsearch, word, 'signing_request')).to.deep.equal([requestId]);
    }));

  it('under PostgreSQL, stores the text with its words, and PostgreSQL search finds it by them', async () => {
    const word = uniqueWord();
    const id = await upload(`The ${word} clause applies`);
    expect(await indexNewTexts(db, postgres(), extractor, { keepGoing: () => true })).to.equal(1);

    expect(await vectorOf(id, word)).to.deep.include({ body_text_in_vector: true, holds_word: true });
    expect(await found(postgres(), word)).to.deep.equal([id]);
  });

  it("PostgreSQL's search indexer brings back the words of a text stored under Elasticsearch, to its document and the requests holding it", async () => {
    const word = uniqueWord();
    const id = await upload(`The ${word} clause applies`);
    const requestId = await requestHolding(id);
    await storeDocumentText(db, id, `The ${word} clause applies`, { inVector: false }); // as a worker on Elasticsearch does
    expect(await found(postgres(), word)).to.deep.equal([]);
    expect(await found(postgres(), word, 'signing_request')).to.deep.equal([]);

    const logged: { documents?: number; msg: string }[] = [];
    const logger = createLogger('info', { write: (line: string) => logged.push(JSON.parse(line)) });
    const activities = createSearchActivities({ db, search: postgres(), pdfText: extractor, logger });
    await new MockActivityEnvironment().run(activities.indexEventsFor, 500);

    expect(await vectorOf(id, word)).to.deep.include({ body_text_in_vector: true, holds_word: true });
    expect(await found(postgres(), word)).to.deep.equal([id]);
    expect(await found(postgres(), word, 'signing_request')).to.deep.equal([requestId]);
    expect(logged.map((line) => line.documents)).to.deep.equal([1]);
  });

  it('brings them back a batch at a time, and says how many', async () => {
    const words = Array.from({ length: 5 }, uniqueWord);
    const ids = await Promise.all(words.map((word) => upload(word)));
    for (const [i, id] of ids.entries()) await storeDocumentText(db, id, words[i], { inVector: false });

    expect(await vectorizeStoredTexts(db, { batch: 2 })).to.equal(5);
    expect(await vectorizeStoredTexts(db, { batch: 2 })).to.equal(0);
    for (const [i, id] of ids.entries()) expect(await found(postgres(), words[i])).to.deep.equal([id]);
  });

  it('stops between batches once told to', async () => {
    const words = Array.from({ length: 3 }, uniqueWord);
    for (const word of words) await storeDocumentText(db, await upload(word), word, { inVector: false });
    let batches = 0;
    expect(await vectorizeStoredTexts(db, { batch: 1, keepGoing: () => batches++ < 2 })).to.equal(2);
    expect(await vectorizeStoredTexts(db)).to.equal(1);
  });
});
