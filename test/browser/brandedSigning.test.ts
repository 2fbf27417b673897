import { expect } from 'chai';
import { describeViolations, seriousViolations } from '../support/axe';
import { dataUrl, hostileSvg } from '../support/branding';
import { desktopContext, useChromium, phoneContext, watchPage } from '../support/browser';
import { createSigningRequest, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount, useSharedSystem } from '../support/system';

describe('the signing page in an account’s brand (headless Chromium)', function () {
  this.timeout(120_000);
  useSharedSystem();
  const browser = useChromium();

  async function brandedAccount() {
    const account = await createTestAccount();
    // The hostile SVG as sanitized: the page loads it, and nothing in it runs or loads anything.
    const set = await account.request('PATCH', '/api/v1/account/branding', {
      json: {
        name: 'Acme Rentals',
        accentColor: '#1d4ed8',
        emailFooter: 'Acme Rentals Ltd, Leith.',
        supportEmail: 'help@acme.example',
        logo: dataUrl('image/svg+xml', Buffer.from(hostileSvg)),
      },
    });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    return account;
  }

  for (const [viewport, open] of [
    ['phone', phoneContext],
    ['desktop', desktopContext],
  ] as const) {
    it(`${viewport}: the code form and the document carry the brand and no "Signet"; axe finds no serious violation`, async () => {
      const account = await brandedAccount();
      const { signingRequest } = await createSigningRequest(account.request, {
        signers: [{ name: 'Ada Lovelace', email: 'ada@example.com', verification: { method: 'access_code', code: 'Kite-42' } }],
      });
      const link = `${account.system.url}/sign/${tokenOf(await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id))}`;
      const context = await open(browser());
      const problems: string[] = [];
      const page = watchPage(await context.newPage(), account.system.url!, problems, { alsoAllowed: ['blob:'] });
      try {
        await page.goto(link);
        await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
        await page.getByRole('img', { name: 'Acme Rentals' }).waitFor();
        expect(await page.title()).to.equal('Sign a document · Acme Rentals');
        expect(await page.evaluate(() => document.documentElement.outerHTML)).not.to.include('Signet');
        // The accent colour reached the button through the hashed inline style.
        expect(await page.getByRole('button', { name: 'Continue' }).evaluate((button) => getComputedStyle(button).backgroundColor)).to.equal(
          'rgb(29, 78, 216)',
        );
        expect(await page.getByRole('img', { name: 'Acme Rentals' }).evaluate((image) => (image as HTMLImageElement).naturalWidth)).to.be.above(0);
        expect(describeViolations('the branded code form', await seriousViolations(page))).to.deep.equal([]);

        await page.getByLabel('Code').fill('Kite-42');
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByRole('heading', { name: signingRequest.title }).waitFor();
        await page.locator('#pages[data-rendered="2"]').waitFor();
        expect(await page.title()).to.equal(`${signingRequest.title} · Acme Rentals`);
        expect(await page.evaluate(() => document.documentElement.outerHTML)).not.to.include('Signet');
        await page.getByRole('link', { name: 'help@acme.example' }).waitFor();
        expect(describeViolations('the branded signing page', await seriousViolations(page))).to.deep.equal([]);
        expect(problems).to.deep.equal([]);
      } finally {
        await context.close();
      }
    });
  }
});
