import { expect } from 'chai';
import { createApiKey } from '../../src/apiKeys/service';
import { newId } from '../../src/ids';
import { createPostgresSearch } from '../../src/search/postgres';
import { startApp } from '../support/app';
import { signedUp, type ConsoleClient } from '../support/consoleClient';
import { documentRow } from '../support/factories';
import { client, type Request } from '../support/http';
import { createSigningRequest, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { sharedSystem } from '../support/system';

// "Waiting on" has one definition (waitingOn, domain/signingRequests.ts): whose turn it is, never a later
// step's. The request page, the API's progress and the dashboard on both its backends must name the same
// people: Elasticsearch's dashboard is the shared system's (ELASTICSEARCH_URL is set for integration
// runs), PostgreSQL's an app of its own beside it, on the same database.

const backends = ['postgres', 'elasticsearch'] as const;
type Kind = (typeof backends)[number];
type Waiting = { email: string; pendingRequests: number }[];

/** The rows of the dashboard table with this caption, as { label: count }. */
function tableCounts(page: string, caption: string) {
  const table = new RegExp(`<caption>${caption}</caption>([\\s\\S]*?)</table>`).exec(page)?.[1] ?? '';
  return Object.fromEntries([...table.matchAll(/<tr><td class="wrap">([^<]*)<\/td><td>(\d+)<\/td><\/tr>/g)].map(([, label, count]) => [label, Number(count)]));
}

const waitingForLine = (page: string) => /<p>Waiting for: ([^<]*)<\/p>/.exec(page)?.[1] ?? null;

describe('whom a request is waiting on: the request page, the API and the dashboard on both backends', function () {
  this.timeout(120_000);
  let db: Awaited<ReturnType<typeof sharedSystem>>['database']['knex'];
  let system: Awaited<ReturnType<typeof sharedSystem>>;
  const stops: (() => Promise<unknown>)[] = [];

  before(async () => {
    system = await sharedSystem();
    db = system.database.knex;
  });

  after(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  /** A console account, logged in, with the REST API on each dashboard backend. */
  async function account() {
    const { browser, email } = await signedUp(system.url!);
    const { account_id: accountId } = await db('users').where({ email }).first('account_id');
    const { secret } = await createApiKey(db, accountId);
    const postgres = await startApp({}, { deps: { search: createPostgresSearch(db) } });
    stops.push(postgres.close);
    const api: Record<Kind, Request> = { elasticsearch: client(system.url!, secret), postgres: client(postgres.url, secret) };
    return { browser, accountId, api };
  }

  /**
   * The dashboard's "Waiting on" by each backend, once Elasticsearch's copy has caught up with the
   * database (every count by status the same as PostgreSQL's): then the two must agree exactly.
   */
  async function waitingOnByBackend(api: Record<Kind, Request>): Promise<Record<Kind, Waiting>> {
    return eventually(async () => {
      const [postgres, elasticsearch] = await Promise.all(backends.map((kind) => api[kind]('GET', '/api/v1/dashboard/signing-breakdown')));
      expect([postgres.status, elasticsearch.status]).to.deep.equal([200, 200]);
      expect(elasticsearch.body.signersByStatus, 'the Elasticsearch copy has caught up').to.deep.equal(postgres.body.signersByStatus);
      expect(elasticsearch.body.requestsByStatus).to.deep.equal(postgres.body.requestsByStatus);
      return { postgres: postgres.body.topPendingSigners, elasticsearch: elasticsearch.body.topPendingSigners };
    }, 30_000);
  }

  /** The request page, the API's progress and the console's dashboard, when the request is waiting on `name` alone. */
  async function expectWaitingOnlyOn(
    browser: ConsoleClient,
    api: Record<Kind, Request>,
    requestId: string,
    signer: { id: string; name: string; email: string },
  ) {
    await eventually(async () => {
      expect(waitingForLine((await browser.request('GET', `/app/requests/${requestId}`)).text)).to.equal(signer.name);
      expect((await api.elasticsearch('GET', `/api/v1/signatures/${requestId}`)).body.progress.waitingFor).to.deep.equal([signer.id]);
    });
    const only = [{ email: signer.email, pendingRequests: 1 }];
    await eventually(
      async () => expect(await waitingOnByBackend(api), 'the dashboard on each backend').to.deep.equal({ postgres: only, elasticsearch: only }),
      30_000,
    );
    // The console's dashboard shows the shared system's (Elasticsearch's) numbers.
    expect(tableCounts((await browser.request('GET', '/app')).text, 'Waiting on')).to.deep.equal({ [signer.email]: 1 });
  }

  it('a sequential request of two: the first signer alone, then the second once the first has signed', async () => {
    const { browser, api } = await account();
    const { signingRequest } = await createSigningRequest(api.elasticsearch, {
      signingOrder: 'sequential',
      signers: [
        { name: 'Grace Hopper', email: 'grace@example.com' },
        { name: 'Alan Turing', email: 'alan@example.com' },
      ],
    });
    const [grace, alan] = signingRequest.signers;
    await expectWaitingOnlyOn(browser, api, signingRequest.id, grace);

    const link = await signingLinkOf(api.elasticsearch, signingRequest.id, grace.id);
    const signed = await client(system.url!)('POST', `/sign/${tokenOf(link)}/sign`, {
      json: { consent: true, signature: { type: 'typed', value: 'Grace Hopper' } },
    });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    await expectWaitingOnlyOn(browser, api, signingRequest.id, alan);
  });

  it('every part and step: the API and both dashboards count exactly whose turn it is, never a cc, a later step, or one who has acted', async () => {
    const { accountId, api } = await account();
    const documentId = newId('document');
    await db('documents').insert(documentRow(documentId, accountId, 'steps.pdf', null));
    type Recipient = [email: string, recipientType: string, routingOrder: number, status: string, waited: boolean];
    const requests: { status: string; recipients: Recipient[] }[] = [
      {
        status: 'pending',
        recipients: [
          ['approver@example.com', 'approver', 1, 'approved', false],
          ['copy@example.com', 'cc', 1, 'pending', false],
          ['next@example.com', 'signer', 2, 'notified', true],
          ['later@example.com', 'signer', 3, 'pending', false],
        ],
      },
      {
        status: 'pending',
        recipients: [
          ['reader@example.com', 'viewer', 1, 'viewed', false],
          ['next@example.com', 'signer', 1, 'viewed', true],
          ['done@example.com', 'signer', 1, 'signed', false],
          ['later@example.com', 'approver', 2, 'pending', false],
        ],
      },
      {
        // The first step done, the second's turn come before their invitations went: waited on all the same.
        status: 'pending',
        recipients: [
          ['done@example.com', 'signer', 1, 'signed', false],
          ['next@example.com', 'signer', 2, 'pending', true],
          ['reader@example.com', 'viewer', 2, 'pending', true],
        ],
      },
      // Everyone has acted: being sealed, nobody waited on.
      { status: 'pending', recipients: [['done@example.com', 'signer', 1, 'signed', false]] },
      // Ended: nobody waited on.
      { status: 'cancelled', recipients: [['later@example.com', 'signer', 1, 'notified', false]] },
    ];
    const ids = requests.map(() => newId('signingRequest'));
    const signerIds = requests.map((request) => request.recipients.map(() => newId('signer')));
    await db('signing_requests').insert(
      requests.map((request, index) => ({
        id: ids[index],
        account_id: accountId,
        document_id: documentId,
        title: `Steps ${index}`,
        signing_order: 'sequential',
        status: request.status,
        expires_at: new Date(Date.now() + 86_400_000),
        reminder_every_days: 0,
        original_sha256: 'a'.repeat(64),
        signer_text: '',
        workflow_started_at: new Date(), // rows, not work: the sweeper must not start workflows for them
      })),
    );
    await db('signers').insert(
      requests.flatMap((request, index) =>
        request.recipients.map(([email, recipientType, routingOrder, status], order) => ({
          id: signerIds[index][order],
          signing_request_id: ids[index],
          name: email,
          email,
          order: order + 1,
          recipient_type: recipientType,
          routing_order: routingOrder,
          status,
        })),
      ),
    );
    await system.search.index(ids.map((id) => ({ type: 'signing_request' as const, id })));

    // Without a workflow, the API's progress is the database's: the same rule, request by request.
    for (const [index, request] of requests.entries()) {
      const found = await api.postgres('GET', `/api/v1/signatures/${ids[index]}`);
      expect(found.body.progress.waitingFor, `request ${index}`).to.deep.equal(signerIds[index].filter((_, order) => request.recipients[order][4]));
    }
    const expected = [
      { email: 'next@example.com', pendingRequests: 3 },
      { email: 'reader@example.com', pendingRequests: 1 },
    ];
    expect(await waitingOnByBackend(api), 'the dashboard on each backend').to.deep.equal({ postgres: expected, elasticsearch: expected });
  });
});
