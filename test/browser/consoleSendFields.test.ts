import { expect } from 'chai';
import type { BrowserContextOptions, ConsoleMessage, Page } from 'playwright-core';
import { createApiKey } from '../../src/apiKeys/service';
import { describeViolations, seriousViolations } from '../support/axe';
import { consoleScreenshots, desktop, expectNoSideways, phone, shot, useChromium, watchPage, type WatchOptions } from '../support/browser';
import { signedUp, uploadPdf } from '../support/consoleClient';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { sharedSystem } from '../support/system';

// The send form's fields in real headless Chromium: drawn on the document's pages with the mouse or added
// by their position for the signers of its rows, sent as the API's fields; without JavaScript, none.

const PAGE = { width: 595, height: 842 };

interface Field {
  type: string;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

describe('the console’s send form places fields on the document’s pages (headless Chromium)', function () {
  this.timeout(120_000);
  const browser = useChromium();
  let baseUrl: string;

  before(async () => {
    baseUrl = (await sharedSystem()).url!;
  });

  /** A new account with a 2-page document, logged in to a browser context of these options; a REST client of the account. */
  async function ownerWithDocument(options: BrowserContextOptions, watch: WatchOptions = {}) {
    const { browser: owner, email } = await signedUp(baseUrl);
    const { id: documentId } = await uploadPdf(owner, await makePdf(['Lease', 'Signatures']), 'lease.pdf');
    const db = (await sharedSystem()).database.knex;
    const { account_id: accountId } = await db('users').where({ email }).first('account_id');
    const api = client(baseUrl, (await createApiKey(db, accountId, 'browser test')).secret);
    const context = await browser().newContext(options);
    await context.addCookies([...owner.cookies].map(([name, value]) => ({ name, value, url: baseUrl })));
    const problems: string[] = [];
    const page = watchPage(await context.newPage(), baseUrl, problems, watch);
    return { api, documentId, context, page, problems };
  }

  /** The send form with the document chosen, its pages shown, and a signer in each of the first rows. */
  async function openForm(page: Page, documentId: string, signers: string[]) {
    await page.goto(`${baseUrl}/app/requests/new`);
    await page.getByLabel('Document', { exact: true }).selectOption(documentId);
    await page.getByRole('img', { name: 'Page 1 of lease.pdf' }).waitFor();
    const rows = page.locator('.signer-row');
    for (const [index, name] of signers.entries()) {
      await rows.nth(index).getByLabel('Name').fill(name);
      await rows
        .nth(index)
        .getByLabel('E-mail')
        .fill(`${name.split(' ')[0].toLowerCase()}@example.com`);
    }
    await page.getByLabel('Title').fill('Lease of flat 3');
    return page.getByRole('group', { name: 'New field' });
  }

  /** Types a new field's position, then presses Enter in the last box, as a keyboard user would. */
  async function typePosition(page: Page, position: Record<'Page' | 'X' | 'Y' | 'Width' | 'Height', string>) {
    const newField = page.getByRole('group', { name: 'New field' });
    for (const [name, value] of Object.entries(position)) await newField.getByLabel(name, { exact: true }).fill(value);
    await newField.getByLabel('Height', { exact: true }).press('Enter');
  }

  const sentRequest = async (page: Page) => {
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.waitForURL(/\/app\/requests\/sr_[0-9a-z]{26}$/);
    return page.url().split('/').pop()!;
  };

  it('at 1280 px: a signature box drawn for signer 1 and a checkbox typed in for signer 2 are theirs on the API, where they were placed; axe finds nothing serious', async () => {
    const { api, documentId, context, page, problems } = await ownerWithDocument(desktop);
    try {
      const newField = await openForm(page, documentId, ['Tina Tenant', 'Larry Landlord']);

      // Signer 1's signature, dragged across page 1 from 10 % / 70 % to 50 % / 78 % of the image.
      await newField.getByLabel('Signer').selectOption({ label: 'Signer 1: Tina Tenant' });
      await newField.getByLabel('Type').selectOption('signature');
      const image = page.getByRole('img', { name: 'Page 1 of lease.pdf' });
      await image.evaluate((element) => element.scrollIntoView({ block: 'center' }));
      await image.evaluate((element: HTMLImageElement) => element.decode()); // loaded once in view
      const box = (await image.boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.1, box.y + box.height * 0.7);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.74, { steps: 4 });
      await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.78, { steps: 4 });
      await page.mouse.up();
      await page.getByText('Field 1 added: signature for signer 1').waitFor();

      // Signer 2's checkbox, by its position, with the keyboard.
      await newField.getByLabel('Signer').selectOption('2');
      await newField.getByLabel('Type').selectOption('checkbox');
      await newField.getByLabel('Label (optional)').fill('Keys handed over');
      await typePosition(page, { Page: '2', X: '400', Y: '100', Width: '20', Height: '20' });
      await page.getByText('Field 2 added: checkbox for signer 2, page 2 · x 400, y 100 · 20 × 20 pt.').waitFor();

      expect(await page.locator('.page-frame[data-page="1"] .field-box.role-0').count()).to.equal(1);
      expect(await page.locator('.page-frame[data-page="2"] .field-box.role-1 .field-tab').textContent()).to.equal('2 · signer 2 · Keys handed over');
      const listed = page.locator('#field-list > li');
      expect(await listed.count()).to.equal(2);
      expect(await listed.nth(1).getByLabel('Signer').inputValue()).to.equal('2');
      const violations = await seriousViolations(page);
      expect(violations, describeViolations('send form with fields', violations).join('\n')).to.deep.equal([]);
      await expectNoSideways(page);
      await shot(page, consoleScreenshots, 'send-fields-desktop');

      const id = await sentRequest(page);
      const sent = await api('GET', `/api/v1/signatures/${id}`);
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      const [tenant, landlord] = sent.body.signers as { name: string; fields: (Field & { label: string | null; required: boolean; documentId: string })[] }[];
      expect([tenant.name, landlord.name]).to.deep.equal(['Tina Tenant', 'Larry Landlord']);
      expect(tenant.fields).to.have.length(1);
      const [signature] = tenant.fields;
      expect(signature).to.include({ type: 'signature', page: 1, label: null, required: true, documentId });
      // Where it was drawn, in points from the bottom-left corner (within a point or two of mouse rounding).
      expect(signature.x).to.be.closeTo(PAGE.width * 0.1, 2);
      expect(signature.width).to.be.closeTo(PAGE.width * 0.4, 2);
      expect(signature.y).to.be.closeTo(PAGE.height * (1 - 0.78), 2);
      expect(signature.height).to.be.closeTo(PAGE.height * 0.08, 2);
      expect(landlord.fields).to.deep.equal([
        { type: 'checkbox', page: 2, x: 400, y: 100, width: 20, height: 20, label: 'Keys handed over', required: true, documentId },
      ]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('at 375 px: fits the screen, adds a field by its position, keeps it with its signer when a row above is removed, and comes back with a refused field', async () => {
    // The refused send's 400 is part of the story.
    const refusedSend = (message: ConsoleMessage) => message.text().includes('status of 400') && message.location().url.endsWith('/app/requests');
    const { api, documentId, context, page, problems } = await ownerWithDocument(phone, { expectedError: refusedSend });
    try {
      const newField = await openForm(page, documentId, ['Ada Lovelace', 'Alan Turing', 'Grace Hopper']);
      await newField.getByLabel('Signer').selectOption('3');
      await newField.getByLabel('Type').selectOption('initials');
      await typePosition(page, { Page: '1', X: '500', Y: '40', Width: '60', Height: '24' });
      await page.getByText('Field 1 added: initials for signer 3, page 1 · x 500, y 40 · 60 × 24 pt.').waitFor();
      await expectNoSideways(page);
      await shot(page, consoleScreenshots, 'send-fields-phone');
      // Past the page's right edge: refused by the API, and named in the form's words.
      await typePosition(page, { Page: '1', X: '580', Y: '40', Width: '60', Height: '24' });
      await page.getByText('Field 2 added').waitFor();

      await page.getByRole('button', { name: 'Remove signer 2' }).click();
      expect(await page.locator('#field-list > li').first().getByLabel('Signer').inputValue(), 'Grace is signer 2 now').to.equal('2');
      expect(JSON.parse(await page.locator('#placed-fields').inputValue()).map((field: { signer: number }) => field.signer)).to.deep.equal([2, 2]);

      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.getByText('Field 2 must lie inside page 1 (595 × 842 points)').waitFor();
      const violations = await seriousViolations(page);
      expect(violations, describeViolations('send form, refused', violations).join('\n')).to.deep.equal([]);
      // The fields came back with the form: remove the refused one and send.
      await page.getByRole('img', { name: 'Page 1 of lease.pdf' }).waitFor();
      expect(await page.locator('#field-list > li').count()).to.equal(2);
      await page.getByRole('button', { name: 'Remove field 2' }).click();
      const id = await sentRequest(page);
      const sent = await api('GET', `/api/v1/signatures/${id}`);
      const signers = sent.body.signers as { name: string; fields: Field[] | null }[];
      expect(signers.map((signer) => [signer.name, signer.fields?.map(({ type, page: number, x }) => [type, number, x]) ?? null])).to.deep.equal([
        ['Ada Lovelace', null],
        ['Grace Hopper', [['initials', 1, 500]]],
      ]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('without JavaScript: the section stays hidden and the request is sent without fields, as before', async () => {
    const { api, documentId, context, page, problems } = await ownerWithDocument({ ...desktop, javaScriptEnabled: false });
    try {
      await page.goto(`${baseUrl}/app/requests/new`);
      await page.getByLabel('Document', { exact: true }).selectOption(documentId);
      expect(await page.locator('#field-placer').isHidden()).to.equal(true);
      await page.locator('.signer-row').first().getByLabel('Name').fill('Ada Lovelace');
      await page.locator('.signer-row').first().getByLabel('E-mail').fill('ada@example.com');
      await page.getByLabel('Title').fill('No script');
      const id = await sentRequest(page);
      const sent = await api('GET', `/api/v1/signatures/${id}`);
      expect(sent.body.signers.map((signer: { fields: unknown }) => signer.fields)).to.deep.equal([null]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
