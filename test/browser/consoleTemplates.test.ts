import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { consoleScreenshots, desktop, expectNoSideways, phone, shot } from '../support/browser';
import { useConsolePages } from '../support/consolePages';
import { uploadDocument } from '../support/documents';

// The template editor in real headless Chromium: fields drawn with the mouse (on a desktop) or added by
// their position (on a phone), text tags detected, the template saved and previewed, the document view.

const PAGE = { width: 595, height: 842 };

interface Field {
  role: string;
  type: string;
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

async function makeTaggedPdf() {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  pdf.addPage([PAGE.width, PAGE.height]).drawText('Tagged lease', { x: 60, y: 760, size: 22, font });
  const second = pdf.addPage([PAGE.width, PAGE.height]);
  second.drawText('{{signature:tenant}}', { x: 60, y: 300, size: 20, font });
  second.drawText('{{date:tenant}}', { x: 360, y: 300, size: 14, font });
  return Buffer.from(await pdf.save());
}

describe('the console’s template editor and document view (headless Chromium)', function () {
  this.timeout(120_000);
  // The refused save's 400 is part of the story; any other error is not.
  const suite = useConsolePages((message) => message.text().includes('status of 400') && message.location().url.endsWith('/app/templates'));
  const { openPage } = suite;
  const signUp = (page: Page, name: string) => suite.signUp(page, name);
  const screenshot = (page: Page, name: string) => shot(page, consoleScreenshots, `templates-${name}`);

  /** Waits until every page image in view has loaded. */
  const imagesLoaded = (page: Page, selector: string) =>
    page.waitForFunction((css) => [...document.querySelectorAll<HTMLImageElement>(css)].every((image) => image.complete && image.naturalWidth > 0), selector);

  it('on a desktop: draws a field with the mouse, fixes what the save refuses, and lands on the preview with the field where it was drawn', async () => {
    const page = await openPage(desktop, `${suite.baseUrl}/app/signup`);
    const api = await signUp(page, 'Drawing desk');
    const documentId = (await uploadDocument(api, { fileName: 'lease.pdf', pages: ['Residential lease', 'Signatures'] })).id;

    // From the document view to the editor.
    await page.goto(`${suite.baseUrl}/app/documents/${documentId}`);
    await page.getByRole('link', { name: 'Create template' }).click();
    const image = page.getByRole('img', { name: 'Page 1 of lease.pdf' });
    await imagesLoaded(page, '.page-frame img[alt="Page 1 of lease.pdf"]');
    expect(await page.getByLabel('Document').inputValue()).to.equal(documentId);

    // Drag across page 1: from 10 % / 70 % to 50 % / 78 % of the image.
    await image.evaluate((element) => element.scrollIntoView({ block: 'center' }));
    const box = (await image.boundingBox())!;
    const from = { x: box.x + box.width * 0.1, y: box.y + box.height * 0.7 };
    const to = { x: box.x + box.width * 0.5, y: box.y + box.height * 0.78 };
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 4 });
    await page.mouse.move(to.x, to.y, { steps: 4 });
    await page.mouse.up();
    await page.getByText('Field 1 added').waitFor();
    const fieldOne = page.getByRole('listitem').filter({ hasText: 'Field 1 ·' });
    expect(await page.evaluate(() => document.activeElement?.id), 'the new field’s role has the focus').to.equal('field-1-role');
    expect(await page.locator('.page-frame[data-page="1"] .field-box').count()).to.equal(1);

    // Pick the role and, first, a type that leaves the role without a signature: the save lists the problem.
    await fieldOne.getByLabel('Role', { exact: true }).fill('tenant');
    await fieldOne.getByLabel('Type', { exact: true }).selectOption('text');
    await page.getByRole('button', { name: 'Save template' }).click();
    const alert = page.locator('#editor-problems');
    await alert.getByText('roles.0 ("tenant") must have at least one signature field').waitFor();
    await screenshot(page, 'editor-problems');
    await fieldOne.getByLabel('Type', { exact: true }).selectOption('signature');
    await page.getByLabel('Template name').fill('Lease for tenants');
    await page.getByRole('button', { name: 'Save template' }).click();

    await page.waitForURL(/\/app\/templates\/tpl_[0-9a-z]{26}$/);
    await page.getByRole('heading', { name: 'Lease for tenants' }).waitFor();
    await imagesLoaded(page, '.doc-pages img');
    await screenshot(page, 'preview-desktop');
    const templateId = page.url().split('/').pop()!;
    expect(await page.getByRole('link', { name: 'Send for signature' }).getAttribute('href')).to.equal(`/app/requests/new?templateId=${templateId}`);

    const template = await api('GET', `/api/v1/templates/${templateId}`);
    expect(template.status).to.equal(200);
    expect(template.body.roles).to.deep.equal([{ name: 'tenant', order: 1 }]);
    const [field] = template.body.fields as Field[];
    expect(field).to.include({ role: 'tenant', type: 'signature', page: 1 });
    // Where it was drawn, in points from the bottom-left corner (within a point or two of mouse rounding).
    expect(field.x).to.be.closeTo(PAGE.width * 0.1, 2);
    expect(field.width).to.be.closeTo(PAGE.width * 0.4, 2);
    expect(field.y).to.be.closeTo(PAGE.height * (1 - 0.78), 2);
    expect(field.height).to.be.closeTo(PAGE.height * 0.08, 2);
  });

