import { expect } from 'chai';
import { vectorizeStoredTexts } from '../../src/documents/service';
import { createLogger } from '../../src/logger';
import type { SearchBackend } from '../../src/search/backend';
import { createElasticsearchClient } from '../../src/search/elasticsearch';
import { createElasticsearchSearch } from '../../src/search/elasticsearchBackend';
import { newId } from '../../src/ids';
import { createPostgresSearch, RANKED_UP_TO } from '../../src/search/postgres';
import { TOTAL_COUNTED_UP_TO } from '../../src/search/schema';
import { signerStatuses } from '../../src/domain/signingRequests';
import { startApp } from '../support/app';
import { client, type Request } from '../support/http';
import { percentileCont, PEOPLE, seedAccount, uploadKnownPdfs, VOCABULARY, wordsOf, type FixtureDocument, type FixtureRequest } from '../support/searchFixture';
import { createTestAccount, databaseKind } from '../support/system';

// One contract, two backends: the same fixture answered by PostgreSQL full-text search and SQL, and by
// Elasticsearch (its own indices, built from the same database), checked against numbers computed here.

const NOW = new Date();
const backends = ['postgres', 'elasticsearch'] as const;
type Kind = (typeof backends)[number];

interface Fixture {
  documents: FixtureDocument[];
  requests: FixtureRequest[];
  known: Awaited<ReturnType<typeof uploadKnownPdfs>>;
  otherIds: Set<string>;
  request: Record<Kind, Request>;
  /** An account with more hits than are counted (and ranked), and an old document named after their common words. */
  plenty: { documents: FixtureDocument[]; named: FixtureDocument; request: Record<Kind, Request> };
}

let fixture: Fixture;
const stops: (() => Promise<unknown>)[] = [];

async function serve(search: SearchBackend, apiKey: string) {
  const api = await startApp({}, { deps: { search } });
  stops.push(api.close);
  return client(api.url, apiKey);
}

// ---------------------------------------------------------------- what the answers must be, computed here
const live = () => fixture.documents.filter((document) => !document.deleted);
const documentWords = (document: FixtureDocument) => new Set([...wordsOf(document.fileName), ...wordsOf(document.body)]);
/** A request's words include its document's name and text (the document deleted since or not: the request still holds it). */
const requestWords = (request: FixtureRequest) =>
  new Set([
    ...wordsOf(request.title),
    ...wordsOf(request.message),
    ...request.signers.flatMap((signer) => [...wordsOf(signer.name), ...wordsOf(signer.email)]),
    ...documentWords(fixture.documents.find((document) => document.id === request.documentId)!),
  ]);
/** Ids of resources holding every word (the last as a prefix when `prefix`). */
function expectedIds(words: string[], { prefix = false, type }: { prefix?: boolean; type?: 'document' | 'signing_request' } = {}) {
  const matches = (have: Set<string>) =>
    words.every((word, i) => (prefix && i === words.length - 1 ? [...have].some((candidate) => candidate.startsWith(word)) : have.has(word)));
  return [
    ...(type === 'signing_request' ? [] : live().filter((document) => matches(documentWords(document)))),
    ...(type === 'document' ? [] : fixture.requests.filter((request) => matches(requestWords(request)))),
  ].map((resource) => resource.id);
}

