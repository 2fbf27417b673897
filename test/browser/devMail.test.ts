import { expect } from 'chai';
import { describeViolations, seriousViolations } from '../support/axe';
import { expectNoSideways, phoneContext, useChromium, watchPage } from '../support/browser';
import { client } from '../support/http';
import { createSigningRequest, eventually } from '../support/signing';
import { createTestAccount, sharedSystem } from '../support/system';

// /dev/mail on a 375-px phone: the outbox and a real invitation (long signing link, long idempotency
// key) fit the screen, with no sideways scroll, and axe finds nothing serious.

describe('/dev/mail on a phone', function () {
  this.timeout(120_000);
  const browser = useChromium();

  it('the outbox and an invitation fit 375 px and are accessible', async () => {
    const system = await sharedSystem();
    const baseUrl = system.url!;
    const { apiKey, db } = await createTestAccount();
    const email = `outbox-${Math.random().toString(36).slice(2)}-with-a-long-address@example.com`;
    await createSigningRequest(client(baseUrl, apiKey), { signers: [{ name: 'Ada Lovelace', email }] });
    const { id } = await eventually(async () => {
      const row = await db('mail_outbox').whereLike('to_address', `%${email}%`).first('id');
      expect(row).to.not.equal(undefined);
      return row as { id: string };
    });

    const context = await phoneContext(browser());
    const problems: string[] = [];
    const page = watchPage(await context.newPage(), baseUrl, problems);
    try {
      for (const path of ['/dev/mail', `/dev/mail/${id}`]) {
        await page.goto(`${baseUrl}${path}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await expectNoSideways(page);
        const violations = await seriousViolations(page);
        expect(violations, describeViolations(path, violations).join('\n')).to.deep.equal([]);
      }
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });
});
