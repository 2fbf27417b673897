import { expect } from 'chai';
import { describeViolations, seriousViolations } from '../support/axe';
import { useChromium, phoneContext } from '../support/browser';
import { createSigningRequest, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount, useSharedSystem } from '../support/system';

describe('the signing page of a signer asked for a code (headless Chromium)', function () {
  this.timeout(120_000);
  useSharedSystem();
  const browser = useChromium();

  it('shows only the code form (no serious axe violation); a wrong code shows an error, the right one shows the document, and the signer signs', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, {
      signers: [{ name: 'Ada Lovelace', email: 'ada@example.com', verification: { method: 'access_code', code: 'Kite-42' } }],
    });
    const link = `${account.system.url}/sign/${tokenOf(await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id))}`;
    const context = await phoneContext(browser());
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    // The wrong code's 403 is part of the story; any other console error is not.
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 403/.test(message.text())) problems.push(message.text());
    });
    try {
      await page.goto(link);
      await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
      expect(await page.content()).not.to.include(signingRequest.title);
      expect(await page.locator('#document').isHidden()).to.equal(true);
      expect(describeViolations('the code form', await seriousViolations(page))).to.deep.equal([]);

      await page.getByLabel('Code').fill('Kite-43');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('alert').getByText('The code is wrong, expired or used already. 4 tries left before the page locks for 15 minutes.').waitFor();
      expect(await page.content()).not.to.include(signingRequest.title);
      expect(describeViolations('the code form with its error', await seriousViolations(page))).to.deep.equal([]);

      await page.getByLabel('Code').fill('Kite-42');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: signingRequest.title }).waitFor();
      await page.locator('#pages[data-rendered="2"]').waitFor();
      expect(await page.locator('#verify').isHidden()).to.equal(true);

      await page.getByLabel('Type').check();
      await page.getByLabel('Your full name').fill('Ada Lovelace');
      await page.getByLabel('I agree to sign this document electronically').check();
      await page.getByRole('button', { name: 'Sign', exact: true }).click();
      await page.locator('#outcome').getByRole('heading', { name: 'You have signed' }).waitFor();
      await eventually(async () => {
        const read = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
        expect(read.body.signers[0]).to.include({ status: 'signed' });
        expect(read.body.signers[0].verification.verifiedAt).to.be.a('string');
      });
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
  it('a signer past every wrong code allowed is told to contact the sender, and the right code changes nothing', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, {
      signers: [{ name: 'Ada Lovelace', email: 'ada@example.com', verification: { method: 'access_code', code: 'Kite-42' } }],
    });
    const signerId = signingRequest.signers[0].id;
    // As after twenty wrong codes (test/integration/signerVerification.test.ts gives them).
    await account
      .db('signer_verifications')
      .where({ signer_id: signerId })
      .update({ wrong_tries: 20, locked_at: new Date(), locked_until: new Date(signingRequest.expiresAt) });
    const link = `${account.system.url}/sign/${tokenOf(await signingLinkOf(account.request, signingRequest.id, signerId))}`;
    const context = await phoneContext(browser());
    const page = await context.newPage();
    const told = 'Too many wrong codes: this page stays locked until the sender sends you the link again. Contact the person who sent you this request.';
    try {
      await page.goto(link);
      await page.getByRole('alert').getByText(told).waitFor();
      await page.getByLabel('Code').fill('Kite-42');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('alert').getByText(told).waitFor();
      expect(await page.content()).not.to.include(signingRequest.title);
      expect(await page.locator('#document').isHidden()).to.equal(true);
    } finally {
      await context.close();
    }
  });

  it('an e-mailed code is sent as the page opens; giving it shows the document', async () => {
    const account = await createTestAccount();
    const email = `ada-${Math.random().toString(36).slice(2)}@example.com`;
    const { signingRequest } = await createSigningRequest(account.request, {
      signers: [{ name: 'Ada Lovelace', email, verification: { method: 'email_code' } }],
    });
    const link = `${account.system.url}/sign/${tokenOf(await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id))}`;
    const context = await phoneContext(browser());
    const page = await context.newPage();
    try {
      await page.goto(link);
      await page.getByText(/We e-mailed a 6-digit code to a•+@example\.com/).waitFor();
      const mail = await eventually(async () => {
        const row = await account
          .db('mail_outbox')
          .where('to_address', 'like', `%${email}%`)
          .andWhere('idempotency_key', 'like', 'verification-code:%')
          .first();
        expect(row).not.to.equal(undefined);
        return row;
      });
      await page.getByLabel('Code').fill(/(\d{6})/.exec(mail.subject)![1]);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: signingRequest.title }).waitFor();
      await page.locator('#pages[data-rendered="2"]').waitFor();
      // Reloaded, the page keeps its session: no new code, no form.
      await page.reload();
      await page.getByRole('heading', { name: signingRequest.title }).waitFor();
      expect(await page.locator('#verify').isHidden()).to.equal(true);
      expect(
        await account.db('mail_outbox').where('to_address', 'like', `%${email}%`).andWhere('idempotency_key', 'like', 'verification-code:%'),
      ).to.have.length(1);
    } finally {
      await context.close();
    }
  });
});
