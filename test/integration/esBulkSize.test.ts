import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createElasticsearchClient } from '../../src/search/elasticsearch';
import { MAX_BULK_BYTES, writeToIndex, type Loaded } from '../../src/search/esDocuments';

// A batch of events about documents with long texts once became one _bulk request of 24 MB, which timed
// out on a busy machine and was retried for minutes while nothing else was indexed.
describe('writes to Elasticsearch come in _bulk requests of bounded size', function () {
  this.timeout(60_000);
  const url = process.env.ELASTICSEARCH_URL;
  const index = `signet-test-bulk-${process.pid}`;
  const client = url ? createElasticsearchClient(url) : undefined;

  after(async () => {
    await client?.indices.delete({ index, ignore_unavailable: true });
  });

  it('splits 12 documents of 1 MB of text into requests under MAX_BULK_BYTES, the refresh on the last, and writes them all', async function () {
    if (!client) throw new Error('ELASTICSEARCH_URL is not set: run the tests with npm test, which starts the services.');
    const sent: { bytes: number; refresh: unknown }[] = [];
    const counting = Object.create(client) as typeof client;
    counting.bulk = ((request: { operations: unknown[]; refresh?: unknown }) => {
      sent.push({ bytes: request.operations.reduce<number>((sum, line) => sum + JSON.stringify(line).length, 0), refresh: request.refresh });
      return client.bulk(request as Parameters<typeof client.bulk>[0]);
    }) as typeof client.bulk;
    const words = 'contract '.repeat(Math.ceil((1024 * 1024) / 9));
    const loaded: Loaded[] = Array.from({ length: 12 }, (_, i) => ({ id: `doc_${i}`, version: 1, body: { text: words, n: i } }));
    await writeToIndex(counting, index, loaded, { viaAlias: false, refresh: 'wait_for' });
    expect(sent.length).to.be.greaterThan(2);
    for (const request of sent) expect(request.bytes).to.be.at.most(MAX_BULK_BYTES + 4096);
    expect(sent.map((request) => request.refresh)).to.deep.equal([...sent.slice(1).map(() => false), 'wait_for']);
    expect((await client.count({ index })).count).to.equal(12);
  });
});

// On a busy machine a _bulk that waits for its refresh took longer than the client's 5 s: the client gave
// up, Elasticsearch indexed it anyway, and the client's retry and then the activity's sent it again.
describe('a slow write to Elasticsearch', function () {
  this.timeout(30_000);

  it('is waited for past 5 s (the old timeout), and sent once', async () => {
    const bulks: number[] = [];
    const slow = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        bulks.push(Date.now());
        const answer = JSON.stringify({ took: 6000, errors: false, items: [{ index: { _id: 'doc_1', status: 201 } }] });
        setTimeout(() => response.writeHead(200, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' }).end(answer), 6000);
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const client = createElasticsearchClient(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`);
    try {
      const loaded: Loaded[] = [{ id: 'doc_1', version: 1, body: { text: 'a contract' } }];
      await writeToIndex(client, 'signet-documents', loaded, { viaAlias: true, refresh: 'wait_for' });
      expect(bulks).to.have.length(1);
    } finally {
      await client.close();
      slow.closeAllConnections();
      slow.close();
    }
  });
});
