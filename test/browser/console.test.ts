import { expect } from 'chai';
import type { BrowserContext, Page } from 'playwright-core';
import { describeViolations, seriousViolations } from '../support/axe';
import { confirmEmail, consoleScreenshots, desktop, expectNoSideways, phone, phoneContext, shot, useChromium, watchPage } from '../support/browser';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { createSigningRequest, eventually } from '../support/signing';
import { sharedSystem } from '../support/system';

describe('the owner console (/app, in headless Chromium on a phone)', function () {
  this.timeout(120_000);
  const browser = useChromium();
  let context: BrowserContext;
  let baseUrl: string;
  let problems: string[];

  before(async () => {
    baseUrl = (await sharedSystem()).url!;
  });

  beforeEach(async () => {
    context = await phoneContext(browser());
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    problems = [];
  });

  afterEach(async () => {
    await context.close();
    expect(problems, 'console errors and CSP violations').to.deep.equal([]);
  });

  async function openPage(url: string): Promise<Page> {
    const page = watchPage(await context.newPage(), baseUrl, problems);
    await page.goto(url);
    return page;
  }

  const screenshot = (page: Page, name: string) => shot(page, consoleScreenshots, name);

  it('signs up, creates and copies an API key that works on the REST API, sees the dashboard, uploads a PDF, logs out', async () => {
    const email = `browser-${Math.random().toString(36).slice(2)}@example.com`;
    const page = await openPage(`${baseUrl}/app/signup`);
    await page.getByLabel('Account name').fill('Lovelace & Co');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('analytical engine 1843');
    await screenshot(page, 'signup');
    await page.getByRole('button', { name: 'Sign up' }).click();

    await page.getByRole('heading', { name: 'Lovelace & Co' }).waitFor();
    expect(page.url()).to.equal(`${baseUrl}/app`);

    // Until the address is confirmed, a banner says so; the link e-mailed at sign-up confirms it.
    await page.getByRole('region', { name: 'Confirm your e-mail address' }).waitFor();
    await screenshot(page, 'unconfirmed-banner');
    await confirmEmail(page, baseUrl, email);
    await page.goto(`${baseUrl}/app`);
    expect(await page.getByRole('region', { name: 'Confirm your e-mail address' }).count()).to.equal(0);

    // API keys: create, copy with the button, use it.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = await page.getByLabel('New API key').inputValue();
    expect(shown).to.match(/^sk_live_[A-Za-z0-9]{43}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).to.equal(shown);
    await expectNoSideways(page);
    await screenshot(page, 'api-key-created');

    const api = client(baseUrl, copied);
    const account = await api('GET', '/api/v1/account');
    expect(account.status).to.equal(200);
    expect(account.body).to.include({ email, plan: 'free' });
    const viaApi = await api('POST', '/api/v1/documents', { json: { fileName: 'from-the-api.pdf', fileSize: 100 } });
    expect(viaApi.status).to.equal(201);
    await createSigningRequest(api);
    // The breakdown may come from the search index, a moment behind.
    const breakdown = await eventually(async () => {
      const response = await api('GET', '/api/v1/dashboard/signing-breakdown');
      expect(response.body.requestsByStatus).to.include({ pending: 1 });
      return response.body;
    });

    await page.getByRole('link', { name: 'API keys' }).click(); // the key is shown once: the list has its prefix only
    await page.locator('td[data-label="Prefix"]', { hasText: `${shown.slice(0, 16)}…` }).waitFor();
    expect(await page.getByLabel('New API key').count()).to.equal(0);
    expect(await page.content()).not.to.contain(shown);

    // Dashboard: cards, the chart (Chart.js from this server) and the activity feed.
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.locator('canvas#trends-chart[data-rendered="true"]').waitFor();
    await page.getByText('Document “from-the-api.pdf” uploaded').waitFor();
    expect(await page.locator('.stat').count()).to.equal(8);
    // The signing breakdown: a labelled chart and tables with the REST API's numbers.
    await page.locator('canvas#breakdown-chart[data-rendered="true"]').waitFor();
    await page.getByRole('img', { name: 'Signing requests by status: Pending 1, Completed 0, Declined 0, Cancelled 0, Expired 0' }).waitFor();
    const tableOf = async (caption: string) =>
      Object.fromEntries(
        await page
          .getByRole('table', { name: caption })
          .locator('tbody tr')
          .evaluateAll((rows) => rows.map((row) => [row.children[0].textContent!.toLowerCase(), Number(row.children[1].textContent)])),
      );
    expect(await tableOf('Signing requests by status')).to.deep.equal(breakdown.requestsByStatus);
    expect(await tableOf('Signers by status')).to.deep.equal(breakdown.signersByStatus);
    expect(await tableOf('Waiting on')).to.deep.equal({ 'ada@example.com': 1, 'alan@example.com': 1 });
    const violations = describeViolations('/app with a breakdown', await seriousViolations(page));
    expect(violations, violations.join('\n')).to.deep.equal([]);
    await expectNoSideways(page);
    await screenshot(page, 'dashboard');

    // Documents: drop a PDF on the drop zone; the progress bar fills and the list shows it.
    await page.getByRole('link', { name: 'Documents' }).click();
    const bytes = [...(await makePdf(['A contract', 'Page two']))];
    const dataTransfer = await page.evaluateHandle((content) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(content)], 'contract.pdf', { type: 'application/pdf' }));
      return transfer;
    }, bytes);
    await page.locator('#dropzone').dispatchEvent('drop', { dataTransfer });
    await page.locator('td[data-label="Name"]', { hasText: 'contract.pdf' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'contract.pdf' }).locator('td[data-label="Pages"]').textContent()).to.equal('2');
    await expectNoSideways(page);
    await screenshot(page, 'documents');

    // The plan page counts the three documents.
    await page.getByRole('link', { name: 'Plan' }).click();
    await page.getByText('Documents: 3 of 5').waitFor();
    await screenshot(page, 'plan');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.goto(`${baseUrl}/app`);
    expect(page.url()).to.equal(`${baseUrl}/app/login`);
  });

  it('uploads from the file picker, and refuses a file that is not a PDF before sending it', async () => {
    const page = await openPage(`${baseUrl}/app/signup`);
    const email = `progress-${Math.random().toString(36).slice(2)}@example.com`;
    await page.getByLabel('Account name').fill('Progress');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('heading', { name: 'Progress' }).waitFor();
    await confirmEmail(page, baseUrl, email);
    await page.goto(`${baseUrl}/app/documents`);
    await page.locator('#file').setInputFiles({ name: 'picked.pdf', mimeType: 'application/pdf', buffer: await makePdf(['Picked']) });
    await page.locator('td[data-label="Name"]', { hasText: 'picked.pdf' }).waitFor();
    await page.locator('#file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    await page.getByText('notes.txt is not a PDF.').waitFor();
  });
});

