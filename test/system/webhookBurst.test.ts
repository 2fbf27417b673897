import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { client } from '../support/http';
import { startReceiver } from '../support/receiver';
import { eventually } from '../support/signing';
import { startSplitSystem } from '../support/splitSystem';

const EVENTS = 200;

// The api runs here; the worker is its own process, killed with SIGKILL in the middle of a burst.
describe('webhook deliveries when the worker is killed mid-burst', function () {
  this.timeout(240_000);
  let system: Awaited<ReturnType<typeof startSplitSystem>>;

  before(async () => {
    system = await startSplitSystem('burst', { WEBHOOK_ALLOW_PRIVATE_HOSTS: '127.0.0.1', WEBHOOK_RETRY_SCALE: '0.001', RATE_LIMIT_MULTIPLIER: '10' });
  });

  after(() => system?.stop());

  it(`delivers each of ${EVENTS} events at least once, and receivers that deduplicate count exactly ${EVENTS}`, async () => {
    const { api } = system;
    const db = api.database.knex;
    const account = await createAccount(db, { email: `burst-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
    const { secret } = await createApiKey(db, account.id);
    const request = client(api.url!, secret);
    const receiver = await startReceiver();
    try {
      const webhook = await request('POST', '/api/v1/webhooks', { json: { url: receiver.url, events: ['document.created'] } });
      expect(webhook.status).to.equal(201);

      // Once the worker delivers, a burst: documents created ten at a time, the worker killed when
      // some deliveries have arrived and most are still to come, then started again.
      await request('POST', '/api/v1/documents', { json: { fileName: 'warm-up.pdf', fileSize: 1000 } });
      await eventually(async () => expect(receiver.received.length).to.equal(1), 120_000);
      const burst = (async () => {
        for (let i = 0; i < EVENTS - 1; i += 10) {
          const batch = Array.from({ length: Math.min(10, EVENTS - 1 - i) }, (_, j) =>
            request('POST', '/api/v1/documents', { json: { fileName: `burst-${i + j}.pdf`, fileSize: 1000 } }),
          );
          for (const response of await Promise.all(batch)) expect(response.status).to.equal(201);
        }
      })();
      await eventually(async () => expect(receiver.unique().size).to.be.at.least(30), 60_000);
      await system.killWorker();
      const deliveredBeforeKill = receiver.unique().size;
      system.startWorker();
      await burst;
      expect(deliveredBeforeKill, 'killed mid-burst').to.be.below(EVENTS);

      const eventIds: string[] = (await db('events').where({ account_id: account.id, type: 'document.created' }).select('id')).map((row) => row.id);
      expect(eventIds).to.have.length(EVENTS);
      await eventually(async () => expect(receiver.unique().size).to.equal(EVENTS), 180_000);
      expect([...receiver.unique().keys()].sort()).to.deep.equal([...eventIds].sort());
      expect(receiver.received.length).to.be.at.least(EVENTS);
    } finally {
      await receiver.stop();
    }
  });
});
