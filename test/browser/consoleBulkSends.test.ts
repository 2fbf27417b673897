import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { expectAccessible } from '../support/axe';
import { consoleScreenshots, desktop, expectNoSideways, phone, shot } from '../support/browser';
import { useConsolePages } from '../support/consolePages';
import { renewalTemplate } from '../support/templates';

// Bulk sends in real headless Chromium: a CSV checked against a template, its problem fixed, the rows sent, and the
// job's page following the progress until every row has its request.

const HEADER = 'tenant.name,tenant.email,prefill.Rent,externalId';
const rows = (count: number) =>
  Array.from({ length: count }, (_, index) => `Tenant ${index + 1},tenant${index + 1}@example.com,${1000 + index},unit-${index + 1}`);
const csvFile = (lines: string[]) => ({ name: 'renewals.csv', mimeType: 'text/csv', buffer: Buffer.from(`${[HEADER, ...lines].join('\r\n')}\r\n`) });

describe('the console’s bulk sends (headless Chromium)', function () {
  this.timeout(180_000);
  // The refused check's 400 is part of the story; any other error is not.
  const suite = useConsolePages((message) => message.text().includes('status of 400') && message.location().url.endsWith('/app/bulk-sends'));
  const { openPage } = suite;
  const signUp = (page: Page, name: string) => suite.signUp(page, name, 'business');

  it('on a desktop: checks a CSV, fixes its problem, sends it, and watches the progress reach the end with each row linked to its request', async () => {
    const page = await openPage(desktop, `${suite.baseUrl}/app/signup`);
    const api = await signUp(page, 'Bulk lettings');
    const templateId = await renewalTemplate(api);

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Bulk sends' }).click();
    await page.getByRole('heading', { name: 'Bulk sends', exact: true }).waitFor();
    await page.getByLabel('Template', { exact: true }).selectOption(templateId);
    await page.getByRole('button', { name: 'Choose', exact: true }).click();
    await page.getByRole('heading', { name: 'The CSV for “Renewal”' }).waitFor();
    expect(await page.locator('#csv-header').textContent()).to.equal('tenant.name,tenant.email,prefill.Rent,title,message,expiresInDays,externalId');
    await expectAccessible(page, 'the upload form');

    // A CSV with a wrong address: the check lists it beside the form, and nothing is made.
    const wrong = rows(60);
    wrong[1] = 'Tenant 2,tenant2.example.com,1001,unit-2';
    await page.getByLabel('CSV file').setInputFiles(csvFile(wrong));
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    const alert = page.locator('#bulk-problems');
    await alert.getByText('row 2, column tenant.email: must be a valid e-mail address').waitFor();
    expect(await page.evaluate(() => document.activeElement?.id), 'the problems have the focus').to.equal('bulk-problems');
    expect(await page.getByLabel('Template', { exact: true }).inputValue(), 'the template stays chosen').to.equal(templateId);
    await expectAccessible(page, 'the form with its problems');
    await shot(page, consoleScreenshots, 'bulk-sends-problems');

    // Fixed: the check passes with its numbers.
    await page.getByLabel('CSV file').setInputFiles(csvFile(rows(60)));
    expect(await alert.isHidden(), 'the old problems go with the old file').to.equal(true);
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    await page.getByText('The check passed: 60 rows → 60 requests, 60 invitations.').waitFor();
    expect((await api('GET', '/api/v1/signatures')).body.data).to.have.length(0);

    // Sent: the job's page follows the progress until every row is done.
    const polls: string[] = [];
    page.on('request', (request) => request.url().endsWith('/progress') && polls.push(request.url()));
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/app\/bulk-sends\/bulk_[0-9a-z]{26}$/);
    const bar = page.getByRole('progressbar', { name: 'Rows done' });
    expect(await bar.getAttribute('max')).to.equal('60');
    const finishedAtLoad = (await page.locator('#bulk-progress-section').getAttribute('data-finished')) === 'true';
    // Once every row has its outcome the script says so, and shows the rows as they ended (a job done at load shows them at once).
    if (!finishedAtLoad) await page.locator('#bulk-live').getByText('Finished: 60 sent, 0 failed, 0 cancelled.').waitFor({ timeout: 120_000 });
    if (!finishedAtLoad) expect(polls.length, 'the page polled its progress').to.be.greaterThan(0);
    expect(await bar.evaluate((element: HTMLProgressElement) => [element.value, element.max])).to.deep.equal([60, 60]);
    expect(await page.locator('[data-count="rows.sent"]').textContent()).to.equal('60');
    expect(await page.locator('[data-count="requests.pending"]').textContent()).to.equal('60');
    expect(await page.locator('#bulk-status').textContent()).to.contain('sent');
    expect(await page.getByRole('button', { name: 'Cancel the bulk send' }).count(), 'nothing left to cancel').to.equal(0);
    await expectAccessible(page, 'the finished job');
    await shot(page, consoleScreenshots, 'bulk-sends-job');

    // Each row links to its request.
    await page.getByRole('link', { name: 'Request of row 2', exact: true }).click();
    await page.waitForURL(/\/app\/requests\/sr_[0-9a-z]{26}$/);
    await page.getByRole('heading', { name: 'Renewal' }).waitFor();
    expect(await page.locator('#signer-timeline').textContent()).to.contain('Tenant 2');
  });

  it('on a phone: the list, the form and a job fit the screen', async () => {
    const page = await openPage(phone, `${suite.baseUrl}/app/signup`);
    const api = await signUp(page, 'Phone lettings');
    const templateId = await renewalTemplate(api);
    const form = new FormData();
    form.append('templateId', templateId);
    form.append('file', new Blob([`${[HEADER, ...rows(3)].join('\n')}\n`], { type: 'text/csv' }), 'rows.csv');
    const job = await api('POST', '/api/v1/bulk-sends', { body: form });
    expect(job.status, JSON.stringify(job.body)).to.equal(201);
    for (const path of ['/app/bulk-sends', `/app/bulk-sends/new?templateId=${templateId}`, `/app/bulk-sends/${job.body.id}`]) {
      await page.goto(`${suite.baseUrl}${path}`);
      await expectNoSideways(page);
      await expectAccessible(page, path);
    }
    await page.locator('#bulk-status').getByText('sent').waitFor({ timeout: 60_000 });
    await expectNoSideways(page);
    await shot(page, consoleScreenshots, 'bulk-sends-job-phone');
  });
});
