import { expect } from 'chai';
import { vectorizeStoredTexts } from '../../src/documents/service';
import { createPostgresSearch } from '../../src/search/postgres';
import { startApp } from '../support/app';
import { client, type Request } from '../support/http';
import { eventually } from '../support/signing';
import { createTestAccount, sharedSystem, useSharedSystem } from '../support/system';
import { uploadDocument } from '../support/documents';

// A signing request of several documents is found by the name and the text of any of them, on both
// backends: the running system's (Elasticsearch, kept up to date by its indexer) and PostgreSQL's. The
// dashboard counts such a request once and its documents each.

type Account = Awaited<ReturnType<typeof createTestAccount>>;
type Backend = { name: string; request: (account: Account) => Request };

const textOf = (account: Account, id: string) => account.db('documents').where({ id }).first('body_text');
const extracted = (account: Account, ids: string[]) =>
  eventually(async () => expect(await account.db('documents').whereIn('id', ids).whereNotNull('body_text').pluck('id')).to.have.members(ids), 30_000);

async function createEnvelope(account: Account, documentIds: string[], title: string) {
  const response = await account.request('POST', '/api/v1/signatures', {
    json: {
      documents: documentIds.map((id) => ({ document_id: id })),
      title,
      reminderEveryDays: 0,
      signers: [{ name: 'Grace Hopper', email: 'grace@example.com' }],
    },
  });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.id as string;
}

/** Every event of the account taken in by the running system's search indexer (nothing to wait for on PostgreSQL). */
async function indexerCaughtUp(account: Account) {
  const system = await sharedSystem();
  if (system.search.kind !== 'elasticsearch') return;
  await eventually(async () => {
    const cursor = await account
      .db('search_event_cursors')
      .where({ prefix: system.config.ELASTICSEARCH_INDEX_PREFIX })
      .first(account.db.raw('xid::text as xid'), 'event_id');
    const behind = await account
      .db('events')
      .where({ account_id: account.account.id })
      .whereRaw('(xid, id) > (?::xid8, ?)', [cursor.xid, cursor.event_id])
      .count({ count: '*' });
    expect(Number(behind[0].count)).to.equal(0);
  }, 30_000);
}

