import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { Browser, BrowserContextOptions, ConsoleMessage, Page, Response } from 'playwright-core';
import { describeViolations, seriousViolations } from '../support/axe';
import { desktop, expectNoSideways, phone, useChromium, watchPage } from '../support/browser';
import { makePdf } from '../support/pdfs';
import { completedRequest, createSigningRequest, drawnSignature, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

const place = (y: number, extra: Record<string, unknown>) => ({ page: 1, x: 50, y, width: 300, height: 40, ...extra });

// An image drawn on the page, an attachment carried with it, and an attachment asked for only when a box is ticked.
const fields = [
  place(780, { type: 'signature' }),
  place(720, { type: 'image', label: 'Company stamp' }),
  place(660, { type: 'attachment', label: 'Proof of address' }),
  place(600, { type: 'checkbox', label: 'Has guarantor', required: false }),
  place(540, { type: 'attachment', label: 'Guarantor letter', showWhen: { field: 'Has guarantor', is: 'filled' } }),
];

const stamp = { name: 'stamp.png', mimeType: 'image/png', buffer: Buffer.from(drawnSignature.split(',')[1], 'base64') };
const notes = { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an image') };
// The upload refused on purpose logs its 4xx in the console.
const refusedUpload = (message: ConsoleMessage) => message.location().url.endsWith('/uploads') && /status of 4\d\d/.test(message.text());

interface Uploaded {
  id: string;
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** A signer's page of the upload form, drawn; `uploads` collects the server's answer for each file it took, by its name. */
async function openForm(browser: Browser, options: BrowserContextOptions) {
  const account = await createTestAccount();
  const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Grace Hopper', email: 'grace@example.com', fields }] });
  const link = await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id);
  const context = await browser.newContext(options);
  const problems: string[] = [];
  const page: Page = watchPage(await context.newPage(), account.system.url!, problems, { alsoAllowed: ['blob:'], expectedError: refusedUpload });
  const uploads = new Map<string, Uploaded>();
  page.on('response', async (response: Response) => {
    if (!response.url().endsWith('/uploads') || !response.ok()) return;
    const uploaded: Uploaded = await response.json();
    uploads.set(uploaded.fileName, uploaded);
  });
  await page.goto(`${account.system.url}/sign/${tokenOf(link)}`);
  await page.locator('#pages[data-rendered]').waitFor();
  return { account, signingRequest, context, page, problems, uploads, form: page.locator('#field-list') };
}

describe('the signing page takes image and attachment fields: uploaded when chosen, sent by id (headless Chromium, axe)', function () {
  this.timeout(120_000);
  const browser = useChromium();

  it('375 px: a wrong file is refused beside its field, Sign waits for an upload, a hidden field sends nothing, and the API has the uploads', async () => {
    const { account, signingRequest, context, page, problems, uploads, form } = await openForm(browser(), phone);
    const stampInput = form.getByLabel(/^Company stamp \(page 1\) \(required\)/);
    const proofInput = form.getByLabel(/^Proof of address \(page 1\) \(required\)/);
    expect(await stampInput.getAttribute('type')).to.equal('file');
    expect(await stampInput.getAttribute('accept')).to.equal('image/png,image/jpeg');
    expect(await proofInput.getAttribute('accept')).to.equal('application/pdf,image/png,image/jpeg');
    expect(await page.locator('.mark[data-field="1"]').textContent(), 'the empty image box on the page').to.equal('Company stamp');
    expect(await page.locator('.mark[data-field="2"]').getAttribute('aria-label')).to.equal('Proof of address (page 1): attachment field, empty');

    await page.getByLabel('Type').check();
    await page.getByLabel('Your full name').fill('Grace Hopper');
    await page.getByLabel('I agree to sign this document electronically').check();
    const sign = page.getByRole('button', { name: 'Sign', exact: true });
    expect(await page.locator('#missing').textContent()).to.equal('Still to fill in: Company stamp (page 1), Proof of address (page 1).');

    // A text file is no image: the server refuses it, and the page says so beside the field.
    await stampInput.setInputFiles(notes);
    const stampProblem = form.locator('#field-1-problem');
    await stampProblem.getByText('notes.txt was not uploaded: file must be a PDF, PNG or JPEG file.').waitFor();
    expect(await stampInput.getAttribute('aria-invalid')).to.equal('true');
    expect((await stampInput.getAttribute('aria-describedby'))!.split(' ')).to.include('field-1-problem');
    expect(await sign.isDisabled()).to.equal(true);
    // A PDF is a file the server takes, but not for an image field.
    await stampInput.setInputFiles({ name: 'stamp.pdf', mimeType: 'application/pdf', buffer: await makePdf(['A stamp']) });
    await stampProblem.getByText('stamp.pdf is a PDF: this field takes a PNG or JPEG image.').waitFor();
    expect(await page.locator('#missing').textContent()).to.contain('Company stamp (page 1)');

    await stampInput.setInputFiles(stamp);
    await form.getByText(/^stamp\.png · \d+ bytes · uploaded$/).waitFor();
    expect(await stampProblem.isVisible(), 'the refusal is gone').to.equal(false);
    expect(await stampInput.getAttribute('aria-invalid')).to.equal('false');
    await form.getByRole('img', { name: 'Preview of stamp.png' }).waitFor();
    expect(await page.locator('.mark[data-field="1"] img').getAttribute('src')).to.match(/^blob:/);

    // While a file is on its way, Sign waits for it.
    let arrive = () => {};
    const held = new Promise<void>((resolve) => (arrive = resolve));
    await page.route('**/uploads', async (route) => {
      await held;
      await route.continue();
    });
    await proofInput.setInputFiles({ name: 'old-bill.pdf', mimeType: 'application/pdf', buffer: await makePdf(['An old bill']) });
    await form.getByText('Uploading old-bill.pdf…').waitFor();
    expect(await sign.isDisabled()).to.equal(true);
    expect(await page.locator('#missing').textContent()).to.contain('Proof of address (page 1): still uploading');
    arrive();
    await form.getByText(/^old-bill\.pdf · [\d.]+ (bytes|KB) · uploaded$/).waitFor();
    await page.unroute('**/uploads');
    // Choosing again replaces the file.
    await proofInput.setInputFiles({ name: 'proof.pdf', mimeType: 'application/pdf', buffer: await makePdf(['Utility bill, 1 High Street']) });
    await form.getByText(/^proof\.pdf · [\d.]+ (bytes|KB) · uploaded$/).waitFor();
    expect(await page.locator('.mark[data-field="2"]').textContent()).to.equal('proof.pdf');

    // The guarantor's letter is asked for only while the box is ticked.
    const guarantor = form.getByRole('checkbox', { name: 'Has guarantor (page 1)' });
    const letter = form.getByLabel(/^Guarantor letter/);
    expect(await letter.isVisible()).to.equal(false);
    await guarantor.check();
    await letter.waitFor();
    expect(await page.locator('#missing').textContent()).to.contain('Guarantor letter (page 1)');
    await guarantor.uncheck();
    await letter.waitFor({ state: 'hidden' });

    expect(await sign.isEnabled()).to.equal(true);
    await expectNoSideways(page);
    const violations = describeViolations('upload fields at 375 px', await seriousViolations(page));
    expect(violations, violations.join('\n')).to.deep.equal([]);

    const signed = page.waitForRequest((request) => request.url().endsWith('/sign') && request.method() === 'POST');
    await sign.click();
    const sent = (await signed).postDataJSON();
    expect(sent.fieldValues).to.deep.equal({ 1: uploads.get('stamp.png')!.id, 2: uploads.get('proof.pdf')!.id, 3: false });
    await page
      .locator('#outcome')
      .getByText(/Your signature is recorded/)
      .waitFor();
    const got = await completedRequest(account.request, signingRequest.id);
    const filled = got.signers[0].fields.map((field: { filled?: { value: unknown } }) => field.filled?.value);
    const sha256 = createHash('sha256').update(stamp.buffer).digest('hex');
    expect(uploads.get('stamp.png')).to.include({ contentType: 'image/png', size: stamp.buffer.length, sha256 });
    expect(uploads.get('proof.pdf')).to.include({ contentType: 'application/pdf' });
    expect(filled).to.deep.equal([undefined, uploads.get('stamp.png'), uploads.get('proof.pdf'), false, null]);
    await context.close();
    expect(problems, 'console errors and off-site requests').to.deep.equal([]);
  });

  it('1280 px: an uploaded image is previewed and removed from the keyboard, and the form has no serious axe violation', async () => {
    const { context, page, problems, form } = await openForm(browser(), desktop);
    const stampInput = form.getByLabel(/^Company stamp/);
    await stampInput.setInputFiles(stamp);
    await form.getByRole('img', { name: 'Preview of stamp.png' }).waitFor();
    await expectNoSideways(page);
    const violations = describeViolations('upload fields at 1280 px', await seriousViolations(page));
    expect(violations, violations.join('\n')).to.deep.equal([]);

    await form.getByRole('button', { name: 'Remove stamp.png' }).focus();
    await page.keyboard.press('Enter');
    await form.getByRole('img', { name: 'Preview of stamp.png' }).waitFor({ state: 'hidden' });
    expect(await stampInput.evaluate((input) => input === document.activeElement), 'focus goes back to the file input').to.equal(true);
    expect(await page.locator('.mark[data-field="1"]').textContent()).to.equal('Company stamp');
    expect(await page.locator('#missing').textContent()).to.contain('Company stamp (page 1)');
    await context.close();
    expect(problems, 'console errors and off-site requests').to.deep.equal([]);
  });
});
