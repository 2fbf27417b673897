import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { describeViolations, seriousViolations } from '../support/axe';
import { contentWidth, desktop, phone, useChromium, watchPage } from '../support/browser';
import { client } from '../support/http';
import { createSigningRequest, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

// Every page a recipient or a stranger can reach, in each of its states, at 375 and 1280 px: it answers,
// shows what it is for, fits the screen, and axe finds nothing serious or critical. (The console's pages
// are walked the same way in accessibility.test.ts.)

interface PublicPage {
  name: string;
  path: string;
  /** What shows once the page has done its work. */
  ready: (page: Page) => Promise<unknown>;
  /** Answers of the page that are its story: an expired link's PDF is 410, an unknown token 404. */
  expectedStatus?: number;
}

const outcome = (page: Page, text: string | RegExp) => page.locator('#outcome').getByText(text).first().waitFor();
const heading = (page: Page, name: string) => page.getByRole('heading', { name }).first().waitFor();

describe('every page a recipient or the public reaches, at 375 and 1280 px (headless Chromium, axe)', function () {
  this.timeout(240_000);
  const browser = useChromium();
  const pages: PublicPage[] = [];
  let baseUrl: string;

  before(async () => {
    const account = await createTestAccount();
    baseUrl = account.system.url!;
    const link = async (requestId: string, signerId: string) => `/sign/${tokenOf(await signingLinkOf(account.request, requestId, signerId))}`;
    const statusOf = async (id: string) => (await account.request('GET', `/api/v1/signatures/${id}`)).body.status;

    const parallel = (
      await createSigningRequest(account.request, {
        signers: [
          { name: 'Ada Lovelace', email: 'ada@example.com' },
          { name: 'Ann Approver', email: 'ann@example.com', recipientType: 'approver' },
        ],
      })
    ).signingRequest;
    pages.push(
      { name: 'the signing page', path: await link(parallel.id, parallel.signers[0].id), ready: (page) => heading(page, parallel.title) },
      {
        name: 'an approver’s page',
        path: await link(parallel.id, parallel.signers[1].id),
        ready: (page) => page.getByRole('button', { name: 'Approve' }).waitFor(),
      },
    );

    const sequential = (await createSigningRequest(account.request, { signingOrder: 'sequential' })).signingRequest;
    pages.push({ name: 'not your turn', path: await link(sequential.id, sequential.signers[1].id), ready: (page) => heading(page, 'It is not your turn yet') });

    const coded = (
      await createSigningRequest(account.request, {
        signers: [{ name: 'Ada Lovelace', email: 'ada@example.com', verification: { method: 'access_code', code: 'Kite-42' } }],
      })
    ).signingRequest;
    pages.push({ name: 'the access-code form', path: await link(coded.id, coded.signers[0].id), ready: (page) => heading(page, 'Confirm it is you') });

    const signed = (await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] })).signingRequest;
    const signedPath = await link(signed.id, signed.signers[0].id);
    const signing = await client(baseUrl)('POST', `${signedPath}/sign`, { json: { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } } });
    expect(signing.status, JSON.stringify(signing.body)).to.equal(200);
    await eventually(async () => expect(await statusOf(signed.id)).to.equal('completed'), 60_000);
    pages.push({ name: 'signed and completed', path: signedPath, ready: (page) => outcome(page, /signed/i) });

    const declined = (await createSigningRequest(account.request)).signingRequest;
    const declinedPath = await link(declined.id, declined.signers[0].id);
    expect((await client(baseUrl)('POST', `${declinedPath}/decline`, { json: { reason: 'Not these terms' } })).status).to.equal(200);
    await eventually(async () => expect(await statusOf(declined.id)).to.equal('declined'));
    pages.push({ name: 'declined', path: declinedPath, ready: (page) => outcome(page, /declined/i) });

    const cancelled = (await createSigningRequest(account.request)).signingRequest;
    const cancelledPath = await link(cancelled.id, cancelled.signers[0].id);
    expect((await account.request('POST', `/api/v1/signatures/${cancelled.id}/cancel`, { json: {} })).status).to.equal(200);
    await eventually(async () => expect(await statusOf(cancelled.id)).to.equal('cancelled'));
    pages.push({ name: 'cancelled', path: cancelledPath, ready: (page) => heading(page, 'This request was cancelled') });

    const expired = (await createSigningRequest(account.request)).signingRequest;
    const expiredPath = await link(expired.id, expired.signers[0].id);
    await account
      .db('signer_tokens')
      .where({ signer_id: expired.signers[0].id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    pages.push({
      name: 'an expired link',
      path: expiredPath,
      ready: (page) => outcome(page, 'This signing link has expired. Ask the sender for a new one.'),
      expectedStatus: 410,
    });

    pages.push({
      name: 'an unknown link',
      path: `/sign/${'x'.repeat(43)}`,
      ready: (page) => heading(page, 'This signing link is not valid'),
      expectedStatus: 404,
    });

    const embedded = (await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] })).signingRequest;
    const embed = await account.request('POST', `/api/v1/signatures/${embedded.id}/signers/${embedded.signers[0].id}/embed`, {
      json: { allowedOrigins: ['https://app.example.com'], returnUrl: 'https://app.example.com/done' },
    });
    expect(embed.status, JSON.stringify(embed.body)).to.equal(201);
    pages.push({
      name: 'an embedded page opened on its own',
      path: new URL(embed.body.url).pathname,
      ready: (page) => heading(page, 'Open this page from your application'),
    });

    pages.push({ name: 'public verification', path: '/verify', ready: (page) => page.getByRole('heading', { level: 1 }).waitFor() });

    const mail = await account.db('mail_outbox').where('to_address', 'like', '%ada@example.com%').orderBy('id', 'desc').first('id');
    pages.push(
      { name: 'the development outbox', path: '/dev/mail', ready: (page) => page.getByRole('heading', { level: 1 }).waitFor() },
      { name: 'an invitation in the outbox', path: `/dev/mail/${mail.id}`, ready: (page) => page.getByRole('heading', { level: 1 }).waitFor() },
    );
  });

  for (const [size, options] of [
    ['375 px', phone],
    ['1280 px', desktop],
  ] as const) {
    it(`at ${size}: each answers, shows what it is for, fits the screen and has no serious axe violation`, async () => {
      const context = await browser().newContext(options);
      const failures: string[] = [];
      try {
        for (const each of pages) {
          const problems: string[] = [];
          const where = `${each.name} (${each.path}, ${size})`;
          const page = watchPage(await context.newPage(), baseUrl, problems, {
            alsoAllowed: ['blob:'],
            expectedError: (message) => each.expectedStatus !== undefined && message.text().includes(`status of ${each.expectedStatus}`),
          });
          const response = await page.goto(`${baseUrl}${each.path}`);
          expect(response?.status(), where).to.equal(each.expectedStatus === 404 ? 404 : 200);
          await each.ready(page);
          failures.push(...describeViolations(where, await seriousViolations(page)), ...problems.map((problem) => `${where}: ${problem}`));
          const width = await contentWidth(page);
          if (width > options.viewport!.width) failures.push(`${where}: ${width} px wide, wider than the screen`);
          await page.close();
        }
      } finally {
        await context.close();
      }
      expect(failures, failures.join('\n')).to.deep.equal([]);
    });
  }
});