  it('on a desktop: a small initials box at the top right of a page shows its whole label in a tab below it, on the page', async () => {
    const page = await openPage(desktop, `${suite.baseUrl}/app/signup`);
    const api = await signUp(page, 'Small boxes');
    const documentId = (await uploadDocument(api, { fileName: 'lease.pdf', pages: ['Residential lease'] })).id;
    await page.goto(`${suite.baseUrl}/app/templates/new?documentId=${documentId}`);
    await imagesLoaded(page, '.page-frame img');
    const newField = page.locator('#new-field');
    await newField.getByLabel('Type').selectOption('initials');
    // 40 × 20 points, 7 points from the top and 10 from the right: no room above it, nor to its right.
    for (const [name, value] of Object.entries({ X: '545', Y: '815', Width: '40', Height: '20' })) await newField.getByLabel(name, { exact: true }).fill(value);
    await newField.getByRole('button', { name: 'Add field' }).click();
    await page.getByText('Field 1 added').waitFor();

    const tab = page.locator('.page-frame[data-page="1"] .field-box .field-tab');
    expect(await tab.textContent()).to.equal('1 · signer · initials');
    expect(await tab.getAttribute('class')).to.equal('field-tab below');
    const fits = await tab.evaluate((element) => ({ wide: element.scrollWidth <= element.clientWidth, tall: element.scrollHeight <= element.clientHeight }));
    expect(fits, 'nothing of the label is cut').to.deep.equal({ wide: true, tall: true });
    const [label, image, box] = await Promise.all(
      [tab, page.locator('.page-frame[data-page="1"] img'), page.locator('.field-box')].map((each) => each.boundingBox()),
    );
    expect(label!.x, 'within the page’s left edge').to.be.at.least(image!.x);
    expect(label!.x + label!.width, 'within its right edge').to.be.at.most(image!.x + image!.width + 0.5);
    expect(label!.y, 'below the box').to.be.at.least(box!.y + box!.height - 2.5);
    expect(label!.y + label!.height, 'within the page’s bottom edge').to.be.at.most(image!.y + image!.height);
    expect(box!.width, 'the box itself is narrower than its label').to.be.below(label!.width);
    await screenshot(page, 'editor-small-box');
  });

  it('on a desktop: detects text tags and saves their fields, the tags taken off the template’s copy', async () => {
    const page = await openPage(desktop, `${suite.baseUrl}/app/signup`);
    const api = await signUp(page, 'Tag desk');
    const documentId = (await uploadDocument(api, { fileName: 'tagged.pdf', pdf: await makeTaggedPdf() })).id;
    await page.goto(`${suite.baseUrl}/app/templates/new?documentId=${documentId}`);
    await page.getByRole('button', { name: 'Detect text tags' }).click();
    await page.getByText('Found 2 fields in text tags for tenant.').waitFor();
    expect(await page.locator('.page-frame[data-page="2"] .field-box.detected').count()).to.equal(2);
    await page.locator('.page-frame[data-page="2"]').scrollIntoViewIfNeeded();
    await imagesLoaded(page, '.page-frame img');
    await screenshot(page, 'editor-detected');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.waitForURL(/\/app\/templates\/tpl_/);
    const template = await api('GET', `/api/v1/templates/${page.url().split('/').pop()}`);
    expect((template.body.fields as Field[]).map(({ type, page: number }) => [type, number])).to.deep.equal([
      ['signature', 2],
      ['date', 2],
    ]);
    expect(template.body.name).to.equal('tagged');
    const document = await api('GET', `/api/v1/documents/${documentId}`);
    expect(template.body.sha256, 'the copy without its tags differs from the original').not.to.equal(document.body.sha256);
  });

  it('on a phone: adds a field by its position with the keyboard alone, saves, and reads the preview and the document view', async () => {
    const page = await openPage(phone, `${suite.baseUrl}/app/signup`);
    const api = await signUp(page, 'Phone owner');
    const documentId = (await uploadDocument(api, { fileName: 'a rather long contract name for a small screen.pdf', pages: ['Contract', 'Signatures'] })).id;

    await page.goto(`${suite.baseUrl}/app/documents`);
    await page.getByRole('link', { name: 'a rather long contract name for a small screen.pdf' }).click();
    await page.getByRole('heading', { name: 'a rather long contract name for a small screen.pdf' }).waitFor();
    const firstPage = page.getByRole('img', { name: 'Page 1 of a rather long contract name for a small screen.pdf' });
    expect(await firstPage.getAttribute('loading')).to.equal('lazy');
    await imagesLoaded(page, '.doc-pages li:first-child img');
    await expectNoSideways(page);
    await screenshot(page, 'document-view-phone');

    await page.getByRole('link', { name: 'Create template' }).click();
    await page.locator('#new-field').getByLabel('Role').waitFor();
    expect(page.url()).to.equal(`${suite.baseUrl}/app/templates/new?documentId=${documentId}`);
    await expectNoSideways(page);
    await screenshot(page, 'editor-phone');
    // Keyboard only: tab into the new-field form and fill it.
    await page.locator('#new-field').getByLabel('Role').focus();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('buyer');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Seller notes'); // the label: a signature field may carry one
    for (const [name, value] of [
      ['Page', '2'],
      ['X', '100'],
      ['Y', '120'],
      ['Width', '200'],
      ['Height', '50'],
    ]) {
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.id)).to.equal(`new-${name.toLowerCase()}`);
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type(value);
    }
    await page.keyboard.press('Enter');
    await page.getByText('Field 1 added: signature for buyer, page 2 · x 100, y 120 · 200 × 50 pt.').waitFor();
    await expectNoSideways(page);
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.waitForURL(/\/app\/templates\/tpl_/);
    await expectNoSideways(page);
    await screenshot(page, 'preview-phone');

