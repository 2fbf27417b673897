import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { verifyWebhook } from 'signet/webhooks';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { startEndlessReceiver, startReceiver, type Receiver, type Responder } from '../support/receiver';
import { createSigningRequest, eventually, tokenOf } from '../support/signing';
import { createTestAccount, sharedSystem } from '../support/system';
import { uploadDocument } from '../support/documents';
import { webhooksSettled } from '../support/webhooks';
import { decryptSecret } from '../../src/webhooks/secrets';
import { setAccountPlan } from '../../src/accounts/service';
import { newId } from '../../src/ids';
import { webhookWorkflowId } from '../../workflows/definitions';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const receivers: Receiver[] = [];
async function receiver(respond?: Responder, port?: number) {
  const started = await startReceiver(respond, port);
  receivers.push(started);
  return started;
}

async function subscribe(account: Account, url: string, body: Record<string, unknown> = {}) {
  const created = await account.request('POST', '/api/v1/webhooks', { json: { url, events: ['*'], ...body } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return created.body as { id: string; secret: string; url: string; events: string[]; enabled: boolean };
}

const createDocument = async (account: Account, fileName = 'contract.pdf') => {
  const created = await account.request('POST', '/api/v1/documents', { json: { fileName, fileSize: 1000 } });
  expect(created.status).to.equal(201);
  return created.body as { id: string };
};

/** The independent check of X-Service-Signature: openssl computes the HMAC of the body exactly as received. */
const opensslHmac = (secret: string, body: string) =>
  execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: body }).toString().trim().split(' ').pop()!;

const deliveriesOf = async (account: Account, webhookId: string, query = '') => {
  const response = await account.request('GET', `/api/v1/webhooks/${webhookId}/deliveries${query}`);
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  return response.body.data as any[];
};