describe('search and the dashboard with signing requests of several documents', () => {
  useSharedSystem();
  const backends: Backend[] = [];
  const stops: (() => Promise<unknown>)[] = [];

  before(async () => {
    const system = await sharedSystem();
    const postgres = await startApp({}, { deps: { search: createPostgresSearch(system.database.knex) } });
    stops.push(postgres.close);
    backends.push(
      { name: `the running system (${system.search.kind})`, request: (account) => account.request },
      {
        name: 'postgres',
        // The shared system's worker stores texts for its own backend (on Elasticsearch, without their words
        // in PostgreSQL): a PostgreSQL backend's worker brings the words in, as this does before each call.
        request:
          (account) =>
          async (...args) => {
            await vectorizeStoredTexts(system.database.knex);
            return client(postgres.url, account.apiKey)(...args);
          },
      },
    );
  });
  after(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  const hitsOf = async (backend: Backend, account: Account, query: string) => {
    const response = await backend.request(account)('GET', `/api/v1/search?${query}`);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    return response.body.data as { id: string; type: string; highlight: Record<string, string> }[];
  };

  it('marks in each field of a request the words, the phrase and the prefix that match there, and nothing else', async function () {
    this.timeout(120_000);
    const account = await createTestAccount();
    const plan = (await uploadDocument(account.request, { fileName: 'tundra-plan.pdf', pages: ['The tundra clause of the plan'] })).id;
    await extracted(account, [plan]);
    const created = await account.request('POST', '/api/v1/signatures', {
      json: {
        documents: [{ document_id: plan }],
        title: 'Quixotic zamboni lease',
        message: 'Please countersign the rider',
        reminderEveryDays: 0,
        signers: [{ name: 'Yolanda Quimby', email: 'yolanda@example.com' }],
      },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    await indexerCaughtUp(account);
    for (const backend of backends) {
      const hits = await eventually(async () => {
        const found = await hitsOf(backend, account, `q=${encodeURIComponent('"quixotic zamboni" countersign tundra quimb')}`);
        expect(found.map((hit) => hit.id)).to.deep.equal([created.body.id]);
        return found;
      }, 30_000);
      const { title, message, signers, fileName, text } = hits[0].highlight;
      // A phrase is one mark on Elasticsearch, a mark a word on PostgreSQL.
      expect(title, backend.name)
        .to.match(/<mark>quixotic(<\/mark> <mark>| )zamboni<\/mark>/i)
        .and.not.match(/<mark>lease/i);
      expect(message, backend.name)
        .to.match(/<mark>countersign<\/mark>/i)
        .and.not.match(/<mark>(please|rider)/i);
      expect(signers, backend.name)
        .to.match(/<mark>quimby<\/mark>/i)
        .and.not.match(/<mark>yolanda/i);
      expect(fileName, backend.name)
        .to.match(/<mark>tundra<\/mark>/i)
        .and.not.match(/<mark>plan/i);
      expect(text, backend.name)
        .to.match(/<mark>tundra<\/mark>/i)
        .and.not.match(/<mark>(clause|plan)/i);
    }
  });

  it('finds a request by its second document’s name and by a word only in its third document’s text, extracted after the request was made', async function () {
    this.timeout(120_000);
    const account = await createTestAccount();
    const other = await createTestAccount();
    const cover = (await uploadDocument(account.request, { fileName: 'cover-letter.pdf', pages: ['Cover letter'] })).id;
    const annex = (await uploadDocument(account.request, { fileName: 'walrus-annex.pdf', pages: ['Annex of prices'] })).id;
    const schedule = (await uploadDocument(account.request, { fileName: 'schedule.pdf', pages: ['Schedule of works', 'The narwhal provision applies'] })).id;
    // Another account's request holds the same words.
    const elsewhere = await createEnvelope(
      other,
      [
        (await uploadDocument(other.request, { fileName: 'walrus-plan.pdf', pages: ['Plan'] })).id,
        (await uploadDocument(other.request, { fileName: 'notes.pdf', pages: ['A narwhal note'] })).id,
      ],
      'Elsewhere',
    );
    await extracted(account, [cover, annex, schedule]);
    // The worker has extracted the schedule's text already: it is taken away until the request is made,
    // then extracted again, so that it arrives after the request, as when a request follows an upload at once.
    await account.db('documents').where({ id: schedule }).update({ body_text: '' });
    const envelope = await createEnvelope(account, [cover, annex, schedule], 'Kitchen refit');

    for (const backend of backends) {
      await eventually(async () => expect((await hitsOf(backend, account, 'q=kitchen')).map((hit) => hit.id)).to.deep.equal([envelope]), 30_000);
      expect(await hitsOf(backend, account, 'q=narwhal&type=signing_request'), backend.name).to.deep.equal([]);
    }
    await indexerCaughtUp(account);
    await account.db('documents').where({ id: schedule }).update({ body_text: null });
    await eventually(async () => expect((await textOf(account, schedule)).body_text).to.contain('narwhal'), 30_000);

    for (const backend of backends) {
      await eventually(async () => {
        const byText = await hitsOf(backend, account, 'q=narwhal&type=signing_request');
        expect(
          byText.map((hit) => hit.id),
          backend.name,
        ).to.deep.equal([envelope]);
        expect(byText[0].highlight.text, backend.name).to.match(/<mark>narwhal<\/mark>/i);
      }, 30_000);
      const byName = await hitsOf(backend, account, 'q=walrus');
      expect(
        byName.map((hit) => [hit.type, hit.id]),
        backend.name,
      ).to.have.deep.members([
        ['document', annex],
        ['signing_request', envelope],
      ]);
      expect(byName.find((hit) => hit.id === envelope)!.highlight.fileName, backend.name).to.match(/<mark>walrus<\/mark>/i);
      expect(
        (await hitsOf(backend, account, 'q=walrus+narwhal+grace')).map((hit) => hit.id),
        backend.name,
      ).to.deep.equal([envelope]);
      // Made at once after its uploads: its text arrives later still.
      await eventually(async () => expect((await hitsOf(backend, other, 'q=walrus+narwhal')).map((hit) => hit.id)).to.deep.equal([elsewhere]), 30_000);
    }
  });

  it('counts a request of three documents as one request, and its documents as three', async function () {
    this.timeout(120_000);
    const account = await createTestAccount();
    const documents = [
      (await uploadDocument(account.request, { fileName: 'one.pdf', pages: ['One'] })).id,
      (await uploadDocument(account.request, { fileName: 'two.pdf', pages: ['Two'] })).id,
      (await uploadDocument(account.request, { fileName: 'three.pdf', pages: ['Three'] })).id,
    ];
    await createEnvelope(account, documents, 'Three in one');
    await indexerCaughtUp(account);
    for (const backend of backends) {
      const get = async (path: string) => {
        const response = await backend.request(account)('GET', `/api/v1/dashboard/${path}`);
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        return response.body;
      };
      await eventually(async () => {
        const stats = await get('stats');
        expect(stats.documents, backend.name).to.deep.equal({ total: 3, thisMonth: 3 });
        expect(stats.signingRequests.total, backend.name).to.equal(1);
        expect(stats.signingRequests.byStatus, backend.name).to.include({ pending: 1, completed: 0 });
        expect(stats.signers.total, backend.name).to.equal(1);
      }, 30_000);
      expect((await get('signing-breakdown')).requestsByStatus, backend.name).to.include({ pending: 1 });
      const [month] = (await get('trends?months=1')).data;
      expect(month, backend.name).to.include({ documentsCreated: 3, requestsSent: 1 });
    }
  });
  it('pages through a phrase found in documents and a request, each page telling the same total, when one type runs out of hits first', async function () {
    this.timeout(120_000);
    const account = await createTestAccount();
    const documents = [];
    for (const name of ['first', 'second', 'third'])
      documents.push((await uploadDocument(account.request, { fileName: `${name}.pdf`, pages: [`The walrus lagoon clause of the ${name}`] })).id);
    await extracted(account, documents);
    const envelope = await createEnvelope(account, [documents[0]], 'Lease');
    await indexerCaughtUp(account);
    for (const backend of backends) {
      // One hit a page: whichever type comes first, the other has no hit past the cursor on some page.
      await eventually(async () => expect((await hitsOf(backend, account, 'q=%22walrus+lagoon%22&limit=10')).length, backend.name).to.equal(4), 30_000);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 1; page <= 4; page++) {
        const response = await backend.request(account)(
          'GET',
          `/api/v1/search?q=%22walrus+lagoon%22&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        expect(response.body, `${backend.name}, page ${page}`).to.include({ total: 4, totalIsExact: true });
        seen.push(...response.body.data.map((hit: { id: string }) => hit.id));
        expect(response.body.pagination.hasMore, `${backend.name}, page ${page}`).to.equal(page < 4);
        cursor = response.body.pagination.nextCursor;
      }
      expect(seen, backend.name).to.have.members([...documents, envelope]);
    }
  });
});
