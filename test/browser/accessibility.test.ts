import { expect } from 'chai';
import type { BrowserContextOptions, Page } from 'playwright-core';
import { setAccountPlan } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { describeViolations, seriousViolations } from '../support/axe';
import { confirmEmail, consoleScreenshots, contentWidth, desktop, phone, shot, useChromium, watchPage } from '../support/browser';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { startReceiver, type Receiver } from '../support/receiver';
import { sharedSystem } from '../support/system';

const viewports: { name: string; options: BrowserContextOptions }[] = [
  { name: 'phone', options: phone },
  { name: 'desktop', options: desktop },
];

describe('accessibility of the owner console (axe-core: no serious or critical violation, at 375 and 1280 px)', function () {
  this.timeout(240_000);
  const browser = useChromium();
  let baseUrl: string;
  let receiver: Receiver;
  const sessions: Record<'free' | 'business' | 'unconfirmed', BrowserContextOptions['storageState']> = {
    free: undefined,
    business: undefined,
    unconfirmed: undefined,
  };
  const urls = { loggedOut: [] as string[], free: [] as string[], business: [] as string[], unconfirmed: [] as string[] };

  before(async () => {
    const system = await sharedSystem();
    const db = system.database.knex;
    baseUrl = system.url!;
    receiver = await startReceiver(() => ({ status: 200, body: 'received' }));

    /** Signs up in a fresh context; answers its session and account. */
    const signUp = async (name: string, confirm = true) => {
      const context = await browser().newContext();
      const page = await context.newPage();
      const email = `a11y-${Math.random().toString(36).slice(2)}@example.com`;
      await page.goto(`${baseUrl}/app/signup`);
      await page.getByLabel('Account name').fill(name);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill('accessible to everyone');
      await page.getByRole('button', { name: 'Sign up' }).click();
      await page.getByRole('heading', { name }).waitFor();
      if (confirm) await confirmEmail(page, baseUrl, email);
      const accountId: string = (await db('users').where({ email }).first()).account_id;
      return { context, page, email, accountId };
    };

    // An account whose address is not confirmed yet: the banner on its pages, and the link's page to a stranger.
    const unconfirmed = await signUp('Not Yet Ltd', false);
    sessions.unconfirmed = await unconfirmed.context.storageState();
    urls.unconfirmed = ['/app', '/app/settings/api-keys'];
    const verifyPath = /\/app\/email\/verify\/[\w-]{43}/.exec((await db('mail_outbox').where('to_address', unconfirmed.email).first()).text)![0];
    await unconfirmed.context.close();

    // A free account with a document (through the REST API).
    const free = await signUp('Free & Co');
    const api = client(baseUrl, (await createApiKey(db, free.accountId)).secret);
    const upload = new FormData();
    upload.append('file', new Blob([new Uint8Array(await makePdf(['A contract', 'Page two']))], { type: 'application/pdf' }), 'contract.pdf');
    const document = await api('POST', '/api/v1/documents', { body: upload });
    expect(document.status, JSON.stringify(document.body)).to.equal(201);
    // A request and a template of it: their own pages too.
    const sent = await api('POST', '/api/v1/signatures', {
      json: { document_id: document.body.id, title: 'Contract', signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] },
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    const template = await api('POST', '/api/v1/templates', {
      json: {
        name: 'Contract template',
        documentId: document.body.id,
        roles: [{ name: 'client' }],
        fields: [{ role: 'client', type: 'signature', page: 1, x: 50, y: 100, width: 150, height: 40 }],
      },
    });
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    // A bulk send of it: its list, form and job pages.
    const rows = new FormData();
    rows.append('templateId', template.body.id);
    rows.append('file', new Blob(['client.name,client.email\nAda Lovelace,ada@example.com\n'], { type: 'text/csv' }), 'rows.csv');
    const bulkSend = await api('POST', '/api/v1/bulk-sends', { body: rows });
    expect(bulkSend.status, JSON.stringify(bulkSend.body)).to.equal(201);
    sessions.free = await free.context.storageState();
    urls.free = [
      '/app',
      '/app/documents',
      `/app/documents/${document.body.id}`,
      '/app/settings/api-keys',
      '/app/settings/plan',
      '/app/settings/branding',
      '/app/webhooks',
      '/app/requests',
      '/app/requests/new',
      `/app/requests/${sent.body.id}`,
      '/app/templates',
      '/app/templates/new',
      `/app/templates/${template.body.id}`,
      '/app/bulk-sends',
      `/app/bulk-sends/new?templateId=${template.body.id}`,
      `/app/bulk-sends/${bulkSend.body.id}`,
    ];

    // A Business account with a webhook, its secret shown, and a delivery of a test ping.
    const business = await signUp('Business Ltd');
    await setAccountPlan(db, business.accountId, 'business');
    const { page } = business;
    await page.goto(`${baseUrl}/app/webhooks/new`);
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('signing_request.completed').check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('textbox', { name: 'Signing secret' }).waitFor();
    // The answer to the form's POST is the new webhook's page, at the URL /app/webhooks: its edit form names its own.
    const webhookPath = (await page.locator('form.webhook-form').getAttribute('action'))!;
    await page.goto(`${baseUrl}${webhookPath}`);
    await page.getByRole('button', { name: 'Send a test ping' }).click();
    await page.getByRole('heading', { name: 'Attempts' }).waitFor();
    sessions.business = await business.context.storageState();
    urls.business = ['/app/webhooks', '/app/webhooks/new', webhookPath, new URL(page.url()).pathname];
    await Promise.all([free.context.close(), business.context.close()]);

    // Logged out: the forms, and a reset link from the outbox.
    const context = await browser().newContext();
    const forgot = await context.newPage();
    await forgot.goto(`${baseUrl}/app/password/forgot`);
    await forgot.getByLabel('E-mail').fill(free.email);
    await forgot.getByRole('button', { name: 'Send the link' }).click();
    await forgot.getByRole('status').waitFor();
    const mail = await db('mail_outbox').where('to_address', free.email).orderBy('id', 'desc').first();
    const resetPath = /\/app\/password\/reset\/[\w-]{43}/.exec(mail.text)![0];
    await context.close();
    urls.loggedOut = ['/app/signup', '/app/login', '/app/password/forgot', resetPath, verifyPath];
  });

  after(async () => {
    await receiver?.stop();
  });

  /** Opens each page, which must answer, and runs axe on it. */
  async function check(who: keyof typeof urls, viewport: (typeof viewports)[number]) {
    const storageState = who === 'loggedOut' ? undefined : sessions[who];
    const context = await browser().newContext({ ...viewport.options, storageState });
    const failures: string[] = [];
    try {
      for (const url of urls[who]) {
        const problems: string[] = [];
        const page: Page = watchPage(await context.newPage(), baseUrl, problems);
        const response = await page.goto(`${baseUrl}${url}`);
        expect(response?.status(), `${url} as ${who}`).to.be.below(400);
        const where = `${url} (${who}, ${viewport.name})`;
        failures.push(...describeViolations(where, await seriousViolations(page)), ...problems.map((problem) => `${where}: ${problem}`));
        const width = await contentWidth(page);
        if (width > viewport.options.viewport!.width) failures.push(`${where}: ${width} px wide, wider than the screen`);
        const name =
          url
            .replace(/^\/app\/?/, '')
            .replace(/(wh|whd|doc|sr|tpl|bulk)_[0-9a-z]{26}/g, '$1')
            .replace(/(reset|verify)\/[\w-]{43}/, '$1') || 'dashboard';
        await shot(page, consoleScreenshots, `a11y-${who}-${name.replace(/\//g, '-')}-${viewport.name}`);
        await page.close();
      }
    } finally {
      await context.close();
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  }

  for (const viewport of viewports) {
    describe(`at ${viewport.options.viewport!.width} px`, () => {
      it('logged out: sign-up, log-in, forgot-password, reset and address-confirmation pages', () => check('loggedOut', viewport));
      it('a free account: dashboard, documents, a document, API keys, plan, webhooks (Business only), requests, a request, templates, a template and bulk sends', () =>
        check('free', viewport));
      it('a Business account: the webhook list, form, a webhook with its delivery log, and a delivery', () => check('business', viewport));
      it('an account whose address is not confirmed: the dashboard and API keys with the banner', () => check('unconfirmed', viewport));
    });
  }
});