// The receivers this file started stop after its tests (a hook at the top of a file would be a root hook of every file's run).
describe('webhooks', () => {
  after(async () => {
    await Promise.all(receivers.map((started) => started.stop().catch(() => undefined)));
  });

  describe('POST /api/v1/webhooks', () => {
    it('401 without an API key', async () => {
      const system = await sharedSystem();
      const response = await client(system.url!)('POST', '/api/v1/webhooks', { json: { url: 'https://example.com/hook', events: ['*'] } });
      expect(response.status).to.equal(401);
      expect(response.body.error).to.equal('unauthorized');
    });

    it('400 names every violated rule, unknown event types included', async () => {
      const account = await createTestAccount();
      const cases: [unknown, string[]][] = [
        [{}, ['url is required', 'events is required']],
        [{ url: 'not a url', events: [] }, ['url must be an absolute https:// URL', 'events must have at least 1 item(s)']],
        [{ url: 'ftp://example.com/x', events: ['*'] }, ['url must be an absolute https:// URL']],
        [{ url: `https://example.com/${'a'.repeat(2048)}`, events: ['*'] }, ['url must be at most 2048 characters']],
        [{ url: 'https://user:pw@example.com/hook', events: ['*'] }, ['url must not contain credentials']],
        [{ url: 'http://example.com/hook', events: ['*'] }, ['url must be an absolute https:// URL']],
        [{ url: 'https://example.com/hook', events: 'document.created' }, ['events must be a array']],
        [
          { url: 'https://example.com/hook', events: ['*'], enabled: 'yes', description: 'x'.repeat(501) },
          ['enabled must be a boolean', 'description must be at most 500 characters'],
        ],
      ];
      for (const [body, details] of cases) {
        const response = await account.request('POST', '/api/v1/webhooks', { json: body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.body.error).to.equal('validation_error');
        expect(response.body.details, JSON.stringify(body)).to.include.members(details);
      }
      const unknown = await account.request('POST', '/api/v1/webhooks', {
        json: { url: 'https://example.com/hook', events: ['document.created', 'document.exploded', 'nope'] },
      });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.details[0]).to.match(/^events has unknown event type\(s\): document\.exploded, nope;/);
      const notJson = await account.request('POST', '/api/v1/webhooks', { body: '{"url":', headers: { 'Content-Type': 'application/json' } });
      expect(notJson.status).to.equal(400);
      const array = await account.request('POST', '/api/v1/webhooks', { json: [{ url: 'https://example.com/hook', events: ['*'] }] });
      expect(array.status).to.equal(400);
      expect(array.body.details).to.deep.equal(['body must be an object']);
      const form = await account.request('POST', '/api/v1/webhooks', {
        body: 'url=https://example.com',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).to.equal(415);
      for (const path of [
        '/api/v1/webhooks/garbage',
        `/api/v1/webhooks/${'x'.repeat(3000)}`,
        '/api/v1/webhooks/wh_nope/deliveries/whd_nope',
        "/api/v1/webhooks/'%20or%201=1--",
      ]) {
        const response = await account.request('GET', path);
        expect(response.status, path).to.equal(404);
      }
    });

    it('refuses literal loopback, private, link-local and localhost addresses at creation', async () => {
      const account = await createTestAccount();
      for (const url of [
        'https://127.0.0.2/hook',
        'https://10.0.0.1/hook',
        'https://169.254.169.254/latest/meta-data',
        'https://[::1]/hook',
        'https://[::ffff:10.0.0.1]/hook',
        'https://localhost/hook',
        'https://0.0.0.0/hook',
        'https://192.168.1.1/hook',
      ]) {
        const response = await account.request('POST', '/api/v1/webhooks', { json: { url, events: ['*'] } });
        expect(response.status, url).to.equal(400);
        expect(response.body.details[0], url).to.match(/^url must not point to/);
      }
    });

    it('403 plan_upgrade_required on Free and Pro, and the hourly limit of the plan still applies', async () => {
      for (const plan of ['free', 'pro'] as const) {
        const account = await createTestAccount(plan);
        const response = await account.request('POST', '/api/v1/webhooks', { json: { url: 'https://example.com/hook', events: ['*'] } });
        expect(response.status).to.equal(403);
        expect(response.body.error).to.equal('plan_upgrade_required');
      }
      const free = await createTestAccount('free');
      const statuses = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await free.request('POST', '/api/v1/webhooks', { json: { url: 'https://example.com/hook', events: ['*'] } })).status);
      expect(statuses).to.deep.equal([403, 403, 403, 403, 403, 429]);
    });

    it('201 with a whsec_ secret that is shown once and stored encrypted', async () => {
      const account = await createTestAccount();
      const created = await account.request('POST', '/api/v1/webhooks', {
        json: { url: 'https://example.com/hooks/signet', events: ['document.created', 'document.created', 'signer.signed'], description: 'CRM sync' },
      });
      expect(created.status).to.equal(201);
      expect(created.body).to.include({
        url: 'https://example.com/hooks/signet',
        description: 'CRM sync',
        enabled: true,
        disabledReason: null,
        failingSince: null,
      });
      expect(created.body.id).to.match(/^wh_/);
      expect(created.body.events).to.deep.equal(['document.created', 'signer.signed']);
      expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(created.body.secret.slice(6), 'base64')).to.have.length(32);

      const row = await account.db('webhooks').where({ id: created.body.id }).first();
      expect(row.secret_ciphertext).not.to.contain(created.body.secret.slice(6, 20));
      expect(decryptSecret(account.system.webhooks.secretKey, row.secret_ciphertext)).to.equal(created.body.secret);

      const fetched = await account.request('GET', `/api/v1/webhooks/${created.body.id}`);
      expect(fetched.status).to.equal(200);
      expect(fetched.body).not.to.have.property('secret');
      const listed = await account.request('GET', '/api/v1/webhooks');
      expect(listed.body.data.map((webhook: any) => webhook.id)).to.deep.equal([created.body.id]);
      expect(listed.body.data[0]).not.to.have.property('secret');
    });
  });

  describe('GET, PATCH, DELETE /api/v1/webhooks/{id}', () => {
    it('updates, lists with a cursor, deletes, and answers 404 for another account’s webhook', async () => {
      const account = await createTestAccount();
      const other = await createTestAccount();
      const first = await subscribe(account, 'https://example.com/one');
      const second = await subscribe(account, 'https://example.com/two');

      const page1 = await account.request('GET', '/api/v1/webhooks?limit=1');
      expect(page1.body.data.map((webhook: any) => webhook.id)).to.deep.equal([second.id]);
      expect(page1.body.pagination.hasMore).to.equal(true);
      const page2 = await account.request('GET', `/api/v1/webhooks?limit=1&cursor=${page1.body.pagination.nextCursor}`);
      expect(page2.body.data.map((webhook: any) => webhook.id)).to.deep.equal([first.id]);
      expect((await account.request('GET', '/api/v1/webhooks?cursor=garbage')).status).to.equal(400);

      const patched = await account.request('PATCH', `/api/v1/webhooks/${first.id}`, {
        json: { events: ['signer.declined'], enabled: false, description: null },
      });
      expect(patched.status).to.equal(200);
      expect(patched.body).to.include({ enabled: false, description: null });
      expect(patched.body.events).to.deep.equal(['signer.declined']);
      expect((await account.request('PATCH', `/api/v1/webhooks/${first.id}`, { json: {} })).status).to.equal(400);
      const badEvents = await account.request('PATCH', `/api/v1/webhooks/${first.id}`, { json: { events: ['document.teleported'] } });
      expect(badEvents.status).to.equal(400);
      expect(badEvents.body.details[0]).to.contain('document.teleported');
      expect((await account.request('PATCH', `/api/v1/webhooks/${first.id}`, { json: { url: 'https://10.1.2.3/x' } })).status).to.equal(400);

      for (const [method, path] of [
        ['GET', `/api/v1/webhooks/${first.id}`],
        ['PATCH', `/api/v1/webhooks/${first.id}`],
        ['DELETE', `/api/v1/webhooks/${first.id}`],
        ['POST', `/api/v1/webhooks/${first.id}/rotate-secret`],
        ['POST', `/api/v1/webhooks/${first.id}/test`],
        ['GET', `/api/v1/webhooks/${first.id}/deliveries`],
        ['GET', `/api/v1/webhooks/${first.id}/deliveries/${newId('delivery')}`],
        ['POST', `/api/v1/webhooks/${first.id}/deliveries/${newId('delivery')}/redeliver`],
      ]) {
        const response = await other.request(method, path, method === 'PATCH' ? { json: { enabled: true } } : {});
        expect(response.status, `${method} ${path}`).to.equal(404);
        expect(response.body.error).to.equal('not_found');
      }

      expect((await account.request('DELETE', `/api/v1/webhooks/${first.id}`)).status).to.equal(204);
      expect((await account.request('GET', `/api/v1/webhooks/${first.id}`)).status).to.equal(404);
      expect((await account.request('DELETE', `/api/v1/webhooks/${first.id}`)).status).to.equal(404);
    });

    it('PATCH needs the Business plan too, and a downgraded account receives nothing', async () => {
      const account = await createTestAccount();
      const hooks = await receiver();
      const webhook = await subscribe(account, hooks.url);
      await setAccountPlan(account.db, account.account.id, 'pro');
      const response = await account.request('PATCH', `/api/v1/webhooks/${webhook.id}`, { json: { enabled: false } });
      expect(response.status).to.equal(403);
      expect(response.body.error).to.equal('plan_upgrade_required');
      await createDocument(account);
      const eventOf = () => account.db('events').where({ account_id: account.account.id }).first();
      await eventually(async () => expect((await eventOf()).dispatched_at).not.to.equal(null));
      // Nothing to deliver: the event is marked dispatched without waking the webhook's workflow.
      const describe = account.system.client.workflow.getHandle(webhookWorkflowId(webhook.id)).describe();
      await describe.then(
        () => expect.fail('a delivery workflow was started'),
        (error) => expect(error.name).to.equal('WorkflowNotFoundError'),
      );
      expect(hooks.received).to.have.length(0);
      expect(await deliveriesOf(account, webhook.id)).to.have.length(0);
    });
  });

  describe('webhook delivery', () => {
    it('delivers every event type with the envelope, a signature openssl verifies, and Standard Webhooks headers', async () => {
      const account = await createTestAccount();
      const hooks = await receiver();
      const webhook = await subscribe(account, hooks.url);

      const { signingRequest } = await createSigningRequest(account.request);
      for (const signer of signingRequest.signers) {
        const link = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signer.id}/link`);
        const signed = await client(account.system.url!)('POST', `/sign/${tokenOf(link.body.url)}/sign`, {
          json: { consent: true, signature: { type: 'typed', value: signer.name } },
        });
        expect(signed.status).to.equal(200);
      }
      const declined = await createSigningRequest(account.request);
      const link = await account.request('POST', `/api/v1/signatures/${declined.signingRequest.id}/signers/${declined.signingRequest.signers[0].id}/link`);
      expect((await client(account.system.url!)('POST', `/sign/${tokenOf(link.body.url)}/decline`, { json: { reason: 'Wrong amount' } })).status).to.equal(200);

      const specTypes = ['document.created', 'document.signed', 'signing_request.created', 'signing_request.completed', 'signer.signed', 'signer.declined'];
      // signing_request.declined is the last event either request records: after it, the set of events is final
      // (signing_request.completed comes after document.signed in the same transaction).
      await eventually(async () => {
        const types = new Set([...hooks.unique().values()].map((envelope) => envelope.type));
        expect([...types]).to.include.members([...specTypes, 'signing_request.declined']);
      }, 30_000);

      let events: { id: string; type: string; data: unknown }[] = [];
      await eventually(async () => {
        events = await account.db('events').where({ account_id: account.account.id });
        expect([...hooks.unique().keys()].sort()).to.deep.equal(events.map((event) => event.id).sort());
      });
      const standard = new StandardWebhook(webhook.secret);
      for (const entry of hooks.received) {
        const envelope = JSON.parse(entry.body);
        expect(Object.keys(envelope)).to.deep.equal(['id', 'type', 'timestamp', 'data']);
        expect(envelope.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        const event = events.find((row) => row.id === envelope.id);
        expect(event, envelope.id).to.not.equal(undefined);
        expect(envelope.type).to.equal(event!.type);
        expect(envelope.data).to.deep.equal(event!.data);
        expect(entry.headers['content-type']).to.equal('application/json');
        expect(entry.headers['user-agent']).to.match(/^Signet-Webhooks\/\d+\.\d+\.\d+$/);
        expect(entry.headers['x-service-signature']).to.equal(opensslHmac(webhook.secret, entry.body));
        expect(entry.headers['webhook-id']).to.equal(envelope.id);
        expect(() => standard.verify(entry.body, entry.headers as Record<string, string>)).not.to.throw();
        expect(verifyWebhook(webhook.secret, entry.body, entry.headers['x-service-signature'])).to.equal(true);
      }
      const signedEnvelope = [...hooks.unique().values()].find((envelope) => envelope.type === 'document.signed');
      expect(signedEnvelope.data).to.include.keys('documentId', 'fileName', 'signedAt', 'signatureCount');
      expect(signedEnvelope.data.signatureCount).to.equal(2);

      const log = await deliveriesOf(account, webhook.id, '?status=succeeded&limit=100');
      expect(log).to.have.length(events.length);
      expect(log.every((delivery) => delivery.attempts === 1 && delivery.lastStatusCode === 200 && delivery.nextRetryAt === null)).to.equal(true);
      expect(await account.db('events').where({ account_id: account.account.id }).whereNull('dispatched_at')).to.have.length(0);
    });

    it('sends nothing that is not subscribed, nothing to a disabled webhook, and never another account’s events', async () => {
      const account = await createTestAccount();
      const other = await createTestAccount();
      const hooks = await receiver();
      const onlySigned = await subscribe(account, `${hooks.url}?only-signed`, { events: ['signer.signed'] });
      const disabled = await subscribe(account, `${hooks.url}?disabled`, { enabled: false });
      const wanted = await subscribe(account, `${hooks.url}?wanted`, { events: ['document.created'] });
      await createDocument(other, 'other-account.pdf');
      await createDocument(account, 'first.pdf');
      await createDocument(other, 'other-account-2.pdf');
      const last = await createDocument(account, 'last.pdf');

      await eventually(async () => expect(hooks.received.map((entry) => JSON.parse(entry.body).data.documentId)).to.include(last.id));
      await webhooksSettled(account); // anything wrongly sent has arrived by now
      await webhooksSettled(other);
      const paths = hooks.received.map((entry) => JSON.parse(entry.body).data.fileName);
      expect(paths.sort()).to.deep.equal(['first.pdf', 'last.pdf']);
      expect(await deliveriesOf(account, onlySigned.id)).to.have.length(0);
      expect(await deliveriesOf(account, disabled.id)).to.have.length(0);
      expect(await deliveriesOf(account, wanted.id)).to.have.length(2);
    });

    it('retries a receiver that answers 500 three times, and logs every attempt', async () => {
      const account = await createTestAccount();
      const hooks = await receiver((n) => (n <= 3 ? { status: 500, body: `failure ${n}` } : { status: 204 }));
      const webhook = await subscribe(account, hooks.url);
      const document = await createDocument(account);
      await eventually(async () => expect(hooks.received).to.have.length(4), 20_000);
      expect(new Set(hooks.received.map((entry) => entry.headers['webhook-id'])).size).to.equal(1);
      expect(JSON.parse(hooks.received[3].body).data.documentId).to.equal(document.id);

      const [delivery] = await deliveriesOf(account, webhook.id);
      expect(delivery).to.include({ status: 'succeeded', attempts: 4, lastStatusCode: 204, nextRetryAt: null });
      const detail = await account.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`);
      expect(detail.status).to.equal(200);
      expect(detail.body.requestBody).to.equal(hooks.received[0].body);
      expect(detail.body.attemptLog.map((attempt: any) => [attempt.attempt, attempt.statusCode, attempt.responseBody])).to.deep.equal([
        [1, 500, 'failure 1'],
        [2, 500, 'failure 2'],
        [3, 500, 'failure 3'],
        [4, 204, ''],
      ]);
      // The schedule (scaled by WEBHOOK_RETRY_SCALE=0.001): immediately, 5 s, 5 min, 30 min → 0, 5 ms, 300 ms, 1.8 s.
      const gaps = hooks.received.slice(1).map((entry, i) => entry.at - hooks.received[i].at);
      expect(gaps[1]).to.be.greaterThan(250);
      expect(gaps[2]).to.be.greaterThan(1500);
    });

    it('logs a response body with NUL bytes and broken UTF-8 without stalling the queue or sending again', async () => {
      const account = await createTestAccount();
      const hostile = Buffer.concat([Buffer.from('bad\0body '), Buffer.from([0xff, 0xfe, 0x00])]);
      const hooks = await receiver((n) => (n === 1 ? { status: 500, body: hostile } : { status: 200, body: 'fine\0' }));
      const webhook = await subscribe(account, hooks.url);
      await createDocument(account);
      await eventually(async () => {
        const [delivery] = await deliveriesOf(account, webhook.id);
        expect(delivery).to.include({ status: 'succeeded', attempts: 2 });
      }, 20_000);
      expect(hooks.received).to.have.length(2);
      const [delivery] = await deliveriesOf(account, webhook.id);
      const detail = await account.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`);
      expect(detail.body.attemptLog.map((attempt: any) => attempt.responseBody)).to.deep.equal(['bad\uFFFDbody \uFFFD\uFFFD\uFFFD', 'fine\uFFFD']);
    });

    it('logs the first 1 KB of a response body that never ends, and closes the connection instead of reading on', async () => {
      const account = await createTestAccount();
      const endless = await startEndlessReceiver();
      try {
        const webhook = await subscribe(account, endless.url, { events: ['document.created'] });
        await createDocument(account);
        await eventually(async () => {
          const [delivery] = await deliveriesOf(account, webhook.id);
          expect(delivery).to.include({ status: 'succeeded', attempts: 1, lastStatusCode: 200 });
        }, 20_000);
        const [delivery] = await deliveriesOf(account, webhook.id);
        const detail = await account.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}`);
        expect(detail.body.attemptLog.map((attempt: any) => [attempt.statusCode, attempt.responseBody, attempt.error])).to.deep.equal([
          [200, endless.pattern.subarray(0, 1024).toString(), null],
        ]);
        await endless.closed;
        expect(endless.state.written).to.be.below(64 * 1024 * 1024);
      } finally {
        await endless.stop();
      }
    });

    it('retries a receiver that times out, and one that is down and comes back', async () => {
      const account = await createTestAccount();
      const slow = await receiver((n) => ({ status: 200, delayMs: n === 1 ? 3000 : 0 }));
      const down = await receiver();
      await down.stop();
      const slowHook = await subscribe(account, slow.url, { events: ['document.created'] });
      const downHook = await subscribe(account, down.url, { events: ['document.created'] });
      await createDocument(account);
      // The receiver comes back once a delivery to it has failed.
      await eventually(async () => expect((await deliveriesOf(account, downHook.id))[0]?.attempts).to.be.at.least(1));
      await down.start();

      await eventually(async () => {
        expect((await deliveriesOf(account, slowHook.id))[0]).to.include({ status: 'succeeded' });
        expect((await deliveriesOf(account, downHook.id))[0]).to.include({ status: 'succeeded' });
      }, 20_000);
      const slowLog = (await account.request('GET', `/api/v1/webhooks/${slowHook.id}/deliveries/${(await deliveriesOf(account, slowHook.id))[0].id}`)).body;
      expect(slowLog.attemptLog[0].statusCode).to.equal(null);
      expect(slowLog.attemptLog[0].error).to.match(/no complete response within 1 s/);
      expect(slowLog.attemptLog.at(-1).statusCode).to.equal(200);
      const downLog = (await account.request('GET', `/api/v1/webhooks/${downHook.id}/deliveries/${(await deliveriesOf(account, downHook.id))[0].id}`)).body;
      expect(downLog.attemptLog[0].error).to.match(/ECONNREFUSED/);
      expect(downLog.attemptLog.at(-1).statusCode).to.equal(200);
      expect(down.received).to.have.length(1);
    });

    it('treats a redirect as a failure and does not follow it', async () => {
      const account = await createTestAccount();
      const target = await receiver();
      const redirecting = await receiver((n) => (n === 1 ? { status: 307, headers: { Location: target.url } } : { status: 200 }));
      const webhook = await subscribe(account, redirecting.url);
      await createDocument(account);
      await eventually(async () => expect((await deliveriesOf(account, webhook.id))[0]).to.include({ status: 'succeeded', attempts: 2 }));
      expect(target.received).to.have.length(0);
    });

    it('honours Retry-After on 429', async () => {
      const account = await createTestAccount();
      const hooks = await receiver((n) => (n === 1 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200 }));
      const webhook = await subscribe(account, hooks.url);
      await createDocument(account);
      await eventually(async () => expect(hooks.received).to.have.length(2), 20_000);
      expect(hooks.received[1].at - hooks.received[0].at).to.be.at.least(1900);
      expect((await deliveriesOf(account, webhook.id))[0]).to.include({ status: 'succeeded', attempts: 2 });
    });

    it('410 disables the webhook and e-mails its owner', async () => {
      const account = await createTestAccount();
      const hooks = await receiver(() => ({ status: 410 }));
      const webhook = await subscribe(account, hooks.url);
      await createDocument(account);
      await eventually(async () => {
        const fetched = await account.request('GET', `/api/v1/webhooks/${webhook.id}`);
        expect(fetched.body).to.include({ enabled: false, disabledReason: 'gone' });
      });
      expect(hooks.received).to.have.length(1);
      await eventually(async () => {
        const mail = await account.db('mail_outbox').where({ to_address: account.account.email }).andWhere('subject', 'like', 'Webhook disabled%');
        expect(mail).to.have.length(1);
        expect(mail[0].text).to.contain(webhook.id);
      });
      await createDocument(account);
      await webhooksSettled(account);
      expect(hooks.received).to.have.length(1);

      const enabled = await account.request('PATCH', `/api/v1/webhooks/${webhook.id}`, { json: { enabled: true } });
      expect(enabled.body).to.include({ enabled: true, disabledReason: null });
    });

    it('disables a webhook that has failed for 5 days straight, once', async () => {
      const account = await createTestAccount();
      const hooks = await receiver(() => ({ status: 500 }));
      const webhook = await subscribe(account, hooks.url);
      await account
        .db('webhooks')
        .where({ id: webhook.id })
        .update({ failing_since: new Date(Date.now() - 5 * 24 * 3600e3 - 60_000) });
      await createDocument(account);
      await eventually(async () => {
        const fetched = await account.request('GET', `/api/v1/webhooks/${webhook.id}`);
        expect(fetched.body).to.include({ enabled: false, disabledReason: 'failing' });
      });
      await eventually(async () => expect((await deliveriesOf(account, webhook.id))[0].status).to.equal('cancelled'), 10_000);
      const mail = await account.db('mail_outbox').where({ to_address: account.account.email }).andWhere('subject', 'like', 'Webhook disabled%');
      expect(mail).to.have.length(1);
      expect(mail[0].text).to.contain('failed every delivery for 5 days');
    });

    it('shows when a webhook started failing, and a success ends the streak', async () => {
      const account = await createTestAccount();
      const hooks = await receiver((n) => (n === 1 ? { status: 503, headers: { 'Retry-After': '1' } } : { status: 200 }));
      const webhook = await subscribe(account, hooks.url);
      await createDocument(account);
      await eventually(async () => expect((await account.request('GET', `/api/v1/webhooks/${webhook.id}`)).body.failingSince).to.be.a('string'));
      await eventually(async () => expect(hooks.received).to.have.length(2));
      await eventually(async () => expect((await account.request('GET', `/api/v1/webhooks/${webhook.id}`)).body.failingSince).to.equal(null));
    });
  });

  describe('POST /api/v1/webhooks/{id}/rotate-secret', () => {
    it('signs with the new and the old secret for 24 hours', async () => {
      const account = await createTestAccount();
      const hooks = await receiver();
      const webhook = await subscribe(account, hooks.url);
      const rotated = await account.request('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`);
      expect(rotated.status).to.equal(200);
      expect(rotated.body.secret)
        .to.match(/^whsec_/)
        .and.not.equal(webhook.secret);
      await createDocument(account);
      await eventually(async () => expect(hooks.received).to.have.length(1));
      const [entry] = hooks.received;
      const signatures = String(entry.headers['x-service-signature']).split(',');
      expect(signatures).to.deep.equal([opensslHmac(rotated.body.secret, entry.body), opensslHmac(webhook.secret, entry.body)]);
      expect(verifyWebhook(webhook.secret, entry.body, entry.headers['x-service-signature'])).to.equal(true);
      expect(verifyWebhook(rotated.body.secret, entry.body, entry.headers['x-service-signature'])).to.equal(true);
      expect(verifyWebhook('whsec_wrong', entry.body, entry.headers['x-service-signature'])).to.equal(false);
      expect(String(entry.headers['webhook-signature']).split(' ')).to.have.length(2);
      expect(() => new StandardWebhook(webhook.secret).verify(entry.body, entry.headers as Record<string, string>)).not.to.throw();
      expect(() => new StandardWebhook(rotated.body.secret).verify(entry.body, entry.headers as Record<string, string>)).not.to.throw();

      // Once the grace period is over, only the new secret signs.
      await account
        .db('webhooks')
        .where({ id: webhook.id })
        .update({ previous_secret_expires_at: new Date(Date.now() - 1000) });
      await createDocument(account);
      await eventually(async () => expect(hooks.received).to.have.length(2));
      expect(hooks.received[1].headers['x-service-signature']).to.equal(opensslHmac(rotated.body.secret, hooks.received[1].body));
    });
  });

  describe('POST /api/v1/webhooks/{id}/test and redelivery', () => {
    it('pings the receiver and answers with the result', async () => {
      const account = await createTestAccount();
      const hooks = await receiver((n) => (n === 1 ? { status: 200, body: 'pong' } : { status: 500, body: 'broken' }));
      const webhook = await subscribe(account, hooks.url);
      const ok = await account.request('POST', `/api/v1/webhooks/${webhook.id}/test`);
      expect(ok.status).to.equal(200);
      expect(ok.body).to.include({ status: 'succeeded', eventType: 'webhook.test', attempts: 1, lastStatusCode: 200, lastResponseBody: 'pong' });
      expect(JSON.parse(hooks.received[0].body)).to.include({ type: 'webhook.test', id: ok.body.eventId });
      expect(hooks.received[0].headers['x-service-signature']).to.equal(opensslHmac(webhook.secret, hooks.received[0].body));

      const failed = await account.request('POST', `/api/v1/webhooks/${webhook.id}/test`);
      expect(failed.body).to.include({ status: 'failed', lastStatusCode: 500, lastResponseBody: 'broken' });
      expect(failed.body.attemptLog).to.have.length(1);
      expect(await deliveriesOf(account, webhook.id, '?eventType=webhook.test')).to.have.length(2);
    });

    it('redelivers with the same body and webhook-id, and filters and pages the log', async () => {
      const account = await createTestAccount();
      const hooks = await receiver((n) => (n === 2 ? { status: 500 } : { status: 200 }));
      const webhook = await subscribe(account, hooks.url, { events: ['document.created'] });
      for (let i = 0; i < 3; i++) await createDocument(account, `doc-${i}.pdf`);
      await eventually(async () => expect(await deliveriesOf(account, webhook.id, '?status=succeeded')).to.have.length(3), 20_000);

      const seen: string[] = [];
      let cursor = '';
      for (;;) {
        const page = await account.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.body.data.map((delivery: any) => delivery.id));
        if (!page.body.pagination.hasMore) break;
        cursor = page.body.pagination.nextCursor;
      }
      expect(seen).to.have.length(3);
      expect(new Set(seen).size).to.equal(3);

      const delivery = (await deliveriesOf(account, webhook.id))[0];
      const before = hooks.received.length;
      const redelivered = await account.request('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`);
      expect(redelivered.status).to.equal(200);
      expect(redelivered.body.attempts).to.equal(delivery.attempts + 1);
      const again = hooks.received[before];
      expect(again.headers['webhook-id']).to.equal(delivery.eventId);
      expect(again.body).to.equal(redelivered.body.requestBody);

      for (const query of ['?status=lost', '?eventType=document.exploded', '?limit=0', '?limit=101', '?cursor=whd_nope']) {
        const response = await account.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries${query}`);
        expect(response.status, query).to.equal(400);
        expect(response.body.error).to.equal('validation_error');
      }
      expect((await account.request('POST', `/api/v1/webhooks/${webhook.id}/deliveries/${newId('delivery')}/redeliver`)).status).to.equal(404);
    });
  });

  describe('SSRF at delivery', () => {
    it('never connects to a name that resolves to loopback unless that host is allow-listed', async () => {
      const account = await createTestAccount();
      const hooks = await receiver();
      const webhook = await subscribe(account, hooks.url, { events: ['document.created'] });
      // As if its DNS had pointed elsewhere at creation: the check that counts is at connection time.
      await account
        .db('webhooks')
        .where({ id: webhook.id })
        .update({ url: `http://localhost:${hooks.port}/hooks` });
      await createDocument(account);
      await eventually(async () => {
        const [delivery] = await deliveriesOf(account, webhook.id);
        expect(delivery.lastError).to.match(/^blocked: the address is not public/);
      });
      expect(hooks.received).to.have.length(0);
    });
  });

  describe('the webhook body', () => {
    it('makes one delivery per event for a PDF-bearing create, and none of the bytes', async () => {
      const account = await createTestAccount();
      const hooks = await receiver();
      await subscribe(account, hooks.url);
      const pdf = await makePdf(['secret contents']);
      const created = await uploadDocument(account.request, { fileName: 'with-pdf.pdf', pdf });
      await eventually(async () => expect(hooks.received).to.have.length(1));
      expect(hooks.received[0].body).not.to.contain(pdf.toString('base64').slice(0, 40));
      expect(JSON.parse(hooks.received[0].body).data).to.include({ documentId: created.id, fileName: 'with-pdf.pdf', status: 'ready' });
    });
  });
});
