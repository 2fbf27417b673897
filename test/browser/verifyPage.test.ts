import { expect } from 'chai';
import { sealPdf } from '../../src/pdf/seal';
import { generateSelfSignedP12 } from '../../src/pdf/sealCertificate';
import { expectAccessible } from '../support/axe';
import { desktopContext, expectNoSideways, phoneContext, useChromium, watchPage } from '../support/browser';
import { makePdf } from '../support/pdfs';
import { sharedSystem } from '../support/system';

// Issue #29, part 3: the page at /verify, in headless Chromium. A PDF chosen or dropped is sent to
// POST /api/v1/verify and the answer read out; nothing loads from elsewhere, and axe finds no serious
// or critical violation before or after.

describe('the /verify page', function () {
  this.timeout(120_000);
  const browser = useChromium();
  let baseUrl: string;

  before(async function () {
    this.timeout(120_000);
    baseUrl = (await sharedSystem()).url!;
  });

  it('is served with a strict Content-Security-Policy and no referrer', async () => {
    const response = await fetch(`${baseUrl}/verify`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/html/);
    expect(response.headers.get('content-security-policy')).to.contain("default-src 'none'").and.contain("script-src 'self'");
    expect(response.headers.get('referrer-policy')).to.equal('no-referrer');
  });

  for (const [name, open] of [
    ['phone', phoneContext],
    ['desktop', desktopContext],
  ] as const) {
    it(`on a ${name}: a chosen unsigned PDF reads "Not signed"; accessible before and after`, async () => {
      const context = await open(browser());
      const problems: string[] = [];
      const page = watchPage(await context.newPage(), baseUrl, problems);
      try {
        await page.goto(`${baseUrl}/verify`);
        await page.getByRole('heading', { name: 'Verify a sealed PDF' }).waitFor();
        await expectAccessible(page, `/verify (${name})`);
        await expectNoSideways(page);
        await page.getByLabel('PDF to verify').setInputFiles({ name: 'plain.pdf', mimeType: 'application/pdf', buffer: await makePdf() });
        await page.getByRole('button', { name: 'Verify', exact: true }).click();
        await page.getByRole('status').getByRole('heading', { name: 'Not signed' }).waitFor();
        await expectAccessible(page, `/verify answered (${name})`);
        await expectNoSideways(page);
        expect(problems).to.deep.equal([]);
      } finally {
        await context.close();
      }
    });
  }

  it('a PDF dropped on the form, signed by another certificate, reads "Signed, but not by Signet" with its signature, its time in UTC', async () => {
    // A browser far from UTC: the page shows the console's UTC times, not the reader's local ones.
    const context = await desktopContext(browser(), { timezoneId: 'Pacific/Auckland' });
    const problems: string[] = [];
    const page = watchPage(await context.newPage(), baseUrl, problems);
    try {
      const signed = await sealPdf(await makePdf(['Elsewhere']), { p12: await generateSelfSignedP12(), password: '' });
      await page.goto(`${baseUrl}/verify`);
      const dataTransfer = await page.evaluateHandle((bytes) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([new Uint8Array(bytes)], 'elsewhere.pdf', { type: 'application/pdf' }));
        return transfer;
      }, Array.from(signed));
      await page.dispatchEvent('#verify-form', 'drop', { dataTransfer });
      const answer = page.getByRole('status');
      await answer.getByRole('heading', { name: 'Signed, but not by Signet' }).waitFor();
      const verified = await (
        await fetch(`${baseUrl}/api/v1/verify`, { method: 'POST', headers: { 'Content-Type': 'application/pdf' }, body: new Uint8Array(signed) })
      ).json();
      const signedAt = `${verified.signatures[0].signedAt.slice(0, 16).replace('T', ' ')} UTC`;
      expect(await answer.textContent())
        .to.contain('Signature checks out')
        .and.contain('Certificate SHA-256')
        .and.contain(`Signed at${signedAt}`);
      await expectAccessible(page, '/verify answered sealed_by_other');
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
