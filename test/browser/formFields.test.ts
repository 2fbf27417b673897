import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { describeViolations, seriousViolations } from '../support/axe';
import { desktop, expectNoSideways, phone, useChromium, watchPage } from '../support/browser';
import { completedRequest, createSigningRequest, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

const place = (y: number, extra: Record<string, unknown>) => ({ page: 1, x: 50, y, width: 300, height: 20, ...extra });

// A form of each kind of control: typed, chosen, ticked, and written by the server.
const fields = [
  place(780, { type: 'signature', height: 40 }),
  place(740, { type: 'number', label: 'Rent', min: 0, max: 10000 }),
  place(710, { type: 'number', label: 'Months', min: 1, max: 36, step: 1 }),
  place(680, { type: 'calculated', label: 'Total', formula: '{Rent} * {Months}' }),
  place(650, { type: 'email', label: 'Billing e-mail' }),
  place(620, { type: 'phone', label: 'Phone', required: false }),
  place(590, { type: 'radio', label: 'Plan', options: ['Basic', 'Pro'] }),
  place(560, { type: 'dropdown', label: 'Country', options: ['United Kingdom', 'France'] }),
  place(530, { type: 'multiSelect', label: 'Extras', options: ['Parking', 'Gym'], required: false }),
  place(500, { type: 'checkboxGroup', label: 'Rooms', options: ['Kitchen', 'Garden'] }),
  place(470, { type: 'text', label: 'Why Pro', showWhen: { field: 'Plan', is: 'equals', values: ['Pro'] } }),
  place(440, { type: 'signerName', label: 'Name' }),
  place(410, { type: 'staticText', text: 'Rent is due on the first of the month' }),
];

describe('the signing page fills every form field type, at 375 and 1280 px (headless Chromium, axe)', function () {
  this.timeout(120_000);
  const browser = useChromium();

  for (const [width, options] of [
    ['375 px', phone],
    ['1280 px', desktop],
  ] as const) {
    it(`${width}: a control per type, live conditions, totals and rules, Sign waits for them, and the API has the values typed`, async () => {
      const account = await createTestAccount();
      const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Grace Hopper', email: 'grace@example.com', fields }] });
      const link = await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id);
      const context = await browser().newContext(options);
      const problems: string[] = [];
      const page: Page = watchPage(await context.newPage(), account.system.url!, problems, { alsoAllowed: ['blob:'] });
      await page.goto(`${account.system.url}/sign/${tokenOf(link)}`);
      await page.locator('#pages[data-rendered="2"]').waitFor();
      const form = page.locator('#field-list');

      expect(await form.getByLabel(/^Name .*filled in for you/).inputValue()).to.equal('Grace Hopper');
      const total = form.getByLabel(/^Total .*worked out from your answers/);
      expect(await total.isEditable()).to.equal(false);
      await form.getByText('Rent is due on the first of the month').waitFor();
      expect(await form.getByLabel(/^Rent/).getAttribute('inputmode')).to.equal('decimal');
      expect(await form.getByLabel(/^Billing e-mail/).getAttribute('type')).to.equal('email');
      expect(await form.getByLabel(/^Phone/).getAttribute('type')).to.equal('tel');

      await page.getByLabel('Type').check();
      await page.getByLabel('Your full name').fill('Grace Hopper');
      await page.getByLabel('I agree to sign this document electronically').check();
      const sign = page.getByRole('button', { name: 'Sign', exact: true });
      expect(await sign.isDisabled(), 'required fields are empty').to.equal(true);

      await form.getByLabel(/^Rent/).fill('1200');
      // A rule broken: Sign waits, and once the signer leaves the field it says why, beside it.
      await form.getByLabel(/^Months/).fill('40');
      await form.getByLabel(/^Months/).blur();
      await form.getByText('Months (page 1) must be at most 36.').waitFor();
      expect(await form.getByLabel(/^Months/).getAttribute('aria-invalid')).to.equal('true');
      expect(await page.locator('#missing').textContent()).to.contain('Months (page 1): must be at most 36');
      await form.getByLabel(/^Months/).fill('12');
      // The total as the server will seal it, worked out as the signer types.
      expect(await total.inputValue()).to.equal('14400');
      expect(await form.getByLabel(/^Months/).getAttribute('aria-invalid')).to.equal('false');
      await form.getByLabel(/^Billing e-mail/).fill('billing@navy.example');
      // "Why Pro" shows, and is required, only while the plan is Pro.
      const whyPro = form.getByLabel(/^Why Pro/);
      expect(await whyPro.isVisible()).to.equal(false);
      expect(await page.locator('.mark[data-field="10"]').isVisible(), 'its mark on the page is hidden too').to.equal(false);
      await form.getByRole('group', { name: /^Plan/ }).getByLabel('Pro').check();
      await whyPro.waitFor();
      expect(await page.locator('#missing').textContent()).to.contain('Why Pro');
      await form.getByRole('group', { name: /^Plan/ }).getByLabel('Basic').check();
      await whyPro.waitFor({ state: 'hidden' });
      await form.getByLabel(/^Country/).selectOption('France');
      await form
        .getByRole('group', { name: /^Extras/ })
        .getByLabel('Gym')
        .check();
      expect(await sign.isDisabled(), 'Rooms is still empty').to.equal(true);
      await form
        .getByRole('group', { name: /^Rooms/ })
        .getByLabel('Garden')
        .check();
      expect(await sign.isEnabled(), 'the conditional "Why Pro" does not hold Sign back').to.equal(true);
      await expectNoSideways(page);
      const violations = describeViolations(`form at ${width}`, await seriousViolations(page));
      expect(violations, violations.join('\n')).to.deep.equal([]);

      await sign.click();
      await page
        .locator('#outcome')
        .getByText(/Your signature is recorded/)
        .waitFor();
      const got = await completedRequest(account.request, signingRequest.id);
      expect(got.signers[0].fields.map((field: { filled?: { value: unknown } }) => field.filled?.value)).to.deep.equal([
        undefined,
        1200,
        12,
        14400,
        'billing@navy.example',
        null,
        'Basic',
        'France',
        ['Gym'],
        ['Garden'],
        null,
        'Grace Hopper',
        undefined,
      ]);
      await context.close();
      expect(problems, 'console errors and off-site requests').to.deep.equal([]);
    });
  }
});
