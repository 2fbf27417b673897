import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeViolations, seriousViolations } from '../support/axe';
import { desktop, expectNoSideways, launchChromium, phone, useChromium, watchPage } from '../support/browser';
import { completedRequest, createSigningRequest, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';
import { uploadDocument } from '../support/documents';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const screenshots = path.join('test-output', 'screenshots');
const expectedCsp =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; worker-src 'self' blob:; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// The link's host is the configured publicUrl, which under test (PORT=0) has no real port: open its path on the running system.
const linkFor = async ({ request, system }: Account, requestId: string, signerId: string) =>
  `${system.url}/sign/${tokenOf(await signingLinkOf(request, requestId, signerId))}`;

async function typeSignatureAndConsent(page: Page) {
  await page.getByLabel('Type').check();
  await page.getByLabel('Your full name').fill('Ada Lovelace');
  await page.getByLabel('I agree to sign this document electronically').check();
}

describe('GET /sign/:token (the signing page, in headless Chromium on a phone)', function () {
  this.timeout(90_000);
  let browser: Browser;
  let context: BrowserContext;
  let problems: string[];

  before(async () => {
    fs.mkdirSync(screenshots, { recursive: true });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    problems = [];
  });

  afterEach(async () => {
    await context.close();
    expect(problems, 'console errors and CSP violations').to.deep.equal([]);
  });

  /** A fresh page that records console errors and uncaught exceptions (CSP violations are console errors). */
  async function openPage(url: string) {
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const response = await page.goto(url);
    return { page, response: response! };
  }

  const outcome = (page: Page) => page.locator('#outcome');

  it('signer 1 draws and signs, signer 2 declines with a reason; the API shows both', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const [first, second] = signingRequest.signers;

    const { page, response } = await openPage(await linkFor(account, signingRequest.id, first.id));
    expect(response.status()).to.equal(200);
    const headers = response.headers();
    expect(headers['content-security-policy']).to.equal(expectedCsp);
    expect(headers['referrer-policy']).to.equal('no-referrer');
    expect(headers['x-content-type-options']).to.equal('nosniff');
    expect(headers['cache-control']).to.equal('no-store');

    await page.getByRole('heading', { name: 'Services agreement' }).waitFor();
    expect(await page.locator('.sender').textContent()).to.contain(account.account.email);
    expect(await page.locator('#message').textContent()).to.equal('Please sign by Friday.');
    await page.locator('#pages[data-rendered="2"]').waitFor();
    expect(await page.getByRole('img', { name: 'Page 2 of 2' }).isVisible()).to.equal(true);

    const sign = page.getByRole('button', { name: 'Sign', exact: true });
    expect(await sign.isDisabled()).to.equal(true);
    await page.getByLabel('I agree to sign this document electronically').check();
    expect(await sign.isDisabled(), 'no signature yet').to.equal(true);

    const pad = page.getByRole('img', { name: /Signature pad/ });
    await pad.scrollIntoViewIfNeeded();
    const box = (await pad.boundingBox())!;
    expect(box.width).to.be.within(300, 390);
    await page.mouse.move(box.x + 30, box.y + 120);
    await page.mouse.down();
    for (let step = 1; step <= 20; step++) await page.mouse.move(box.x + 30 + step * 12, box.y + 120 - Math.sin(step / 3) * 50);
    await page.mouse.up();
    expect(await sign.isEnabled()).to.equal(true);
    await page.screenshot({ path: path.join(screenshots, 'ready-to-sign.png'), fullPage: true });
    await sign.click();

    await outcome(page).getByText('Your signature is recorded. Once everyone has signed, your copy of the sealed PDF arrives by e-mail.').waitFor();
    await page.screenshot({ path: path.join(screenshots, 'signed.png'), fullPage: true });

    const { page: secondPage } = await openPage(await linkFor(account, signingRequest.id, second.id));
    await secondPage.getByRole('button', { name: 'Decline', exact: true }).click();
    const confirm = secondPage.getByRole('button', { name: 'Decline to sign' });
    expect(await confirm.isDisabled(), 'a reason is required').to.equal(true);
    await secondPage.getByLabel(/Why are you declining/).fill('The fee is wrong');
    await confirm.click();
    await outcome(secondPage).getByText('You declined to sign this document.').waitFor();
    await secondPage.screenshot({ path: path.join(screenshots, 'declined.png'), fullPage: true });

    const got = await eventually(async () => {
      const response = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(response.body.status).to.equal('declined');
      return response.body;
    });
    expect(got.signers[0]).to.include({ status: 'signed' });
    expect(got.signers[1]).to.include({ status: 'declined', declineReason: 'The fee is wrong' });
  });

  it('a typed signature signs as well', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const { page } = await openPage(await linkFor(account, signingRequest.id, signingRequest.signers[0].id));
    await typeSignatureAndConsent(page);
    await page.getByRole('button', { name: 'Sign', exact: true }).click();
    await outcome(page).getByRole('heading', { name: 'You have signed' }).waitFor();
  });

  it('several documents: shows each after the other with its fields marked on it, and signs them all', async () => {
    const account = await createTestAccount();
    const upload = async (fileName: string, pages: string[]) => (await uploadDocument(account.request, { fileName, pages })).id;
    const contract = await upload('contract.pdf', ['Contract']);
    const annex = await upload('annex.pdf', ['Annex one', 'Annex two']);
    const created = await account.request('POST', '/api/v1/signatures', {
      json: {
        documents: [{ document_id: contract }, { document_id: annex }],
        title: 'Contract with annex',
        signers: [
          {
            name: 'Ada Lovelace',
            email: 'ada@example.com',
            fields: [
              { document_id: contract, page: 1, x: 50, y: 600, width: 200, height: 40, type: 'signature' },
              { document_id: annex, page: 2, x: 50, y: 500, width: 200, height: 30, type: 'text' },
            ],
          },
        ],
      },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const { page } = await openPage(await linkFor(account, created.body.id, created.body.signers[0].id));
    await page.locator('#pages[data-rendered="3"]').waitFor();
    expect(await page.getByRole('heading', { name: 'Documents (2)' }).isVisible()).to.equal(true);
    expect(await page.getByRole('heading', { name: '1 of 2: contract.pdf' }).isVisible()).to.equal(true);
    expect(await page.getByRole('heading', { name: '2 of 2: annex.pdf' }).isVisible()).to.equal(true);
    // Each field's mark is on its own document's page, and nowhere else.
    const marksOn = (documentId: string, pageNumber: number) => page.locator(`[data-document="${documentId}"] .sheet[data-page="${pageNumber}"] .mark`).count();
    expect([await marksOn(contract, 1), await marksOn(annex, 1), await marksOn(annex, 2)]).to.deep.equal([1, 0, 1]);
    await page.screenshot({ path: path.join(screenshots, 'several-documents.png'), fullPage: true });

    await page.getByRole('textbox', { name: 'Text (page 2 of annex.pdf)' }).fill('Chief Engineer');
    await typeSignatureAndConsent(page);
    await page.getByRole('button', { name: 'Sign', exact: true }).click();
    await outcome(page)
      .getByRole('heading', { name: /You have signed|Everyone has signed/ })
      .waitFor();
    await eventually(async () => {
      const response = await account.request('GET', `/api/v1/signatures/${created.body.id}`);
      expect(response.body.status).to.equal('completed');
      expect(response.body.documents.map((document: { sealedSha256: string | null }) => typeof document.sealedSha256)).to.deep.equal(['string', 'string']);
    }, 60_000);
  });

  it('an approver approves on its page, then a viewer’s page records the view once the documents are shown', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, {
      signers: [
        { name: 'Ann Approver', email: 'ann@example.com', recipientType: 'approver', routingOrder: 1 },
        { name: 'Vic Viewer', email: 'vic@example.com', recipientType: 'viewer', routingOrder: 2 },
      ],
    });
    const [ann, vic] = signingRequest.signers;

    // The viewer's turn has not come: the page says so and records nothing.
    const { page: early } = await openPage(await linkFor(account, signingRequest.id, vic.id));
    await outcome(early).getByText('It is not your turn yet').waitFor();

    const { page } = await openPage(await linkFor(account, signingRequest.id, ann.id));
    await page.locator('#pages[data-rendered="2"]').waitFor();
    expect(await page.getByRole('heading', { name: 'Your approval' }).isVisible()).to.equal(true);
    expect(await page.getByRole('img', { name: /Signature pad/ }).isVisible(), 'an approver draws nothing').to.equal(false);
    expect(await page.getByRole('button', { name: 'Decline', exact: true }).isVisible()).to.equal(true);
    await page.screenshot({ path: path.join(screenshots, 'approver.png'), fullPage: true });
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await outcome(page).getByRole('heading', { name: 'You have approved' }).waitFor();

    await eventually(async () => {
      const response = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(response.body.progress.waitingFor).to.deep.equal([vic.id]);
    });
    const { page: viewer } = await openPage(await linkFor(account, signingRequest.id, vic.id));
    await viewer.locator('#pages[data-rendered="2"]').waitFor();
    await outcome(viewer).getByRole('heading', { name: 'You have read the documents' }).waitFor();
    expect(await viewer.getByRole('img', { name: 'Page 2 of 2' }).isVisible(), 'the documents stay to read').to.equal(true);
    await viewer.screenshot({ path: path.join(screenshots, 'viewer.png'), fullPage: true });
    const done = await completedRequest(account.request, signingRequest.id);
    expect(done.signers.map((signer: { status: string }) => signer.status)).to.deep.equal(['approved', 'viewed']);
  });

  it('sequential: the second signer sees "not your turn" until the first has signed', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, { signingOrder: 'sequential' });
    const { page } = await openPage(await linkFor(account, signingRequest.id, signingRequest.signers[1].id));
    await outcome(page).getByRole('heading', { name: 'It is not your turn yet' }).waitFor();
    expect(await page.locator('#sign').isHidden()).to.equal(true);
    await page.screenshot({ path: path.join(screenshots, 'not-your-turn.png'), fullPage: true });
  });

  it('an expired link: the expired end state (the PDF answers 410)', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const url = await linkFor(account, signingRequest.id, signingRequest.signers[0].id);
    await account
      .db('signer_tokens')
      .where({ signer_id: signingRequest.signers[0].id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const { page } = await openPage(url);
    await outcome(page).getByText('This signing link has expired. Ask the sender for a new one.').waitFor();
    expect(await page.locator('#sign').isHidden()).to.equal(true);
    problems = problems.filter((problem) => !problem.includes('status of 410'));
  });

  it('a cancelled request: the cancelled end state', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const url = await linkFor(account, signingRequest.id, signingRequest.signers[0].id);
    expect((await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: {} })).status).to.equal(200);
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('cancelled'));
    const { page } = await openPage(url);
    await outcome(page).getByRole('heading', { name: 'This request was cancelled' }).waitFor();
  });

  it('an API refusal (409) is shown in the alert region, then the page shows what happened', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const { page } = await openPage(await linkFor(account, signingRequest.id, signingRequest.signers[0].id));
    await typeSignatureAndConsent(page);
    const other = await fetch(`${await linkFor(account, signingRequest.id, signingRequest.signers[1].id)}/decline`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'No' }),
    });
    expect(other.status).to.equal(200);
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('declined'));
    await page.getByRole('button', { name: 'Sign', exact: true }).click();
    await page.getByRole('alert').getByText('This signing request is declined.').waitFor();
    await outcome(page).getByRole('heading', { name: 'This request was declined' }).waitFor();
    problems = problems.filter((problem) => !problem.includes('status of 409'));
  });

  it('an unknown token: 404 and a clear "link not valid" page', async () => {
    const account = await createTestAccount();
    const { page, response } = await openPage(`${account.system.url}/sign/${'x'.repeat(43)}`);
    expect(response.status()).to.equal(404);
    expect(response.headers()['content-security-policy']).to.equal(expectedCsp);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('This signing link is not valid');
    problems = problems.filter((problem) => !problem.includes(`/sign/${'x'.repeat(43)}`));
  });

  it('serves its assets and nothing else under /sign-assets/', async () => {
    const account = await createTestAccount();
    const base = account.system.url!;
    const script = await fetch(`${base}/sign-assets/signing.js`);
    expect(script.status).to.equal(200);
    expect(script.headers.get('content-type')).to.match(/^text\/javascript/);
    expect((await fetch(`${base}/sign-assets/pdf.worker.min.mjs`)).status).to.equal(200);
    const pad = await fetch(`${base}/sign-assets/signature-pad.min.mjs`);
    expect([pad.status, pad.headers.get('content-type')]).to.deep.equal([200, 'text/javascript; charset=utf-8']);
    expect((await fetch(`${base}/sign-assets/page.ts`)).status).to.equal(404);
    expect((await fetch(`${base}/sign-assets/constructor`)).status).to.equal(404);
    expect((await fetch(`${base}/sign-assets/..%2Fpage.ts`)).status).to.equal(404);
  });
});

