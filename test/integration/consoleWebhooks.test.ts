import { expect } from 'chai';
import { setAccountPlan } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { newId } from '../../src/ids';
import { decryptSecret } from '../../src/webhooks/secrets';
import { consoleClient, signedUp, type ConsoleClient } from '../support/consoleClient';
import { client } from '../support/http';
import { startReceiver, type Receiver } from '../support/receiver';
import { sharedSystem } from '../support/system';

describe('the console’s webhooks (/app/webhooks)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof sharedSystem>>;
  let baseUrl: string;
  const receivers: Receiver[] = [];

  before(async () => {
    system = await sharedSystem();
    baseUrl = system.url!;
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.stop()));
  });

  const db = () => system.database.knex;
  const accountOf = async (email: string) => (await db()('users').where({ email }).first()).account_id as string;

  /** A person signed up through the console whose account is then moved to the Business plan by the operator. */
  async function businessOwner() {
    const { browser, email } = await signedUp(baseUrl);
    const accountId = await accountOf(email);
    await setAccountPlan(db(), accountId, 'business');
    return { browser, email, accountId };
  }

  async function receiver() {
    const started = await startReceiver(() => ({ status: 200, body: 'thanks from the receiver' }));
    receivers.push(started);
    return started;
  }

  /** Creates a webhook through the form; answers the page and the new webhook's id. */
  async function created(browser: ConsoleClient, url: string, events: string[] = ['signing_request.completed']) {
    const response = await browser.submit('/app/webhooks/new', '/app/webhooks', { url, events, description: 'CRM' });
    expect(response.status, response.text).to.equal(201);
    const id = /action="\/app\/webhooks\/(wh_[0-9a-z]{26})"/.exec(response.text)![1];
    return { response, id, secret: /id="new-secret" class="mono" readonly value="([^"]+)"/.exec(response.text)?.[1] };
  }

  describe('on a plan without webhooks', () => {
    it('explains the Business plan with no form, and refuses a POST with the REST API’s 403 message', async () => {
      const { browser, email } = await signedUp(baseUrl);
      const page = await browser.request('GET', '/app/webhooks');
      expect(page.status).to.equal(200);
      expect(page.text).to.contain('Webhooks need the Business plan; this account is on the free plan.');
      expect(page.text).not.to.match(/<form[^>]+action="\/app\/webhooks/);
      expect((await browser.request('GET', '/app/webhooks/new')).status).to.equal(403);

      const refused = await browser.request('POST', '/app/webhooks', { form: { _csrf: browser.csrf, url: 'https://example.com/hook', events: ['*'] } });
      expect(refused.status).to.equal(403);
      const { secret } = await createApiKey(db(), await accountOf(email));
      const rest = await client(baseUrl, secret)('POST', '/api/v1/webhooks', { json: { url: 'https://example.com/hook', events: ['*'] } });
      expect(rest.status).to.equal(403);
      expect(rest.body.error).to.equal('plan_upgrade_required');
      expect(refused.text).to.contain(rest.body.message);
      expect(await db()('webhooks').where({ account_id: await accountOf(email) })).to.have.length(0);
    });
  });

  describe('POST /app/webhooks', () => {
    it('without the CSRF token is 403 and creates nothing', async () => {
      const { browser, accountId } = await businessOwner();
      await browser.request('GET', '/app/webhooks/new');
      const response = await browser.request('POST', '/app/webhooks', { form: { url: 'https://example.com/hook', events: ['*'] } });
      expect(response.status).to.equal(403);
      expect(await db()('webhooks').where({ account_id: accountId })).to.have.length(0);
    });

    it('re-renders the form with each problem and 400 for a bad URL, no event, or a loopback address', async () => {
      const { browser, accountId } = await businessOwner();
      const bad = await browser.submit('/app/webhooks/new', '/app/webhooks', { url: 'ftp://example.com/x', description: 'kept' });
      expect(bad.status).to.equal(400);
      expect(bad.text).to.contain('role="alert"').and.contain('url must be an absolute https:// URL').and.contain('events');
      expect(bad.text).to.contain('value="kept"');
      const unknown = await browser.submit('/app/webhooks/new', '/app/webhooks', { url: 'https://example.com/x', events: ['nothing.happened'] });
      expect(unknown.status).to.equal(400);
      expect(unknown.text).to.contain('unknown event type(s): nothing.happened');
      const loopback = await browser.submit('/app/webhooks/new', '/app/webhooks', { url: 'https://127.0.0.2/x', events: ['*'] });
      expect(loopback.status).to.equal(400);
      expect(await db()('webhooks').where({ account_id: accountId })).to.have.length(0);
    });

    it('shows the secret once, stores it encrypted, and never shows it again', async () => {
      const { browser, accountId } = await businessOwner();
      const { id, secret } = await created(browser, 'https://example.com/hooks/signet', ['document.created', 'signer.signed']);
      expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const row = await db()('webhooks').where({ id }).first();
      expect(row).to.include({ account_id: accountId, url: 'https://example.com/hooks/signet', description: 'CRM', enabled: true });
      expect(row.events).to.deep.equal(['document.created', 'signer.signed']);
      expect(row.secret_ciphertext).not.to.contain(secret!.slice(6));
      expect(decryptSecret(system.webhooks.secretKey, row.secret_ciphertext)).to.equal(secret);

      const list = await browser.request('GET', '/app/webhooks');
      expect(list.status).to.equal(200);
      expect(list.text).to.contain('https://example.com/hooks/signet').and.contain('document.created, signer.signed');
      const detail = await browser.request('GET', `/app/webhooks/${id}`);
      expect(detail.status).to.equal(200);
      expect(detail.text).to.contain('Enabled').and.not.contain(secret!);
      expect(list.text).not.to.contain(secret!);
    });
  });

  describe('a webhook’s page', () => {
    it('sends a test ping to a loopback receiver, shows the delivery, and redelivers it', async () => {
      const { browser } = await businessOwner();
      const hooks = await receiver();
      const { id } = await created(browser, hooks.url);
      const ping = await browser.submit(`/app/webhooks/${id}`, `/app/webhooks/${id}/test`, {});
      expect(ping.status).to.equal(303);
      expect(ping.location).to.match(new RegExp(`^/app/webhooks/${id}/deliveries/whd_[0-9a-z]{26}$`));
      expect(hooks.received).to.have.length(1);
      expect(JSON.parse(hooks.received[0].body).type).to.equal('webhook.test');

      const delivery = await browser.request('GET', ping.location!);
      expect(delivery.status).to.equal(200);
      expect(delivery.text).to.contain('webhook.test').and.contain('answered <strong>200</strong>').and.contain('thanks from the receiver');
      const log = await browser.request('GET', `/app/webhooks/${id}`);
      expect(log.text).to.contain(`/app/webhooks/${id}/deliveries/`).and.contain('succeeded');

      const again = await browser.submit(ping.location!, `${ping.location}/redeliver`, {});
      expect(again.status).to.equal(303);
      expect(hooks.received).to.have.length(2);
      expect(hooks.received[1].headers['webhook-id']).to.equal(hooks.received[0].headers['webhook-id']);
      expect((await browser.request('GET', ping.location!)).text.match(/answered <strong>200<\/strong>/g)).to.have.length(2);
    });

    it('edits the events, refuses an empty choice with 400, disables and enables, rotates the secret, deletes', async () => {
      const { browser } = await businessOwner();
      const { id, secret } = await created(browser, 'https://example.com/edit-me');
      const edited = await browser.submit(`/app/webhooks/${id}`, `/app/webhooks/${id}`, { url: 'https://example.com/edited', events: ['*'], description: '' });
      expect(edited.status, edited.text).to.equal(303);
      expect(await db()('webhooks').where({ id }).first()).to.deep.include({ url: 'https://example.com/edited', events: ['*'], description: null });

      const empty = await browser.submit(`/app/webhooks/${id}`, `/app/webhooks/${id}`, { url: 'https://example.com/edited' });
      expect(empty.status).to.equal(400);
      expect(empty.text).to.contain('role="alert"').and.contain('events');

      expect((await browser.submit(`/app/webhooks/${id}`, `/app/webhooks/${id}/enabled`, { enabled: 'false' })).status).to.equal(303);
      expect((await db()('webhooks').where({ id }).first()).enabled).to.equal(false);
      expect((await browser.request('GET', `/app/webhooks/${id}`)).text)
        .to.contain('Disabled')
        .and.contain('>Enable<');
      await browser.submit(`/app/webhooks/${id}`, `/app/webhooks/${id}/enabled`, { enabled: 'true' });
      expect((await db()('webhooks').where({ id }).first()).enabled).to.equal(true);

      const before = (await db()('webhooks').where({ id }).first()).secret_ciphertext;
      const rotated = await browser.submit(`/app/webhooks/${id}`, `/app/webhooks/${id}/rotate-secret`, {});
      expect(rotated.status).to.equal(200);
      const newSecret = /id="new-secret" class="mono" readonly value="([^"]+)"/.exec(rotated.text)![1];
      expect(newSecret)
        .to.match(/^whsec_/)
        .and.not.equal(secret);
      const row = await db()('webhooks').where({ id }).first();
      expect(decryptSecret(system.webhooks.secretKey, row.secret_ciphertext)).to.equal(newSecret);
      expect(row.previous_secret_ciphertext).to.equal(before);
      expect((await browser.request('GET', `/app/webhooks/${id}`)).text).not.to.contain(newSecret);

      const deleted = await browser.submit(`/app/webhooks/${id}`, `/app/webhooks/${id}/delete`, {});
      expect(deleted.status).to.equal(303);
      expect(deleted.location).to.equal('/app/webhooks');
      expect(await db()('webhooks').where({ id }).first()).to.equal(undefined);
      expect((await browser.request('GET', `/app/webhooks/${id}`)).status).to.equal(404);
    });

    it('the list shows each webhook’s waiting deliveries (queued or to retry; a ping in flight is not waiting)', async () => {
      const { browser } = await businessOwner();
      const hooks = await receiver();
      const busy = await created(browser, `${hooks.url}?busy`);
      const idle = await created(browser, `${hooks.url}?idle`);
      const later = new Date(Date.now() + 3600e3);
      const delivery = (webhookId: string, n: number, nextRetryAt: Date | null) => ({
        id: newId('delivery'),
        webhook_id: webhookId,
        event_id: `evt_console_backlog_${webhookId}_${n}`,
        event_type: 'signing_request.completed',
        body: '{}',
        next_retry_at: nextRetryAt,
      });
      await db()('webhook_deliveries').insert([
        delivery(busy.id, 1, later),
        delivery(busy.id, 2, later),
        delivery(busy.id, 3, later),
        delivery(idle.id, 4, null),
      ]);
      const page = await browser.request('GET', '/app/webhooks');
      expect(page.status).to.equal(200);
      const waiting = (id: string) => new RegExp(`href="/app/webhooks/${id}"[\\s\\S]*?data-label="Waiting">(\\d+)<`).exec(page.text)?.[1];
      expect(waiting(busy.id)).to.equal('3');
      expect(waiting(idle.id)).to.equal('0');
    });

    it('another account’s webhook and deliveries are 404, and nothing of it changes', async () => {
      const owner = await businessOwner();
      const hooks = await receiver();
      const { id } = await created(owner.browser, hooks.url);
      const ping = await owner.browser.submit(`/app/webhooks/${id}`, `/app/webhooks/${id}/test`, {});
      const other = await businessOwner();
      expect((await other.browser.request('GET', `/app/webhooks/${id}`)).status).to.equal(404);
      expect((await other.browser.request('GET', ping.location!)).status).to.equal(404);
      for (const action of ['', '/test', '/rotate-secret', '/delete', '/enabled']) {
        const response = await other.browser.submit('/app/webhooks', `/app/webhooks/${id}${action}`, {
          url: 'https://example.com/stolen',
          events: ['*'],
          enabled: 'false',
        });
        expect(response.status, action).to.equal(404);
      }
      expect((await other.browser.submit('/app/webhooks', `${ping.location}/redeliver`, {})).status).to.equal(404);
      expect(hooks.received).to.have.length(1);
      expect(await db()('webhooks').where({ id }).first()).to.include({ url: hooks.url, enabled: true });
      expect((await other.browser.request('GET', '/app/webhooks/not-an-id')).status).to.equal(404);
    });

    it('needs a session: logged out, every page sends to the login', async () => {
      const response = await consoleClient(baseUrl).request('GET', '/app/webhooks');
      expect(response.status).to.equal(302);
      expect(response.location).to.equal('/app/login');
    });
  });
});
