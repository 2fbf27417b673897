import { expect } from 'chai';
import { setAccountPlan } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { consoleClient, signedUp as signedUpInConsole, type ConsoleClient } from '../support/consoleClient';
import { client, type Request } from '../support/http';
import { eventually } from '../support/signing';
import { sharedSystem } from '../support/system';
import { renewalTemplate } from '../support/templates';

const HEADER = 'tenant.name,tenant.email,prefill.Rent,title,message,expiresInDays,externalId';
const csvOf = (...lines: string[]) => new Blob([`${lines.join('\r\n')}\r\n`], { type: 'text/csv' });
const tenants = (count: number) => Array.from({ length: count }, (_, index) => `Tenant ${index},tenant${index}@example.com,${1000 + index},,,,unit-${index}`);

describe('the console’s bulk sends (/app/bulk-sends)', function () {
  this.timeout(120_000);
  let baseUrl: string;
  let db: Awaited<ReturnType<typeof sharedSystem>>['database']['knex'];

  before(async () => {
    const system = await sharedSystem();
    baseUrl = system.url!;
    db = system.database.knex;
  });

  /** A fresh account logged in to the console (Business, unless asked), with a template of one tenant who signs, and a Rent to prefill. */
  async function signedUp(plan: 'free' | 'business' = 'business') {
    const { browser, email } = await signedUpInConsole(baseUrl, {}, 'Lettings Ltd');
    const { account_id: accountId } = await db('users').where({ email }).first('account_id');
    await setAccountPlan(db, accountId, plan);
    const api: Request = client(baseUrl, (await createApiKey(db, accountId)).secret);
    return { browser, accountId, templateId: await renewalTemplate(api) };
  }

  /** The upload form's page: its CSRF token (kept by the client) and its send key. */
  async function openForm(browser: ConsoleClient, templateId: string) {
    const form = await browser.request('GET', `/app/bulk-sends/new?templateId=${templateId}`);
    expect(form.status, form.text).to.equal(200);
    return /name="sendKey" value="(bulk_[0-9a-z]{26})"/.exec(form.text)![1];
  }

  /** The form posted as bulkSends.js posts it: multipart, with the token in X-CSRF-Token, asking for JSON. */
  function upload(browser: ConsoleClient, fields: Record<string, string>, csv: Blob) {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    body.append('file', csv, 'rows.csv');
    return browser.request('POST', '/app/bulk-sends', { body, headers: { Accept: 'application/json', 'X-CSRF-Token': browser.csrf } });
  }

  const jobsOf = (accountId: string) => db('bulk_sends').where({ account_id: accountId });

  describe('GET /app/bulk-sends and /app/bulk-sends/new', () => {
    it('sends a visitor without a session to the login page', async () => {
      for (const path of ['/app/bulk-sends', '/app/bulk-sends/new', `/app/bulk-sends/bulk_${'0'.repeat(26)}`]) {
        const response = await consoleClient(baseUrl).request('GET', path);
        expect(response.status, path).to.equal(302);
        expect(response.location).to.equal('/app/login');
      }
    });

    it('lists nothing yet and offers the templates; the form shows the chosen template’s CSV header and a sample that passes the check', async () => {
      const { browser, templateId } = await signedUp();
      const list = await browser.request('GET', '/app/bulk-sends');
      expect(list.status).to.equal(200);
      expect(list.text)
        .to.contain('No bulk sends yet.')
        .and.contain(`<option value="${templateId}">Renewal</option>`)
        .and.contain('aria-current="page">Bulk sends');

      await openForm(browser, templateId);
      const form = await browser.request('GET', `/app/bulk-sends/new?templateId=${templateId}`);
      expect(form.text).to.contain(`<code class="wrap" id="csv-header">${HEADER}</code>`).and.contain('/app/assets/bulkSends.js');
      expect(form.text).to.contain(`href="/app/bulk-sends/sample.csv?templateId=${templateId}"`);

      const sample = await browser.request('GET', `/app/bulk-sends/sample.csv?templateId=${templateId}`);
      expect(sample.status).to.equal(200);
      expect(sample.headers.get('content-type')).to.match(/^text\/csv/);
      expect(sample.headers.get('content-disposition')).to.equal("attachment; filename*=UTF-8''Renewal.csv");
      expect(sample.text).to.equal(`${HEADER}\r\nExample tenant,person1@example.com,,,,,row-1\r\n`);
      const checked = await upload(browser, { templateId, dryRun: 'true' }, new Blob([new Uint8Array(sample.bytes)], { type: 'text/csv' }));
      expect(checked.status, checked.text).to.equal(200);
      expect(checked.json).to.include({ rowCount: 1, requests: 1, invitations: 1 });
    });

    it('another account’s template is 404 on the form and the sample', async () => {
      const { templateId } = await signedUp();
      const { browser } = await signedUp();
      expect((await browser.request('GET', `/app/bulk-sends/new?templateId=${templateId}`)).status).to.equal(404);
      expect((await browser.request('GET', `/app/bulk-sends/sample.csv?templateId=${templateId}`)).status).to.equal(404);
    });
  });

  describe('POST /app/bulk-sends (Check and Send)', () => {
    it('Check lists every problem by row and column and makes nothing; a good check answers the rows, requests and invitations', async () => {
      const { browser, accountId, templateId } = await signedUp();
      await openForm(browser, templateId);
      const refused = await upload(
        browser,
        { templateId, dryRun: 'true' },
        csvOf(
          'tenant.name,tenant.email,prefill.Rent',
          'Ada,ada@example,1200',
          'Grace,grace@example.com,lots',
          ',alan@example.com,1300',
          'Lin,lin@example.com,1400',
        ),
      );
      expect(refused.status).to.equal(400);
      expect(refused.json.details).to.deep.equal([
        'row 1, column tenant.email: must be a valid e-mail address',
        'row 2, column prefill.Rent: must be a number, written like 1234.5',
        'row 3, column tenant.name: is required',
      ]);
      expect(await jobsOf(accountId)).to.have.length(0);

      const checked = await upload(browser, { templateId, dryRun: 'true' }, csvOf(HEADER, ...tenants(3)));
      expect(checked.status, checked.text).to.equal(200);
      expect(checked.json).to.deep.equal({ dryRun: true, templateId, rowCount: 3, requests: 3, invitations: 3 });
      expect(await jobsOf(accountId)).to.have.length(0);
      expect(await db('signing_requests').where({ account_id: accountId })).to.have.length(0);
    });

    it('Check answers the plan’s quota (403) when the rows need more documents than the month leaves', async () => {
      const { browser, accountId, templateId } = await signedUp('free');
      await openForm(browser, templateId);
      const refused = await upload(browser, { templateId, dryRun: 'true' }, csvOf(HEADER, ...tenants(6)));
      expect(refused.status).to.equal(403);
      expect(refused.json.error).to.equal('quota_exceeded');
      expect(refused.json.message).to.match(/^These 6 rows would make 6 documents; the free plan allows 5 a month and \d are left until /);
      expect(await jobsOf(accountId)).to.have.length(0);
    });

    it('Send makes one job whatever is clicked twice: the same key and file are the same job, another file from the page is another', async () => {
      const { browser, accountId, templateId } = await signedUp();
      const sendKey = await openForm(browser, templateId);
      const csv = csvOf(HEADER, ...tenants(3));
      const [first, second] = await Promise.all([upload(browser, { templateId, sendKey }, csv), upload(browser, { templateId, sendKey }, csv)]);
      expect(first.status, first.text).to.equal(201);
      expect(second.status, second.text).to.equal(201);
      expect(second.json.id)
        .to.equal(first.json.id)
        .and.match(/^bulk_[0-9a-z]{26}$/);
      const again = await upload(browser, { templateId, sendKey }, csv);
      expect(again.json.id).to.equal(first.json.id);
      expect(await jobsOf(accountId)).to.have.length(1);

      const other = await upload(browser, { templateId, sendKey }, csvOf(HEADER, ...tenants(1)));
      expect(other.status, other.text).to.equal(201);
      expect(other.json.id).not.to.equal(first.json.id);
      expect(await jobsOf(accountId)).to.have.length(2);

      const withoutKey = await upload(browser, { templateId }, csv);
      expect(withoutKey.status).to.equal(400);
      expect(withoutKey.json.details).to.deep.equal(['sendKey is required']);
      const wrongKey = await upload(browser, { templateId, sendKey: 'tpl_01' }, csv);
      expect(wrongKey.json.details).to.deep.equal(['sendKey must be the send form’s: reload the page and try again']);
    });

    it('without the CSRF token is 403 and makes nothing', async () => {
      const { browser, accountId, templateId } = await signedUp();
      const sendKey = await openForm(browser, templateId);
      const body = new FormData();
      for (const [name, value] of Object.entries({ templateId, sendKey })) body.append(name, value);
      body.append('file', csvOf(HEADER, ...tenants(1)), 'rows.csv');
      const response = await browser.request('POST', '/app/bulk-sends', { body, headers: { Accept: 'application/json' } });
      expect(response.status).to.equal(403);
      expect(await jobsOf(accountId)).to.have.length(0);
    });
  });

  describe('GET /app/bulk-sends/:id', () => {
    it('shows the progress, the counts and the rows linked to their requests; the list shows the job; the rows filter by status and page', async () => {
      const { browser, templateId } = await signedUp();
      const sendKey = await openForm(browser, templateId);
      const sent = await upload(browser, { templateId, sendKey }, csvOf(HEADER, ...tenants(55)));
      expect(sent.status, sent.text).to.equal(201);
      const id = sent.json.id as string;

      const progress = await eventually(async () => {
        const answer = await browser.request('GET', `/app/bulk-sends/${id}/progress`, { headers: { Accept: 'application/json' } });
        expect(answer.json.finishedAt).to.be.a('string');
        return answer.json;
      }, 90_000);
      expect(progress).to.include({ id, templateId, status: 'sent', rowCount: 55 });

      const page = await browser.request('GET', `/app/bulk-sends/${id}`);
      expect(page.status).to.equal(200);
      expect(page.text).to.contain('<h1>Bulk send of “Renewal”</h1>');
      expect(page.text)
        .to.contain('<progress id="bulk-progress" max="55" value="55">55 of 55</progress>')
        .and.contain('<label for="bulk-progress">Rows done</label>');
      expect(page.text)
        .to.contain(`<td data-count="rows.sent">${progress.rows.sent}</td>`)
        .and.contain(`<td data-count="requests.pending">${progress.requests.pending}</td>`);
      const requestId = (await db('signing_requests').where({ bulk_send_id: id, bulk_row: 0 }).first('id')).id;
      expect(page.text).to.contain(`<a href="/app/requests/${requestId}">Request<span class="visually-hidden"> of row 1</span></a>`);
      expect(page.text)
        .to.contain('unit-0')
        .and.contain('href="/app/bulk-sends/' + id + '?cursor=49">Next rows</a>');
      expect(page.text, 'no cancel once finished').not.to.contain('Cancel the bulk send');

      const next = await browser.request('GET', `/app/bulk-sends/${id}?cursor=49`);
      expect(next.text).to.contain('<td data-label="Row">51</td>').and.not.contain('<td data-label="Row">50</td>');
      expect(progress.rows).to.deep.equal({ queued: 0, sent: 55, failed: 0, cancelled: 0 });
      const cancelled = await browser.request('GET', `/app/bulk-sends/${id}?status=cancelled`);
      expect(cancelled.text).to.contain('No row is cancelled.').and.contain('<option value="cancelled" selected>cancelled</option>');
      const sentRows = await browser.request('GET', `/app/bulk-sends/${id}?status=sent&cursor=49`);
      expect(sentRows.text).to.contain('unit-54').and.not.contain('unit-49<');

      const list = await browser.request('GET', '/app/bulk-sends');
      expect(list.text).to.contain(`href="/app/bulk-sends/${id}"`).and.contain('<td data-label="Rows">55</td>').and.contain('<td data-label="Sent">55</td>');
    });

    it('Cancel stops the rows not yet sent and, when ticked, cancels the requests sent', async () => {
      const { browser, templateId } = await signedUp();
      const sendKey = await openForm(browser, templateId);
      const sent = await upload(browser, { templateId, sendKey }, csvOf(HEADER, ...tenants(200)));
      expect(sent.status, sent.text).to.equal(201);
      const id = sent.json.id as string;
      const page = await browser.request('GET', `/app/bulk-sends/${id}`);
      expect(page.text).to.contain(`action="/app/bulk-sends/${id}/cancel"`).and.contain('name="cancelSent" value="true"');

      const cancelled = await browser.post(`/app/bulk-sends/${id}/cancel`, { cancelSent: 'true' });
      expect(cancelled.status, cancelled.text).to.equal(303);
      expect(cancelled.location).to.equal(`/app/bulk-sends/${id}`);
      const done = await eventually(async () => {
        const answer = (await browser.request('GET', `/app/bulk-sends/${id}/progress`, { headers: { Accept: 'application/json' } })).json;
        expect(answer.finishedAt).to.be.a('string');
        expect(answer.requests.pending).to.equal(0);
        return answer;
      }, 90_000);
      expect(done.status).to.equal('cancelled');
      expect(done.rows.cancelled).to.be.greaterThan(0);
      const after = await browser.request('GET', `/app/bulk-sends/${id}`);
      expect(after.text).to.contain('<span class="badge badge-cancelled">cancelled</span>').and.not.contain('Cancel the bulk send');
    });

    it('another account’s job is 404, its page, progress and cancel alike', async () => {
      const { browser, templateId } = await signedUp();
      const sendKey = await openForm(browser, templateId);
      const sent = await upload(browser, { templateId, sendKey }, csvOf(HEADER, ...tenants(1)));
      const id = sent.json.id as string;
      const { browser: stranger } = await signedUp();
      await stranger.request('GET', '/app/bulk-sends');
      expect((await stranger.request('GET', `/app/bulk-sends/${id}`)).status).to.equal(404);
      expect((await stranger.request('GET', `/app/bulk-sends/${id}/progress`, { headers: { Accept: 'application/json' } })).status).to.equal(404);
      expect((await stranger.post(`/app/bulk-sends/${id}/cancel`, { cancelSent: 'true' })).status).to.equal(404);
      expect((await stranger.request('GET', '/app/bulk-sends/not-an-id')).status).to.equal(404);
      expect((await stranger.request('GET', '/app/bulk-sends')).text).to.contain('No bulk sends yet.');
    });
  });
});
