import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { PNG } from 'pngjs';
import { launchChromium } from '../support/browser';
import type { Request } from '../support/http';
import { eventually, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';
import { uploadDocument } from '../support/documents';

// The whole path of a template in real headless Chromium: a tagged PDF → detect → template → a request made
// from it with a prefill → both signers fill their fields on their signing pages, in order → the sealed PDF.

const screenshots = path.join('test-output', 'screenshots');
const PAGE_HEIGHT = 842;
const WAIT_MS = 15_000;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface TemplateField extends Box {
  role: string;
  type: string;
  label: string | null;
  page: number;
}

/** A 2-page lease with text tags: the tenant fills page 1 and signs page 2, the landlord signs after. */
async function makeLeasePdf() {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const first = pdf.addPage([595, PAGE_HEIGHT]);
  first.drawText('Residential lease', { x: 60, y: 760, size: 22, font });
  first.drawText('Monthly rent: {{text:tenant:rent}} per month', { x: 60, y: 680, size: 12, font });
  first.drawText('Employer: {{text:tenant:employer}}', { x: 60, y: 640, size: 14, font });
  first.drawText('I have read the house rules {{checkbox:tenant:rules}}', { x: 60, y: 600, size: 12, font });
  first.drawText('Tenant initials: {{initials:tenant}}', { x: 60, y: 540, size: 20, font });
  const second = pdf.addPage([595, PAGE_HEIGHT]);
  second.drawText('Signatures', { x: 60, y: 760, size: 22, font });
  second.drawText('{{signature:tenant}}', { x: 60, y: 640, size: 26, font });
  second.drawText('{{date:tenant}}', { x: 400, y: 640, size: 14, font });
  second.drawText('Keys handed over {{checkbox:landlord:keys}}', { x: 60, y: 520, size: 12, font });
  second.drawText('{{signature:landlord}}', { x: 60, y: 440, size: 26, font });
  second.drawText('{{initials:landlord}}', { x: 400, y: 440, size: 20, font });
  return Buffer.from(await pdf.save());
}

/** Draws a wavy stroke across a signature_pad canvas with the mouse. */
async function drawOn(page: Page, name: RegExp) {
  const pad = page.getByRole('img', { name });
  await pad.scrollIntoViewIfNeeded({ timeout: WAIT_MS });
  const box = (await pad.boundingBox())!;
  const middle = box.y + box.height / 2;
  await page.mouse.move(box.x + 20, middle);
  await page.mouse.down();
  for (let step = 1; step <= 24; step++)
    await page.mouse.move(box.x + 20 + step * ((box.width - 40) / 24), middle - Math.sin(step / 2.5) * box.height * 0.3, { steps: 2 });
  await page.mouse.up();
}

/** Words of a page with their boxes, from poppler's pdftotext -bbox (top-left origin, points). */
function wordsOn(file: string, page: number) {
  const html = execFileSync('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), file, '-']).toString();
  return [...html.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((match) => ({
    text: match[5],
    xMin: Number(match[1]),
    yMin: Number(match[2]),
    xMax: Number(match[3]),
    yMax: Number(match[4]),
  }));
}

/** Whether a word of pdftotext -bbox lies inside a field (PDF coordinates from the bottom-left), give or take a point. */
const inside = (word: { xMin: number; yMin: number; xMax: number; yMax: number }, field: Box) =>
  word.xMin >= field.x - 1 &&
  word.xMax <= field.x + field.width + 1 &&
  word.yMin >= PAGE_HEIGHT - field.y - field.height - 1 &&
  word.yMax <= PAGE_HEIGHT - field.y + 1;

/** Pixels of a field that are not white, on a page rendered by pdftoppm at 72 dpi (one pixel per point). */
function inkedPixels(file: string, pageNumber: number, field: Box) {
  const prefix = path.join(path.dirname(file), `${path.basename(file, '.pdf')}-p${pageNumber}`);
  execFileSync('pdftoppm', ['-png', '-r', '72', '-f', String(pageNumber), '-l', String(pageNumber), '-singlefile', file, prefix], { timeout: WAIT_MS });
  const image = PNG.sync.read(fs.readFileSync(`${prefix}.png`));
  let count = 0;
  for (let y = Math.ceil(PAGE_HEIGHT - field.y - field.height); y < Math.floor(PAGE_HEIGHT - field.y); y++) {
    for (let x = Math.ceil(field.x); x < Math.floor(field.x + field.width); x++) {
      const offset = (image.width * y + x) * 4;
      if (image.data[offset] < 220 || image.data[offset + 1] < 220 || image.data[offset + 2] < 220) count++;
    }
  }
  return count;
}

describe('a template’s request signed in headless Chromium, from text tags to the sealed PDF', function () {
  this.timeout(180_000);
  let browser: Browser;
  let dir: string;
  let problems: string[];

  before(async () => {
    fs.mkdirSync(screenshots, { recursive: true });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-template-browser-'));
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    problems = [];
  });

  afterEach(() => {
    expect(problems, 'console errors and CSP violations').to.deep.equal([]);
  });

  /** A signer's page in a fresh browser context, recording console errors and uncaught exceptions. */
  async function openSigningPage(request: Request, baseUrl: string, requestId: string, signerId: string, device: BrowserContextOptions) {
    const link = await request('POST', `/api/v1/signatures/${requestId}/signers/${signerId}/link`);
    expect(link.status, JSON.stringify(link.body)).to.equal(200);
    const context = await browser.newContext(device);
    context.setDefaultTimeout(WAIT_MS);
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const response = await page.goto(`${baseUrl}/sign/${tokenOf(link.body.url)}`, { timeout: WAIT_MS });
    expect(response!.status()).to.equal(200);
    await page.locator('#pages[data-rendered="2"]').waitFor();
    return { page, context };
  }

  it('typed instead of drawn: the initials are made from the typed name, can be changed, and are what is sent', async () => {
    const { request, system, db } = await createTestAccount();
    const pdf = await makeLeasePdf();
    const source = await uploadDocument(request, { fileName: 'lease.pdf', pdf });
    const fields = [
      { role: 'tenant', type: 'signature', page: 2, x: 60, y: 600, width: 250, height: 40 },
      { role: 'tenant', type: 'initials', page: 1, x: 400, y: 100, width: 60, height: 24 },
      { role: 'tenant', type: 'text', label: 'note', required: false, page: 1, x: 60, y: 300, width: 300, height: 20 },
    ];
    const template = await request('POST', '/api/v1/templates', { json: { name: 'Typed', documentId: source.id, roles: [{ name: 'tenant' }], fields } });
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    const sent = await request('POST', '/api/v1/signatures', {
      json: { template_id: template.body.id, title: 'Typed', signers: [{ name: 'Tina Tenant', email: 'tina@example.com', role: 'tenant' }] },
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    const signer = sent.body.signers[0];
    const { page, context } = await openSigningPage(request, system.url!, sent.body.id, signer.id, {
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    await page.getByRole('radio', { name: 'Type' }).check();
    await page.getByLabel('Your full name').fill('Tina Maria Tenant');
    const initials = page.getByRole('textbox', { name: 'Your initials' });
    expect(await initials.inputValue()).to.equal('TMT');
    await initials.fill('T.T.');
    await page.getByLabel('Your full name').fill('Tina Tenant'); // changed initials are the signer's own
    expect(await initials.inputValue()).to.equal('T.T.');
    expect(await page.locator('.mark.initials').textContent()).to.equal('T.T.');
    expect(await page.locator('.mark.signature').textContent()).to.equal('Tina Tenant');
    await page.getByLabel('I agree to sign this document electronically').check();
    await page.getByRole('button', { name: 'Sign', exact: true }).click(); // the optional note may stay empty
    await page.locator('#outcome').getByRole('heading', { name: 'You have signed' }).waitFor();
    await context.close();
    const stored = await db('signers').where({ id: signer.id }).first('signature');
    expect(stored.signature).to.deep.include({ type: 'typed', value: 'Tina Tenant', fieldValues: { '1': 'T.T.' } });
  });

  it('detect → template → request with a prefill → tenant on a phone, then landlord on a desktop → sealed with every value in its field, no tag, pdfsig valid', async () => {
    const { request, system } = await createTestAccount();
    const baseUrl = system.url!;
    const pdf = await makeLeasePdf();

    // Detect (a dry run), then the template from the tags, tenant first.
    const source = await uploadDocument(request, { fileName: 'lease.pdf', pdf });
    const detected = await request('POST', `/api/v1/documents/${source.id}/detect-fields`);
    expect(detected.status, JSON.stringify(detected.body)).to.equal(200);
    expect(detected.body.warnings).to.deep.equal([]);
    expect(detected.body.fields).to.have.length(9);
    const created = await request('POST', '/api/v1/templates', {
      json: { name: 'Lease', documentId: source.id, detectFields: true, roles: [{ name: 'tenant' }, { name: 'landlord' }] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const template = created.body;
    const fieldOf = (role: string, type: string, label: string | null = null) =>
      template.fields.find((field: TemplateField) => field.role === role && field.type === type && field.label === label) as TemplateField;

    // The request: sequential by role order, the rent prefilled.
    const sent = await request('POST', '/api/v1/signatures', {
      json: {
        template_id: template.id,
        title: 'Lease of flat 3',
        signingOrder: 'sequential',
        signers: [
          { name: 'Larry Landlord', email: 'larry@example.com', role: 'landlord' },
          { name: 'Tina Tenant', email: 'tina@example.com', role: 'tenant' },
        ],
        prefill: { rent: '1200 EUR' },
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    const signingRequest = sent.body;
    const [tenant, landlord] = signingRequest.signers;
    expect([tenant.email, landlord.email]).to.deep.equal(['tina@example.com', 'larry@example.com']);

    // The PDF the signers see has no raw tag left in its text, and its fields are blank paper.
    const original = path.join(dir, 'original.pdf');
    fs.writeFileSync(original, (await request('GET', `/api/v1/documents/${signingRequest.documentId}/file`)).bytes);
    expect(execFileSync('pdftotext', [original, '-']).toString()).to.not.contain('{{');
    for (const field of template.fields as TemplateField[])
      expect(inkedPixels(original, field.page, field), `${field.role} ${field.type} ${field.label} is blank`).to.equal(0);

    // The tenant, on a phone: every field marked on the page, Sign refused until each required one is filled.
    const phone = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
    const first = await openSigningPage(request, baseUrl, signingRequest.id, tenant.id, phone);
    const tina = first.page;
    expect(await tina.locator('.mark').count()).to.equal(6); // rent, employer, rules, initials, signature, date
    expect(await tina.locator('.mark.fixed').allTextContents()).to.have.members(['1200 EUR', new Date().toISOString().slice(0, 10)]);
    const rent = tina.getByRole('textbox', { name: /^Rent \(page 1\)/ });
    expect([await rent.inputValue(), await rent.isEditable()]).to.deep.equal(['1200 EUR', false]);
    const sign = tina.getByRole('button', { name: 'Sign', exact: true });
    await tina.getByLabel('I agree to sign this document electronically').check();
    expect(await sign.isDisabled()).to.equal(true);
    expect(await tina.locator('#missing').textContent()).to.equal(
      'Still to fill in: your signature, your initials, Employer (page 1), Rules (page 1): tick it.',
    );
    await drawOn(tina, /^Signature pad/);
    await drawOn(tina, /^Initials pad/);
    await tina.getByLabel('Employer (page 1) (required)').fill('Acme Widgets Ltd');
    expect(await sign.isDisabled(), 'the required checkbox is not ticked yet').to.equal(true);
    await tina.getByLabel('Rules (page 1) (required)').check();
    expect(await sign.isEnabled()).to.equal(true);
    expect(await tina.locator('.mark.empty').count()).to.equal(0);
    expect(await tina.locator('.mark.signature img').count()).to.equal(1);
    await tina.screenshot({ path: path.join(screenshots, 'template-tenant-ready.png'), fullPage: true });
    await sign.click();
    await tina.locator('#outcome').getByRole('heading', { name: 'You have signed' }).waitFor();
    await first.context.close();

    // The landlord's turn comes after the tenant's, on a desktop.
    await eventually(async () => {
      const view = await request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(view.body.progress.waitingFor).to.deep.equal([landlord.id]);
    }, WAIT_MS);
    const second = await openSigningPage(request, baseUrl, signingRequest.id, landlord.id, { viewport: { width: 1280, height: 900 } });
    const larry = second.page;
    expect(await larry.locator('.mark').count()).to.equal(3); // keys, signature, initials
    await larry.getByLabel('I agree to sign this document electronically').check();
    await drawOn(larry, /^Signature pad/);
    await drawOn(larry, /^Initials pad/);
    const larrySign = larry.getByRole('button', { name: 'Sign', exact: true });
    expect(await larrySign.isDisabled(), 'the keys checkbox is required').to.equal(true);
    await larry.locator('.mark.checkbox').click(); // a mark on the page leads to its control
    expect(await larry.evaluate(() => document.activeElement?.id)).to.equal(await larry.getByLabel('Keys (page 2) (required)').getAttribute('id'));
    await larry.getByLabel('Keys (page 2) (required)').check();
    await larry.screenshot({ path: path.join(screenshots, 'template-landlord-ready.png'), fullPage: true });
    await larrySign.click();
    await larry.locator('#outcome').getByRole('heading', { name: 'You have signed' }).waitFor();
    await second.context.close();

    // Completed and sealed: each value inside its field, no raw tag, a valid signature.
    await eventually(async () => expect((await request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);
    const sealed = path.join(dir, 'sealed.pdf');
    fs.writeFileSync(sealed, (await request('GET', `/api/v1/signatures/${signingRequest.id}/document`)).bytes);
    expect(execFileSync('pdfsig', [sealed], { timeout: WAIT_MS }).toString()).to.contain('Signature is Valid');
    expect(execFileSync('pdftotext', [sealed, '-']).toString()).to.not.contain('{{');
    const today = new Date().toISOString().slice(0, 10);
    const expectWords = (pageNumber: number, field: TemplateField, words: string[]) => {
      const found = wordsOn(sealed, pageNumber);
      for (const text of words)
        expect(
          found.some((word) => word.text === text && inside(word, field)),
          `${text} inside ${field.role} ${field.type} ${field.label}`,
        ).to.equal(true);
    };
    expectWords(1, fieldOf('tenant', 'text', 'rent'), ['1200', 'EUR']);
    expectWords(1, fieldOf('tenant', 'text', 'employer'), ['Acme', 'Widgets', 'Ltd']);
    expectWords(1, fieldOf('tenant', 'checkbox', 'rules'), ['X']);
    expectWords(2, fieldOf('tenant', 'date'), [today]);
    expectWords(2, fieldOf('landlord', 'checkbox', 'keys'), ['X']);
    // Drawn signatures and initials: ink where the original is blank paper.
    for (const field of [fieldOf('tenant', 'initials'), fieldOf('tenant', 'signature'), fieldOf('landlord', 'signature'), fieldOf('landlord', 'initials')]) {
      expect(inkedPixels(sealed, field.page, field), `ink in ${field.role} ${field.type}`).to.be.greaterThan(20);
    }
    // The words after a tag stayed where they were printed.
    const uploaded = path.join(dir, 'uploaded.pdf');
    fs.writeFileSync(uploaded, pdf);
    const after = (file: string) => wordsOn(file, 1).filter((word) => ['per', 'month'].includes(word.text));
    expect(after(sealed)).to.have.length(2);
    after(sealed).forEach((word, index) => expect(Math.abs(word.xMin - after(uploaded)[index].xMin), word.text).to.be.below(0.01));
  });
});