describe('the “Address confirmed” page (in headless Chromium at 375 and 1280 px)', function () {
  this.timeout(120_000);
  const browser = useChromium();
  const banner = (page: Page) => page.getByRole('region', { name: 'Confirm your e-mail address' });

  for (const [name, options] of [
    ['375 px', phone],
    ['1280 px', desktop],
  ] as const) {
    it(`at ${name}: shows no banner asking to confirm the address it has just confirmed; axe finds nothing serious; the favicon is served`, async () => {
      const baseUrl = (await sharedSystem()).url!;
      const context = await browser().newContext(options);
      const problems: string[] = [];
      try {
        const page = watchPage(await context.newPage(), baseUrl, problems);
        page.on('response', (response) => {
          if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
        });
        const email = `confirmed-${Math.random().toString(36).slice(2)}@example.com`;
        await page.goto(`${baseUrl}/app/signup`);
        await page.getByLabel('Account name').fill('Hopper & Co');
        await page.getByLabel('E-mail').fill(email);
        await page.getByLabel('Password').fill('a long enough password');
        await page.getByRole('button', { name: 'Sign up' }).click();
        await banner(page).waitFor();

        await confirmEmail(page, baseUrl, email);
        expect(await page.getByRole('status').textContent()).to.contain(`${email} is confirmed`);
        expect(await banner(page).count()).to.equal(0);
        expect(await page.getByRole('navigation', { name: 'Console' }).isVisible(), 'still logged in, with the console’s menu').to.equal(true);
        const violations = describeViolations(`Address confirmed (${name})`, await seriousViolations(page));
        expect(violations, violations.join('\n')).to.deep.equal([]);
        await expectNoSideways(page);
        await shot(page, consoleScreenshots, `address-confirmed-${options.viewport!.width}`);

        const icon = (await page.locator('link[rel="icon"]').getAttribute('href'))!;
        const served = await fetch(new URL(icon, page.url()));
        expect([served.status, served.headers.get('content-type')]).to.deep.equal([200, 'image/svg+xml']);
      } finally {
        await context.close();
      }
      expect(problems, 'console errors and failed requests').to.deep.equal([]);
    });
  }
});
