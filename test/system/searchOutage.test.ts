import { expect } from 'chai';
import { searchIndexerWorkflowId } from '../../src/temporal/client';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { createLogger } from '../../src/logger';
import { createElasticsearchClient } from '../../src/search/elasticsearch';
import { startSystem, type RunningSystem } from '../../src/system';
import { client, type Request } from '../support/http';
import { eventually } from '../support/signing';
import { testConfig } from '../support/system';
import { startTcpProxy } from '../support/tcpProxy';
import { uploadDocument } from '../support/documents';

// Elasticsearch "goes down" behind a proxy of this test's own (the shared Elasticsearch keeps running for
// everyone else); the system runs on an embedded database of its own, so only its own indexer sees its events.
describe('Elasticsearch down', function () {
  this.timeout(240_000);
  const prefix = `signet-test-outage-${process.pid}-`;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let system: RunningSystem;
  let request: Request;
  let apiKey: string;

  before(async () => {
    const url = new URL(process.env.ELASTICSEARCH_URL ?? '');
    if (!url.port) throw new Error('ELASTICSEARCH_URL must be set: run with npm test.');
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    const config = {
      ...testConfig({ ELASTICSEARCH_URL: proxy.url, ELASTICSEARCH_INDEX_PREFIX: prefix, TEMPORAL_TASK_QUEUE: `signet-test-outage-${process.pid}` }),
      DATABASE_URL: undefined,
    };
    system = await startSystem(config, createLogger('silent'));
    const db = system.database.knex;
    const account = await createAccount(db, { email: 'outage@example.com', plan: 'business' });
    apiKey = (await createApiKey(db, account.id)).secret;
    request = client(system.url!, apiKey);
  });

  after(async () => {
    await system?.client.workflow
      .getHandle(searchIndexerWorkflowId(system.config.TEMPORAL_TASK_QUEUE))
      .terminate('test over')
      .catch(() => undefined);
    await system?.stop();
    await proxy?.stop().catch(() => undefined);
    const elastic = createElasticsearchClient(process.env.ELASTICSEARCH_URL!);
    await elastic.indices.delete({ index: `${prefix}*` }).catch(() => undefined);
    await elastic.close();
  });

  const upload = async (fileName: string, text: string) => (await uploadDocument(request, { fileName, pages: [text] })).id;
  const found = (q: string) =>
    eventually(async () => {
      const response = await request('GET', `/api/v1/search?q=${q}`);
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      return response.body.data.map((hit: { id: string }) => hit.id);
    }, 90_000);
  const expectFound = (q: string, id: string) => eventually(async () => expect(await found(q)).to.include(id), 90_000);

  it('answers 503 search_unavailable at once, keeps the rest of the API working, and catches up when it returns', async () => {
    const before = await upload('before-outage.pdf', 'Capybara');
    await expectFound('capybara', before);

    await proxy.stop();
    // No hang: an answer well inside this bound, or the fetch aborts and the test fails.
    const quick = await fetch(`${system.url}/api/v1/search?q=capybara`, {
      headers: { Authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(quick.status).to.equal(503);
    expect(quick.headers.get('retry-after')).to.equal('5');
    // A hang would abort this fetch; the search client gives up after its 2 s request timeout at worst.
    for (const path of ['/api/v1/search?q=capybara', '/api/v1/dashboard/stats', '/api/v1/dashboard/trends', '/api/v1/dashboard/signing-breakdown']) {
      const response = await request('GET', path);
      expect(response.status, path).to.equal(503);
      expect(response.body.error).to.equal('search_unavailable');
    }
    const during = await upload('during-outage.pdf', 'Axolotl');
    expect((await request('GET', `/api/v1/documents/${during}`)).status).to.equal(200);
    expect((await request('GET', '/api/v1/dashboard/activity')).status).to.equal(200);
    expect((await request('PATCH', `/api/v1/documents/${before}`, { json: { fileName: 'renamed-in-outage.pdf' } })).status).to.equal(200);

    await proxy.start();
    await expectFound('axolotl', during);
    await expectFound('renamed', before);
  });

  it('indexes what changed during an outage that outlasted a restart, however long ago it changed', async () => {
    const id = await upload('wombat.pdf', 'Wombat');
    await expectFound('wombat', id);
    await proxy.stop();
    expect((await request('PATCH', `/api/v1/documents/${id}`, { json: { fileName: 'quokka.pdf' } })).status).to.equal(200);
    // The outage lasted hours: the rename's event is old when the service starts again, Elasticsearch back.
    await system.database
      .knex('events')
      .where('data', '@>', JSON.stringify({ documentId: id }))
      .update({ created_at: system.database.knex.raw("now() - interval '3 hours'") });
    await system.stop();
    await proxy.start();
    system = await startSystem(system.config, createLogger('silent'));
    request = client(system.url!, apiKey);
    await expectFound('quokka', id);
  });
});
