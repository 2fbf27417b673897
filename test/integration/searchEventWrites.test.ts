import { expect } from 'chai';
import { createElasticsearchClient } from '../../src/search/elasticsearch';
import { createElasticsearchSearch } from '../../src/search/elasticsearchBackend';
import { indexPendingEvents } from '../../src/search/indexer';
import { SearchQuerySchema } from '../../src/search/schema';
import { createLogger } from '../../src/logger';
import { eventually } from '../support/signing';
import { createTestAccount, databaseKind } from '../support/system';

// The event indexer once waited for the refresh after each batch, so it wrote one batch a second at
// most: creates at 1,100/s left the index 5,000 events behind after 8 s, and further behind every
// second. Its writes now go without waiting; the index's own refresh (every second) makes them searchable.
describe("the search indexer's writes of events", function () {
  this.timeout(120_000);
  const url = process.env.ELASTICSEARCH_URL;
  const prefix = `signet-test-events-${databaseKind}-${process.pid}-`;
  const client = url ? createElasticsearchClient(url) : undefined;

  after(async () => {
    await client?.indices.delete({ index: `${prefix}*`, ignore_unavailable: true, allow_no_indices: true });
    await client?.close();
  });

  it('do not wait for a refresh, move the cursor past every batch, and are searchable after the next refresh', async () => {
    if (!client) throw new Error('ELASTICSEARCH_URL is not set: run the tests with npm test, which starts the services.');
    const { db, request, account } = await createTestAccount();
    const refreshes: unknown[] = [];
    const counting = Object.create(client) as typeof client;
    counting.bulk = ((bulk: { refresh?: unknown }) => {
      refreshes.push(bulk.refresh);
      return client.bulk(bulk as Parameters<typeof client.bulk>[0]);
    }) as typeof client.bulk;
    const search = createElasticsearchSearch({ db, client: counting, prefix, logger: createLogger('silent') });
    try {
      await search.events!.next(1); // builds the indices and starts the cursor
      refreshes.length = 0; // the build's own writes

      const names = Array.from({ length: 30 }, (_, i) => `okapi-ledger-${i}.pdf`);
      const created: string[] = [];
      for (const fileName of names) {
        const response = await request('POST', '/api/v1/documents', { json: { fileName, fileSize: 1234 } });
        expect(response.status).to.equal(201);
        created.push(response.body.id);
      }
      // Batches of 7 events: several writes, each answered without its refresh.
      let taken = 0;
      for (let batch = await indexPendingEvents(search, 7); batch > 0; batch = await indexPendingEvents(search, 7)) taken += batch;
      expect(taken).to.be.at.least(created.length);
      expect(refreshes.length).to.be.at.least(Math.ceil(created.length / 7));
      expect(
        refreshes.every((refresh) => refresh === false),
        JSON.stringify(refreshes),
      ).to.equal(true);
      expect(await search.events!.next(1000)).to.satisfy((events: { data: { documentId?: string } | null }[]) =>
        events.every((event) => !created.includes(event.data?.documentId ?? '')),
      );

      await eventually(async () => {
        const page = await search.search(account.id, SearchQuerySchema.parse({ q: 'okapi', type: 'document', limit: '100' }));
        expect(page.hits.map((hit) => hit.id)).to.have.members(created);
      }, 10_000);
    } finally {
      await db('search_event_cursors').where({ prefix }).del(); // the client is closed after every test
    }
  });
});