    const template = await api('GET', `/api/v1/templates/${page.url().split('/').pop()}`);
    expect(template.body.fields).to.deep.equal([
      { role: 'buyer', type: 'signature', required: true, label: 'Seller notes', page: 2, x: 100, y: 120, width: 200, height: 50 },
    ]);

    await page.getByRole('link', { name: 'Templates' }).first().click();
    await page.getByRole('row').filter({ hasText: 'a rather long contract name' }).waitFor();
    await expectNoSideways(page);
    await screenshot(page, 'list-phone');
    await page.getByRole('button', { name: /^Delete a rather long contract name/ }).click();
    await page.getByText('No templates yet.').waitFor();
  });
  it('on a phone: gives fields their options, formula, text and condition, fixes a formula the save refuses, and saves them', async () => {
    const page = await openPage(phone, `${suite.baseUrl}/app/signup`);
    const api = await signUp(page, 'Form builder');
    const documentId = (await uploadDocument(api, { fileName: 'lease.pdf', pages: ['Lease'] })).id;
    await page.goto(`${suite.baseUrl}/app/templates/new?documentId=${documentId}`);
    const newField = page.locator('#new-field');
    const add = async (type: string, label: string, y: number) => {
      await newField.getByLabel('Role').fill('tenant');
      await newField.getByLabel('Type').selectOption(type);
      await newField.getByLabel('Label').fill(label);
      await newField.getByLabel('Y', { exact: true }).fill(String(y));
      await newField.getByRole('button', { name: 'Add field' }).click();
      return page.getByRole('listitem').filter({ hasText: `Field ${await page.locator('#field-list > li').count()} ·` });
    };
    await add('signature', '', 700);
    const plan = await add('radio', 'Plan', 650);
    await plan.getByLabel('Options, one a line').fill('Basic\nPro');
    const why = await add('text', 'Why Pro', 600);
    expect(await why.getByLabel('Values, comma-separated').isHidden(), 'values only for equals and notEquals').to.equal(true);
    await why.getByLabel('Show only when field (optional)').fill('Plan');
    await why.getByLabel('is', { exact: true }).selectOption('equals');
    await why.getByLabel('Values, comma-separated').fill('Pro');
    await add('number', 'Rent', 550);
    const yearly = await add('calculated', 'Yearly', 500);
    expect(await yearly.getByLabel('Options, one a line').isHidden(), 'options only for choices').to.equal(true);
    await yearly.getByLabel('Formula').fill('{Rent} *');
    const note = await add('staticText', '', 450);
    await note.getByLabel('Text shown').fill('Rent is due monthly');
    await expectNoSideways(page);

    await page.getByLabel('Template name').fill('Lease with a form');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page
      .locator('#editor-problems')
      .getByText(/^Field 5\.formula does not parse/)
      .waitFor();
    await yearly.getByLabel('Formula').fill('{Rent} * 12');
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.waitForURL(/\/app\/templates\/tpl_/);

    const template = await api('GET', `/api/v1/templates/${page.url().split('/').pop()}`);
    const logic = template.body.fields.map(({ type, label, options, formula, text, showWhen }: Record<string, unknown>) => ({
      type,
      label,
      options,
      formula,
      text,
      showWhen,
    }));
    expect(logic).to.deep.equal([
      { type: 'signature', label: null, options: undefined, formula: undefined, text: undefined, showWhen: undefined },
      { type: 'radio', label: 'Plan', options: ['Basic', 'Pro'], formula: undefined, text: undefined, showWhen: undefined },
      { type: 'text', label: 'Why Pro', options: undefined, formula: undefined, text: undefined, showWhen: { field: 'Plan', is: 'equals', values: ['Pro'] } },
      { type: 'number', label: 'Rent', options: undefined, formula: undefined, text: undefined, showWhen: undefined },
      { type: 'calculated', label: 'Yearly', options: undefined, formula: '{Rent} * 12', text: undefined, showWhen: undefined },
      { type: 'staticText', label: null, options: undefined, formula: undefined, text: 'Rent is due monthly', showWhen: undefined },
    ]);
  });
});
