import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { getOutboxMessage, listOutboxMessages } from '../../src/mail/outbox';
import { confirmEmail, consoleScreenshots, expectNoSideways, phoneContext, shot, useChromium, watchPage } from '../support/browser';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { eventually } from '../support/signing';
import { sharedSystem } from '../support/system';

describe('the console end to end (sign up → API key → upload → send → both sign → sealed PDF, in headless Chromium on a phone)', function () {
  this.timeout(180_000);
  const browser = useChromium();
  let context: BrowserContext;
  let system: Awaited<ReturnType<typeof sharedSystem>>;
  let baseUrl: string;
  let problems: string[];
  let downloads: string;

  before(async () => {
    downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-e2e-'));
    system = await sharedSystem();
    baseUrl = system.url!;
  });

  after(async () => {
    fs.rmSync(downloads, { recursive: true, force: true });
  });

  beforeEach(async () => {
    context = await phoneContext(browser(), { acceptDownloads: true });
    problems = [];
  });

  afterEach(async () => {
    await context.close();
    expect(problems, 'console errors and CSP violations').to.deep.equal([]);
  });

  async function openPage(url: string): Promise<Page> {
    // A blob: URL is made by the page itself: nothing from outside the machine.
    const page = watchPage(await context.newPage(), baseUrl, problems, { alsoAllowed: ['blob:'] });
    await page.goto(url);
    return page;
  }

  const screenshot = (page: Page, name: string) => shot(page, consoleScreenshots, `e2e-${name}`);

  /** The signing link of the newest invitation to this address, from the outbox (what SendGrid would have sent). */
  const signingLinkFor = (email: string) =>
    eventually(async () => {
      const summary = (await listOutboxMessages(system.database.knex)).find((message) => message.to.includes(email));
      expect(summary, `an e-mail to ${email}`).not.to.equal(undefined);
      const message = await getOutboxMessage(system.database.knex, summary!.id);
      const link = new RegExp(`${baseUrl}/sign/[A-Za-z0-9._~-]+`).exec(message!.text)?.[0];
      expect(link, message!.text).to.be.a('string');
      return link!;
    }, 30_000);

  it('an owner sends a PDF to two signers from the console; both sign; the console shows it completed and gives the sealed PDF', async () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const owner = `e2e-${tag}@example.com`;
    const signers = [
      { name: 'Ada Lovelace', email: `ada-${tag}@example.com` },
      { name: 'Alan Turing', email: `alan-${tag}@example.com` },
    ];

    // Sign up.
    const page = await openPage(`${baseUrl}/app/signup`);
    await page.getByLabel('Account name').fill('Difference Engines');
    await page.getByLabel('E-mail').fill(owner);
    await page.getByLabel('Password').fill('analytical engine 1843');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('heading', { name: 'Difference Engines' }).waitFor();
    await screenshot(page, 'dashboard');

    // Confirm the address with the link e-mailed at sign-up: until then the account only reads.
    await confirmEmail(page, baseUrl, owner);

    // An API key, read from the page, works on the REST API.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('e2e');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByLabel('New API key').inputValue();
    expect(key).to.match(/^sk_live_/);
    await expectNoSideways(page);
    await screenshot(page, 'api-key');
    const api = client(baseUrl, key);
    const listed = await api('GET', '/api/v1/documents');
    expect(listed.status).to.equal(200);
    expect(listed.body.data).to.deep.equal([]);

    // Upload a PDF with the file picker.
    await page.getByRole('link', { name: 'Documents' }).click();
    await page
      .locator('#file')
      .setInputFiles({ name: 'engine-contract.pdf', mimeType: 'application/pdf', buffer: await makePdf(['Contract for one engine', 'Page two']) });
    await page.locator('td[data-label="Name"]', { hasText: 'engine-contract.pdf' }).waitFor();
    await screenshot(page, 'documents');
    expect((await api('GET', '/api/v1/documents')).body.data.map((document: { fileName: string }) => document.fileName)).to.deep.equal(['engine-contract.pdf']);

    // The list is empty; send the document to two signers.
    await page.getByRole('link', { name: 'Requests', exact: true }).click();
    await page.getByText('No signing requests yet.').waitFor();
    await expectNoSideways(page);
    await screenshot(page, 'requests-empty');
    await page.getByRole('link', { name: 'Send a document' }).click();
    await page.getByLabel('Document').selectOption({ label: 'engine-contract.pdf' });
    await page.getByLabel('Title').fill(`Engine contract ${tag}`);
    await page.getByLabel('Message').fill('Please sign by Friday.');
    // Rows: three to begin with; add one, then remove two, leaving two.
    const rows = page.locator('.signer-row');
    expect(await rows.count()).to.equal(3);
    await page.getByRole('button', { name: 'Add a signer' }).click();
    expect(await rows.count()).to.equal(4);
    await page.getByRole('button', { name: 'Remove signer 4' }).click();
    await page.getByRole('button', { name: 'Remove signer 3' }).click();
    expect(await rows.count()).to.equal(2);
    for (const [index, signer] of signers.entries()) {
      await rows.nth(index).getByLabel('Name').fill(signer.name);
      await rows.nth(index).getByLabel('E-mail').fill(signer.email);
    }
    await page.getByLabel('Everyone at once').check();
    await page.getByLabel('Expires after (days)').fill('14');
    await expectNoSideways(page);
    await screenshot(page, 'send-form');
    await page.getByRole('button', { name: 'Send', exact: true }).click();

    await page.getByRole('heading', { name: `Engine contract ${tag}` }).waitFor();
    const requestId = /\/app\/requests\/(sr_[0-9a-z]{26})$/.exec(page.url())?.[1];
    expect(requestId, page.url()).to.be.a('string');
    expect(await page.locator('#request-status').textContent()).to.equal('pending');
    await expectNoSideways(page);
    await screenshot(page, 'request-pending');

    // Both sign through the links they were e-mailed.
    for (const signer of signers) {
      const signing = await openPage(await signingLinkFor(signer.email));
      await signing.getByRole('heading', { name: `Engine contract ${tag}` }).waitFor();
      await signing.getByLabel('Type').check();
      await signing.getByLabel('Your full name').fill(signer.name);
      await signing.getByLabel('I agree to sign this document electronically').check();
      await signing.getByRole('button', { name: 'Sign', exact: true }).click();
      await signing.locator('#outcome').getByRole('heading', { name: 'You have signed' }).waitFor();
      await signing.close();
    }

    // The console's detail shows it completed (sealing runs in the worker: reload until it has).
    await eventually(async () => {
      await page.reload();
      expect(await page.locator('#request-status').textContent()).to.equal('completed');
    }, 60_000);
    expect(await page.locator('#stage').getAttribute('data-stage')).to.equal('finished');
    for (const signer of signers) {
      const row = page.locator('#signer-timeline tr', { hasText: signer.name });
      expect(await row.locator('td[data-label="Status"]').textContent()).to.equal('signed');
      expect(await row.locator('td[data-label="Signed"] time').count()).to.equal(1);
    }
    expect(await page.locator('#audit-trail li', { hasText: 'signed' }).count()).to.be.at.least(2);
    await expectNoSideways(page);
    await screenshot(page, 'request-completed');

    // The sealed PDF downloads and carries a valid signature.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download sealed PDF' }).click()]);
    expect(download.suggestedFilename()).to.match(/^engine-contract.*\.pdf$/);
    const file = path.join(downloads, 'sealed.pdf');
    await download.saveAs(file);
    expect(fs.readFileSync(file).subarray(0, 5).toString()).to.equal('%PDF-');
    const report = spawnSync('pdfsig', [file], { encoding: 'utf8' });
    const output = `${report.stdout}${report.stderr}`;
    expect(output).to.include('Signature Validation: Signature is Valid.');
    expect(output).to.include('Total document signed');

    // The list: the status filter (from PostgreSQL), then live search as you type (no submit; the index
    // catches up from events, so the search is typed again until it has).
    await page.getByRole('link', { name: 'Requests', exact: true }).click();
    const ours = page.locator(`#request-results a[href="/app/requests/${requestId}"]`);
    await ours.waitFor();
    await page.getByLabel('Status').selectOption('pending');
    await page.locator('#request-results').getByText('No signing request matches.').waitFor();
    await page.getByLabel('Status').selectOption('completed');
    await ours.waitFor();
    expect(await page.locator('#request-count').textContent()).to.equal('1 request');
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Search').fill('nothing like this');
    await page.locator('#request-results').getByText('No signing request matches.').waitFor();
    await eventually(async () => {
      await page.getByLabel('Search').fill('nothing like this');
      await page.getByLabel('Search').fill(`Engine contract ${tag}`);
      await ours.waitFor({ timeout: 3000 });
    }, 30_000);
    expect(page.url()).to.contain(`q=Engine+contract+${tag}`);
    await expectNoSideways(page);
    await screenshot(page, 'requests-search');
  });
});