async function allPages(request: Request, query: string, limit: number) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let total = -1;
  for (let page = 0; page < 100; page++) {
    const response = await request('GET', `/api/v1/search?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.data.length).to.be.at.most(limit);
    seen.push(...response.body.data.map((hit: { id: string }) => hit.id));
    if (page > 0) expect(response.body.total, `the total on page ${page + 1}`).to.equal(total);
    total = response.body.total;
    cursor = response.body.pagination.nextCursor;
    if (!response.body.pagination.hasMore) break;
    expect(cursor).to.be.a('string');
  }
  return { ids: seen, total };
}

const ids = (response: { body: { data: { id: string }[] } }) => response.body.data.map((hit) => hit.id);
const monthKey = (date: Date) => date.toISOString().slice(0, 7);
const secondsOf = (request: FixtureRequest) => (request.completedAt!.getTime() - request.createdAt.getTime()) / 1000;
const countBy = <T>(items: T[], key: (item: T) => string, keys: readonly string[]) =>
  Object.fromEntries(keys.map((name) => [name, items.filter((item) => key(item) === name).length]));
const REQUEST_STATUSES = ['pending', 'completed', 'declined', 'cancelled', 'expired'];
const SIGNER_STATUSES = [...signerStatuses];
/** Elasticsearch's percentiles are t-digest estimates; on this few values they land within a second. */
const closeTo = (actual: number | null, expected: number | null, kind: Kind) => {
  if (expected === null) return expect(actual).to.equal(null);
  expect(actual).to.be.a('number');
  expect(Math.abs(actual! - expected), `${actual} vs ${expected}`).to.be.at.most(kind === 'postgres' ? 0.001 : 1);
};

function breakdownOf(requests: FixtureRequest[]) {
  const signers = requests.flatMap((request) => request.signers.map((signer) => ({ ...signer, requestStatus: request.status })));
  const waiting = new Map<string, number>();
  for (const signer of signers.filter((s) => s.requestStatus === 'pending' && ['pending', 'notified', 'viewed'].includes(s.status))) {
    waiting.set(signer.email.toLowerCase(), (waiting.get(signer.email.toLowerCase()) ?? 0) + 1);
  }
  const reasons = new Map<string | null, number>();
  for (const signer of signers.filter((s) => s.status === 'declined')) reasons.set(signer.declineReason, (reasons.get(signer.declineReason) ?? 0) + 1);
  const byCountThenKey = <K extends string | null>([a, x]: [K, number], [b, y]: [K, number]) =>
    y - x || (a === null ? -1 : b === null ? 1 : a < b ? -1 : a > b ? 1 : 0);
  return {
    requestsByStatus: countBy(requests, (request) => request.status, REQUEST_STATUSES),
    signersByStatus: countBy(signers, (signer) => signer.status, SIGNER_STATUSES),
    topPendingSigners: [...waiting]
      .sort(byCountThenKey)
      .slice(0, 10)
      .map(([email, pendingRequests]) => ({ email, pendingRequests })),
    declineReasons: [...reasons]
      .sort(byCountThenKey)
      .slice(0, 10)
      .map(([reason, count]) => ({ reason, count })),
  };
}

// The fixture (two accounts, hundreds of documents and requests, an Elasticsearch index) is built for
// these tests alone: inside their describe, not as a root hook that every integration run would pay for.
describe('search and dashboard contract', () => {
  before(async function () {
    this.timeout(180_000);
    const url = process.env.ELASTICSEARCH_URL;
    if (!url) throw new Error('ELASTICSEARCH_URL is not set: the contract runs against a real Elasticsearch (npm test starts one).');
    const account = await createTestAccount();
    const other = await createTestAccount();
    const db = account.db;
    const known = await uploadKnownPdfs(account.request, db);
    // The shared system's worker stored their text for its backend; on Elasticsearch, without its words in
    // PostgreSQL, which PostgreSQL search's indexer brings in.
    await vectorizeStoredTexts(db);
    const seeded = await seedAccount(db, account.account.id, { seed: 5, documents: 320, requests: 160, now: NOW, extraWord: 'common' });
    const foreign = await seedAccount(db, other.account.id, { seed: 9, documents: 30, requests: 20, now: NOW, extraWord: 'common zephyrine xylograph' });
    const plenty = await createTestAccount();
    const plentyDocuments = (await seedAccount(db, plenty.account.id, { seed: 13, documents: 1200, requests: 0, now: NOW })).documents;
    // Older than every other document of the account, each of which has "fixture text" in its text.
    const named: FixtureDocument = {
      id: newId('document'),
      fileName: 'fixture-text-overview.pdf',
      body: 'An overview',
      status: 'ready',
      createdAt: new Date(NOW.getTime() - 3 * 365 * 86_400_000),
      deleted: false,
    };
    await db('documents').insert({
      id: named.id,
      account_id: plenty.account.id,
      file_name: named.fileName,
      file_size: 1000,
      status: 'ready',
      page_count: 1,
      sha256: 'f'.repeat(64),
      body_text: named.body,
      created_at: named.createdAt,
      updated_at: named.createdAt,
    });
    const prefix = `signet-test-contract-${databaseKind}-${process.pid}-`;
    const elastic = createElasticsearchClient(url);
    const es = createElasticsearchSearch({ db, client: elastic, prefix, logger: createLogger('silent') });
    stops.push(async () => {
      await elastic.indices.delete({ index: `${prefix}*` }).catch(() => undefined);
      await es.close();
    });
    await es.index([]); // waits for the indices: built from PostgreSQL, fixture included
    fixture = {
      documents: [...Object.values(known), ...seeded.documents],
      requests: seeded.requests,
      known,
      otherIds: new Set([...foreign.documents, ...foreign.requests].map((resource) => resource.id)),
      request: { postgres: await serve(createPostgresSearch(db), account.apiKey), elasticsearch: await serve(es, account.apiKey) },
      plenty: {
        documents: plentyDocuments,
        named,
        request: { postgres: await serve(createPostgresSearch(db), plenty.apiKey), elasticsearch: await serve(es, plenty.apiKey) },
      },
    };
  });

  after(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  for (const kind of backends) {
    describe(`GET /api/v1/search on ${kind}`, () => {
      const get = (query: string) => fixture.request[kind]('GET', `/api/v1/search?${query}`);

      it('finds a PDF by a word that appears only on its third page, and marks it', async () => {
        const response = await get('q=indemnity');
        expect(response.status).to.equal(200);
        expect(ids(response)).to.deep.equal([fixture.known.pageThree.id]);
        expect(response.body.data[0]).to.include({ type: 'document', fileName: 'master-services.pdf', status: 'ready' });
        expect(response.body.data[0].highlight.text).to.match(/<mark>indemnity<\/mark>/i);
        expect(response.body.total).to.equal(1);
      });

      it('ranks a match in the file name above a match in the text', async () => {
        const response = await get('q=zephyrine');
        expect(ids(response)).to.deep.equal([fixture.known.named.id, fixture.known.pageThree.id]);
        expect(response.body.data[0].score).to.be.greaterThan(response.body.data[1].score);
        expect(response.body.data[0].highlight.fileName).to.match(/<mark>zephyrine<\/mark>/i);
      });

      it('matches the last word as a prefix while it is typed, and whole once a space follows', async () => {
        expect(ids(await get('q=zephyr'))).to.deep.equal([fixture.known.named.id]);
        expect(ids(await get(`q=${encodeURIComponent('zephyr ')}`))).to.deep.equal([]);
        expect(ids(await get('q=zephyrine+no'))).to.deep.equal([fixture.known.named.id]);
      });

      it("matches a PDF's text by whole words only, the last word typed too", async () => {
        expect(ids(await get('q=indemn'))).to.deep.equal([]);
        const typed = await get('q=indemnity');
        expect(ids(typed)).to.deep.equal([fixture.known.pageThree.id]);
        expect(typed.body.data[0].highlight.text).to.match(/<mark>indemnity<\/mark>/i);
        expect(ids(await get('q=zephyrine+clau'))).to.deep.equal([]);
        expect(ids(await get('q=zephyrine+clause'))).to.deep.equal([fixture.known.pageThree.id]);
      });

      it('matches "quoted phrases" in order only', async () => {
        expect(ids(await get(`q=${encodeURIComponent('"quick brown fox"')}`))).to.deep.equal([fixture.known.fox.id]);
        expect(ids(await get(`q=${encodeURIComponent('"brown quick"')}`))).to.deep.equal([]);
      });

      it('needs every word, in any of the searchable fields, signers included', async () => {
        for (const words of [
          ['alpha', 'bravo'],
          ['agreement', 'charlie'],
          ['person', 'delta'],
          ['example', 'org', 'golf'],
        ]) {
          const { ids: found, total } = await allPages(fixture.request[kind], `q=${words.join('+')}+`, 100);
          const expected = expectedIds(words);
          expect(expected.length, words.join(' ')).to.be.greaterThan(0);
          expect(found, words.join(' ')).to.have.members(expected);
          expect(total).to.equal(expected.length);
        }
      });

      it('filters by type, status, signer e-mail and creation time', async () => {
        const after = new Date(NOW.getTime() - 200 * 86_400_000);
        const before = new Date(NOW.getTime() - 60 * 86_400_000);
        const requestsOnly = await allPages(fixture.request[kind], 'type=signing_request&status=declined', 50);
        expect(requestsOnly.ids).to.have.members(fixture.requests.filter((request) => request.status === 'declined').map((request) => request.id));
        const email = PEOPLE[3].email;
        const bySigner = await allPages(fixture.request[kind], `signerEmail=${encodeURIComponent(email.toUpperCase())}`, 50);
        expect(bySigner.ids).to.have.members(
          fixture.requests.filter((request) => request.signers.some((signer) => signer.email === email)).map((request) => request.id),
        );
        const inRange = await allPages(
          fixture.request[kind],
          `q=common&type=document&status=ready&createdAfter=${after.toISOString()}&createdBefore=${before.toISOString()}`,
          50,
        );
        const expected = live().filter(
          (document) => document.status === 'ready' && document.createdAt >= after && document.createdAt < before && documentWords(document).has('common'),
        );
        expect(inRange.ids).to.have.members(expected.map((document) => document.id));
        const waiting = await allPages(fixture.request[kind], 'status=awaiting_file', 50);
        expect(waiting.ids).to.have.members(
          live()
            .filter((document) => document.status === 'awaiting_file')
            .map((document) => document.id),
        );
      });

      for (const [sort, query, words] of [
        ['relevance', 'q=common+fixture', ['common', 'fixture']],
        // Documents and requests hold the phrase in different numbers: one runs out of pages first.
        ['relevance, a phrase', `q=${encodeURIComponent('"fixture text"')}`, ['fixture', 'text']],
        ['-createdAt', 'sort=-createdAt', []],
        ['createdAt', 'q=agreement&sort=createdAt', []],
      ] as const) {
        it(`pages through every hit once, without gaps, the same total on every page, sorted by ${sort}`, async () => {
          const { ids: found, total } = await allPages(fixture.request[kind], query, 13);
          const expected = sort.startsWith('relevance')
            ? expectedIds([...words])
            : sort === 'createdAt'
              ? expectedIds(['agreement'])
              : [...live(), ...fixture.requests].map((resource) => resource.id);
          expect(new Set(found).size, 'no duplicates').to.equal(found.length);
          expect(found).to.have.members(expected);
          expect(total).to.equal(expected.length);
          if (!sort.startsWith('relevance')) {
            const created = new Map([...live(), ...fixture.requests].map((resource) => [resource.id, resource.createdAt.getTime()]));
            const times = found.map((id) => created.get(id)!);
            const ordered = [...times].sort((a, b) => (sort === 'createdAt' ? a - b : b - a));
            expect(times).to.deep.equal(ordered);
          }
        });
      }

      it('never shows another account’s documents or requests, whatever the query', async () => {
        for (const query of [
          'q=xylograph',
          'q=common',
          'q=zephyrine',
          `q=${encodeURIComponent('{"match_all":{}}')}`,
          'sort=-createdAt',
          'q=agreement&type=signing_request',
        ]) {
          const { ids: found } = await allPages(fixture.request[kind], query, 100);
          expect(
            found.filter((id) => fixture.otherIds.has(id)),
            query,
          ).to.deep.equal([]);
        }
        expect((await get('q=xylograph')).body.total).to.equal(0);
      });

      it(`counts hits exactly up to ${TOTAL_COUNTED_UP_TO}, and past that says there are at least as many`, async () => {
        const search = (query: string) => fixture.plenty.request[kind]('GET', `/api/v1/search?${query}`);
        const found = fixture.plenty.documents.filter((document) => !document.deleted && document.status === 'ready');
        expect(found.length).to.be.greaterThan(TOTAL_COUNTED_UP_TO);
        expect((await search('q=fixture+')).body).to.include({ total: TOTAL_COUNTED_UP_TO, totalIsExact: false });
        const since = new Date(NOW.getTime() - 150 * 86_400_000);
        const recent = found.filter((document) => document.createdAt >= since).length;
        expect(recent).to.be.within(1, TOTAL_COUNTED_UP_TO);
        expect((await search(`q=fixture+&createdAfter=${since.toISOString()}`)).body).to.include({ total: recent, totalIsExact: true });
      });

      it(`ranks a match in the file name first, even behind more than ${RANKED_UP_TO} newer matches in the text`, async () => {
        const textMatches = fixture.plenty.documents.filter((document) => !document.deleted && document.status === 'ready');
        expect(textMatches.length).to.be.greaterThan(RANKED_UP_TO);
        const response = await fixture.plenty.request[kind]('GET', '/api/v1/search?q=fixture+&limit=5');
        expect(ids(response)[0]).to.equal(fixture.plenty.named.id);
        expect(response.body.data[0].highlight.fileName).to.match(/<mark>fixture<\/mark>/i);
      });

      if (kind === 'postgres') {
        it(`by relevance ranks the newest ${RANKED_UP_TO} matches and the matches by name; by date, pages through every match`, async () => {
          const matches = [...fixture.plenty.documents.filter((document) => !document.deleted && document.status === 'ready'), fixture.plenty.named];
          const newest = [...matches].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).slice(0, RANKED_UP_TO);
          const ranked = await allPages(fixture.plenty.request.postgres, 'q=fixture+', 100);
          expect(new Set(ranked.ids).size, 'no duplicates').to.equal(ranked.ids.length);
          expect(ranked.ids).to.have.members([...newest.map((document) => document.id), fixture.plenty.named.id]);
          expect(ranked.ids[0]).to.equal(fixture.plenty.named.id);
          const dated = await allPages(fixture.plenty.request.postgres, 'q=fixture+&sort=-createdAt', 100);
          expect(dated.ids).to.have.members(matches.map((document) => document.id));
          // A phrase's matches are found whole, then the newest ranked, and those with the phrase in their name;
          // the same query counts them.
          const phrase = await allPages(fixture.plenty.request.postgres, `q=${encodeURIComponent('"fixture text"')}`, 100);
          expect(phrase.ids).to.have.members([...newest.map((document) => document.id), fixture.plenty.named.id]);
          expect(phrase.ids[0]).to.equal(fixture.plenty.named.id);
          expect(phrase.total).to.equal(TOTAL_COUNTED_UP_TO);
          const recent = `q=${encodeURIComponent('"fixture text"')}&createdAfter=${new Date(NOW.getTime() - 60 * 86_400_000).toISOString()}`;
          const since = matches.filter((document) => document.createdAt.getTime() >= NOW.getTime() - 60 * 86_400_000);
          expect((await fixture.plenty.request.postgres('GET', `/api/v1/search?${recent}&limit=100`)).body.total).to.equal(since.length);
        });
      }

      it('reads engine query syntax as plain words', async () => {
        const matchAll = await get(`q=${encodeURIComponent('{"match_all":{}}')}`);
        expect(matchAll.status).to.equal(200);
        expect(matchAll.body.total).to.equal(0);
        const boolean = await get(`q=${encodeURIComponent('indemnity OR -alpha AND title:(x)')}`);
        expect(boolean.status).to.equal(200);
        expect(boolean.body.total).to.equal(0);
      });

      const bad: [string, string][] = [
        ['limit=0', 'limit must be at least 1'],
        ['limit=1000', 'limit must be at most 100'],
        ['limit=abc', 'limit must be a number'],
        ['type=folder', 'type must be one of: document, signing_request, template'],
        ['type=document&type=signing_request', 'type must be one of: document, signing_request, template'],
        ['status=signed', 'status must be one of'],
        ['createdAfter=yesterday-ish', 'createdAfter must be an ISO 8601 date'],
        ['createdBefore=2026-13-45', 'createdBefore must be an ISO 8601 date'],
        ['cursor=garbage', 'cursor is not a valid cursor'],
        [`cursor=${Buffer.from('["relevance",1,"acct_x"]').toString('base64url')}`, 'cursor is not a valid cursor'],
        [`q=${'a'.repeat(5000)}`, 'q must be at most 500 characters'],
        ['q=*:*', 'q must contain a letter or a digit'],
        ['q=%22%22', 'q must contain a letter or a digit'],
        ['sort=relevance', 'sort relevance needs q'],
        ['sort=size', 'sort must be one of'],
      ];
      for (const [query, detail] of bad) {
        it(`400 for ${query.slice(0, 60)}`, async () => {
          const response = await get(query);
          expect(response.status, JSON.stringify(response.body)).to.equal(400);
          expect(response.body.error).to.equal('validation_error');
          expect(response.body.details.join('; ')).to.contain(detail);
        });
      }

      it('400 for a cursor of another sort order', async () => {
        const first = await get('q=common&limit=2');
        const response = await get(`sort=-createdAt&cursor=${first.body.pagination.nextCursor}`);
        expect(response.status).to.equal(400);
        expect(response.body.details).to.deep.equal(['cursor belongs to another sort order']);
      });
    });

    describe(`dashboard on ${kind}`, () => {
      const get = (path: string) => fixture.request[kind]('GET', `/api/v1/dashboard/${path}`);

      it('GET /dashboard/stats: every number as counted here', async () => {
        const response = await get('stats');
        expect(response.status).to.equal(200);
        const monthStart = new Date(Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth(), 1));
        const byStatus = countBy(fixture.requests, (request) => request.status, REQUEST_STATUSES);
        const signers = fixture.requests.flatMap((request) => request.signers);
        const completed = fixture.requests.filter((request) => request.status === 'completed').map(secondsOf);
        const finished = byStatus.completed + byStatus.declined + byStatus.cancelled + byStatus.expired;
        expect(response.body.documents).to.deep.equal({
          total: live().length,
          thisMonth: live().filter((document) => document.createdAt >= monthStart).length,
        });
        expect(response.body.signingRequests).to.deep.equal({ total: fixture.requests.length, byStatus });
        expect(response.body.completionRate).to.equal(Math.round((byStatus.completed / finished) * 10_000) / 10_000);
        closeTo(response.body.timeToComplete.medianSeconds, percentileCont(completed, 0.5), kind);
        closeTo(response.body.timeToComplete.p90Seconds, percentileCont(completed, 0.9), kind);
        expect(response.body.signers).to.deep.equal({ total: signers.length, byStatus: countBy(signers, (signer) => signer.status, SIGNER_STATUSES) });
        expect(response.body.usage.documents).to.deep.equal({
          used: fixture.documents.filter((document) => document.createdAt >= monthStart).length,
          limit: null,
        });
      });

      it('GET /dashboard/signing-breakdown: statuses, who holds things up, why people decline — overall and over a range', async () => {
        expect((await get('signing-breakdown')).body).to.deep.equal(breakdownOf(fixture.requests));
        const from = new Date(NOW.getTime() - 250 * 86_400_000);
        const to = new Date(NOW.getTime() - 40 * 86_400_000);
        const ranged = await get(`signing-breakdown?from=${from.toISOString()}&to=${to.toISOString()}`);
        expect(ranged.status).to.equal(200);
        expect(ranged.body).to.deep.equal(breakdownOf(fixture.requests.filter((request) => request.createdAt >= from && request.createdAt < to)));
      });

      it('GET /dashboard/trends?months=15: one entry per month, zeros included', async () => {
        const response = await get('trends?months=15');
        expect(response.status).to.equal(200);
        expect(response.body.data).to.have.length(15);
        const first = response.body.data[0];
        expect(first).to.include({ documentsCreated: 0, requestsSent: 0, completed: 0, declined: 0, expired: 0, medianTimeToCompleteSeconds: null });
        for (const trend of response.body.data) {
          const inMonth = (date: Date | null) => date !== null && monthKey(date) === trend.month;
          const finishedAs = (status: string) => fixture.requests.filter((request) => request.status === status && inMonth(request.completedAt));
          expect(trend, trend.month).to.deep.include({
            documentsCreated: live().filter((document) => inMonth(document.createdAt)).length,
            requestsSent: fixture.requests.filter((request) => inMonth(request.createdAt)).length,
            completed: finishedAs('completed').length,
            declined: finishedAs('declined').length,
            expired: finishedAs('expired').length,
          });
          closeTo(trend.medianTimeToCompleteSeconds, percentileCont(finishedAs('completed').map(secondsOf), 0.5), kind);
        }
      });

      it('400 for bad ranges and month counts', async () => {
        for (const path of [
          'trends?months=0',
          'trends?months=37',
          'trends?months=x',
          'signing-breakdown?from=nope',
          'signing-breakdown?from=2026-05-01&to=2026-04-01',
          'activity?limit=0',
          'activity?type=nope',
          'activity?cursor=doc_x',
        ]) {
          const response = await get(path);
          expect(response.status, path).to.equal(400);
          expect(response.body.error).to.equal('validation_error');
        }
      });
    });
  }

  describe('both backends give the same answers', () => {
    it('the same hits for the same queries, and the same dashboard', async () => {
      for (const query of ['q=common+fix', `q=${VOCABULARY[4]}+agreement`, 'q=person&type=signing_request&status=pending', 'sort=createdAt&type=document']) {
        const [pg, es] = await Promise.all(backends.map((kind) => allPages(fixture.request[kind], query, 40)));
        expect(es.ids, query).to.have.members(pg.ids);
        expect(es.total, query).to.equal(pg.total);
      }
      for (const path of ['signing-breakdown', 'trends?months=3']) {
        const [pg, es] = await Promise.all(backends.map((kind) => fixture.request[kind]('GET', `/api/v1/dashboard/${path}`)));
        if (path.startsWith('trends')) {
          const strip = (body: { data: object[] }) => body.data.map((trend) => ({ ...trend, medianTimeToCompleteSeconds: null }));
          expect(strip(es.body)).to.deep.equal(strip(pg.body));
        } else expect(es.body).to.deep.equal(pg.body);
      }
    });
  });
});
