import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { client } from '../support/http';
import { createSigningRequest, eventually, tokenOf } from '../support/signing';
import { startSplitSystem } from '../support/splitSystem';

// The api runs here; the worker runs as its own process so the test can kill it mid-flight.
describe('a worker killed while signing requests are in flight', function () {
  this.timeout(180_000);
  let system: Awaited<ReturnType<typeof startSplitSystem>>;

  before(async () => {
    system = await startSplitSystem('restart');
  });

  after(() => system?.stop());

  /** Updates (signatures) the request's workflow has accepted so far: its history keeps them. */
  async function acceptedUpdates(requestId: string) {
    const events = (await system.api.client.workflow.getHandle(requestId).fetchHistory()).events ?? [];
    return events.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes).length;
  }

  it('completes every request after a restart, with one signature per signer and each event once', async () => {
    const { api } = system;
    const db = api.database.knex;
    const account = await createAccount(db, { email: `restart-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
    const { secret } = await createApiKey(db, account.id);
    const request = client(api.url!, secret);
    const requests: { id: string; documentId: string; signers: { id: string }[] }[] = [];
    for (let i = 0; i < 4; i++) requests.push((await createSigningRequest(request)).signingRequest);
    const links = [];
    for (const signingRequest of requests) {
      for (const signer of signingRequest.signers) {
        const link = await request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signer.id}/link`);
        links.push({ requestId: signingRequest.id, signerId: signer.id, token: tokenOf(link.body.url) });
      }
    }
    const sign = (token: string) => client(api.url!)('POST', `/sign/${token}/sign`, { json: { consent: true, signature: { type: 'typed', value: 'Signer' } } });

    // First signers sign while the worker runs; the second signatures start and the worker dies under them.
    for (const link of links.filter((_, i) => i % 2 === 0)) expect((await sign(link.token)).status).to.equal(200);
    const second = Promise.all(links.filter((_, i) => i % 2 === 1).map((link) => sign(link.token)));
    // The kill comes once a second signature has reached its workflow (its update accepted), the others on their way.
    await eventually(async () => {
      const accepted = await Promise.all(requests.map((signingRequest) => acceptedUpdates(signingRequest.id)));
      expect(accepted.some((count) => count >= 2)).to.equal(true);
    }, 60_000);
    await system.killWorker();
    system.startWorker();
    const statuses = (await second).map((response) => response.status);
    expect(
      statuses.every((status) => status === 200 || status === 409),
      String(statuses),
    ).to.equal(true);

    for (const signingRequest of requests) {
      await eventually(async () => {
        const got = await request('GET', `/api/v1/signatures/${signingRequest.id}`);
        expect(got.body.status).to.equal('completed');
      }, 90_000);
    }
    const events = await db('events').where({ account_id: account.id });
    const count = (type: string, requestId: string) =>
      events.filter(
        (row) =>
          row.type === type &&
          (row.data.signingRequestId === requestId ||
            (type === 'document.signed' && row.data.documentId === requests.find((r) => r.id === requestId)!.documentId)),
      ).length;
    for (const signingRequest of requests) {
      expect(count('signer.signed', signingRequest.id), 'signer.signed').to.equal(2);
      expect(count('signing_request.created', signingRequest.id), 'created').to.equal(1);
      expect(count('signing_request.completed', signingRequest.id), 'completed').to.equal(1);
      expect(count('document.signed', signingRequest.id), 'document.signed').to.equal(1);
      const signed = await db('signers').where({ signing_request_id: signingRequest.id, status: 'signed' });
      expect(signed).to.have.length(2);
      expect(await db('sealed_documents').where({ signing_request_id: signingRequest.id })).to.have.length(1);
    }
  });
});