describe('the signing page at 375 and 1280 px: why Sign waits, a readable zoom, the typed name, the outcome (headless Chromium, axe)', function () {
  this.timeout(120_000);
  const browser = useChromium();
  const consentMissing = '“I agree to sign this document electronically”: tick it';
  const outcome = (page: Page) => page.locator('#outcome');

  /** A page that records console errors, off-site requests and every answer of 400 or more (a favicon's 404 among them). */
  async function openPage(context: BrowserContext, url: string, problems: string[]) {
    const page = watchPage(await context.newPage(), new URL(url).origin, problems, { alsoAllowed: ['blob:'] });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(url);
    return page;
  }

  const expectAxeClean = async (page: Page, where: string) => {
    const violations = describeViolations(where, await seriousViolations(page));
    expect(violations, violations.join('\n')).to.deep.equal([]);
  };

  /** A one-page A4 PDF whose only text is one line of 11 pt Helvetica capitals. */
  async function elevenPointPdf() {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    pdf.addPage([595, 842]).drawText('THE TENANT PAYS THE RENT ON THE FIRST DAY', { x: 50, y: 700, size: 11, font });
    return Buffer.from(await pdf.save());
  }

  /** The first page as drawn: the CSS size of 11 pt at its scale, its canvas pixels per CSS pixel, and the text's ink height in CSS px. */
  const measureFirstPage = (page: Page) =>
    page.locator('#pages .sheet[data-page="1"] canvas').evaluate((canvas: HTMLCanvasElement) => {
      const { width, height } = canvas;
      const pixels = canvas.getContext('2d')!.getImageData(0, 0, width, height).data;
      let top = -1;
      let bottom = -1;
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          const at = (y * width + x) * 4;
          if (pixels[at] + pixels[at + 1] + pixels[at + 2] < 384) {
            if (top < 0) top = y;
            bottom = y;
            break;
          }
        }
      }
      const ratio = width / canvas.clientWidth;
      return { elevenPoints: (11 * canvas.clientWidth) / 595, ratio, inkHeight: (bottom - top + 1) / ratio };
    });

  async function zoomTo(page: Page, level: string) {
    for (let click = 0; click < 6 && (await page.locator('#zoom-level').textContent()) !== level; click++) {
      await page.getByRole('button', { name: 'Zoom in' }).click();
    }
    expect(await page.locator('#zoom-level').textContent()).to.equal(level);
    await page.locator('#pages[aria-busy="false"]').waitFor();
  }

  for (const [name, options] of [
    ['375 px', phone],
    ['1280 px', desktop],
  ] as const) {
    describe(`at ${name}`, () => {
      let context: BrowserContext;
      let problems: string[];

      beforeEach(async () => {
        context = await browser().newContext(options);
        problems = [];
      });

      afterEach(async () => {
        await context.close();
        expect(problems, 'console errors, failed requests and CSP violations').to.deep.equal([]);
      });

      it('lists every reason Sign is disabled, the unticked consent too; the typed signature starts as the signer’s name', async () => {
        const account = await createTestAccount();
        const { signingRequest } = await createSigningRequest(account.request);
        const page = await openPage(context, await linkFor(account, signingRequest.id, signingRequest.signers[0].id), problems);
        await page.locator('#pages[data-rendered="2"][aria-busy="false"]').waitFor();
        const sign = page.getByRole('button', { name: 'Sign', exact: true });
        const missing = page.locator('#missing');
        expect(await missing.textContent()).to.equal(`Still to fill in: your signature, ${consentMissing}.`);

        await page.getByLabel('Type').check();
        expect(await page.getByLabel('Your full name').inputValue()).to.equal('Ada Lovelace');
        expect(await page.locator('#typed-preview').textContent()).to.equal('Ada Lovelace');
        expect(await page.locator('#typed-other-name').isHidden(), 'the name the request gives').to.equal(true);
        // Only the consent is left: Sign says why it waits, beside it and in its description.
        expect(await sign.isDisabled()).to.equal(true);
        expect(await missing.textContent()).to.equal(`Still to fill in: ${consentMissing}.`);
        expect(await missing.isVisible()).to.equal(true);
        expect(await sign.getAttribute('aria-describedby')).to.equal('missing');
        await expectAxeClean(page, `Sign disabled for the consent (${name})`);
        await page.screenshot({ path: path.join(screenshots, `consent-missing-${options.viewport!.width}.png`), fullPage: true });

        await page.getByLabel('I agree to sign this document electronically').check();
        expect(await sign.isEnabled()).to.equal(true);
        expect(await missing.isHidden()).to.equal(true);
        await page.getByLabel('Your full name').fill('');
        expect(await missing.textContent()).to.equal('Still to fill in: your signature.');
        expect(await sign.isDisabled()).to.equal(true);
      });

      it('shows 11 pt text at 11 CSS px or more once zoomed, drawn at the device’s pixel ratio, the page never wider than the screen; the favicon is served', async () => {
        const account = await createTestAccount();
        const pdf = await elevenPointPdf();
        const uploaded = await uploadDocument(account.request, { fileName: 'lease.pdf', pdf });
        const created = await account.request('POST', '/api/v1/signatures', {
          json: { document_id: uploaded.id, title: 'Lease', signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] },
        });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        const page = await openPage(context, await linkFor(account, created.body.id, created.body.signers[0].id), problems);
        await page.locator('#pages[data-rendered="1"][aria-busy="false"]').waitFor();

        const fitted = await measureFirstPage(page);
        expect(await page.getByRole('button', { name: 'Fit to width' }).getAttribute('aria-pressed')).to.equal('true');
        expect(fitted.ratio).to.be.closeTo(options.deviceScaleFactor ?? 1, 0.01);
        if (name === '375 px') expect(fitted.elevenPoints, 'fitted to a phone, 11 pt is too small to read').to.be.below(8);

        await zoomTo(page, '100%');
        const zoomed = await measureFirstPage(page);
        expect(zoomed.elevenPoints).to.be.closeTo((11 * 96) / 72, 0.2);
        expect(zoomed.elevenPoints).to.be.at.least(11);
        // The capitals' ink is about 0.72 of the font size: the text itself is drawn that large, and sharp.
        expect(zoomed.inkHeight / 0.72).to.be.within(11, 17);
        expect(zoomed.ratio).to.be.closeTo(options.deviceScaleFactor ?? 1, 0.01);
        expect(await page.getByRole('button', { name: 'Fit to width' }).getAttribute('aria-pressed')).to.equal('false');
        await expectNoSideways(page);
        const pages = page.getByRole('region', { name: 'Pages' });
        if (name === '375 px') {
          expect(await pages.evaluate((region) => region.scrollWidth > region.clientWidth), 'the page scrolls sideways inside its frame').to.equal(true);
        }
        await expectAxeClean(page, `zoomed to 100% (${name})`);
        await page.screenshot({ path: path.join(screenshots, `zoomed-${options.viewport!.width}.png`), fullPage: true });

        await page.getByRole('button', { name: 'Fit to width' }).click();
        await page.locator('#pages[aria-busy="false"]').waitFor();
        expect((await measureFirstPage(page)).elevenPoints).to.be.closeTo(fitted.elevenPoints, 0.5);

        const icon = (await page.locator('link[rel="icon"]').getAttribute('href'))!;
        const served = await fetch(new URL(icon, page.url()));
        expect([served.status, served.headers.get('content-type')]).to.deep.equal([200, 'image/svg+xml']);
      });

      it('signs with another name than the request’s, and the certificate of completion says so; the outcome says it once, with the copy by e-mail', async () => {
        const account = await createTestAccount();
        const { signingRequest } = await createSigningRequest(account.request);
        const [ada, alan] = signingRequest.signers;
        const page = await openPage(context, await linkFor(account, signingRequest.id, alan.id), problems);
        await page.locator('#pages[data-rendered="2"][aria-busy="false"]').waitFor();
        await page.getByLabel('Type').check();
        expect(await page.getByLabel('Your full name').inputValue()).to.equal('Alan Turing');
        await page.getByLabel('Your full name').fill('Grace Hopper');
        const note = page.locator('#typed-other-name');
        expect(await note.textContent()).to.equal(
          'This request is addressed to Alan Turing. If you sign as “Grace Hopper”, the certificate of completion shows both names.',
        );
        await page.getByLabel('Your full name').fill('  alan   TURING ');
        expect(await note.isHidden(), 'letter case and spaces make no other name').to.equal(true);
        await page.getByLabel('Your full name').fill('Grace Hopper');
        await page.getByLabel('I agree to sign this document electronically').check();
        await expectAxeClean(page, `another name typed (${name})`);
        await page.getByRole('button', { name: 'Sign', exact: true }).click();

        await outcome(page).getByRole('heading', { name: 'You have signed' }).waitFor();
        expect(await outcome(page).innerText()).to.equal(
          'You have signed\n\nYour signature is recorded. Once everyone has signed, your copy of the sealed PDF arrives by e-mail.',
        );
        expect(await page.getByText('You have signed').count(), '“You have signed” once').to.equal(1);
        await expectAxeClean(page, `signed (${name})`);
        await page.screenshot({ path: path.join(screenshots, `signed-${options.viewport!.width}.png`), fullPage: true });

        const adaSigns = await fetch(`${await linkFor(account, signingRequest.id, ada.id)}/sign`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } }),
        });
        expect(adaSigns.status).to.equal(200);
        await eventually(async () => {
          const response = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
          expect(response.body.status).to.equal('completed');
        }, 60_000);
        const sealed = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`);
        expect(sealed.status).to.equal(200);
        const certificate = execFileSync('pdftotext', ['-layout', '-', '-'], { input: sealed.bytes }).toString().split('Certificate of completion')[1];
        expect(certificate).to.match(/Signed as\s+"Grace Hopper" \(the request named Alan Turing\)/);
        expect(certificate.match(/Signed as /g), 'Ada signed as herself').to.have.length(1);

        await page.reload();
        await outcome(page).getByRole('heading', { name: 'Everyone has signed' }).waitFor();
        expect(await outcome(page).innerText()).to.equal('Everyone has signed\n\nThe request is complete: your copy of the sealed PDF arrives by e-mail.');
        await expectAxeClean(page, `completed (${name})`);
      });
    });
  }
});
