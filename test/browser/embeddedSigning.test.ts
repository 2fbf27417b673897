import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { desktopContext, useChromium } from '../support/browser';
import { createSigningRequest, eventually, signingLinkOf } from '../support/signing';
import { createTestAccount } from '../support/system';

interface ParentSite {
  origin: string;
  /** The paths and queries the site was asked for, the return URL's among them. */
  visits: string[];
  close: () => Promise<void>;
}

// The API client's site: a page at /parent?src=… that frames the signing page and keeps every message
// it receives (with its origin) in window.received, and a page at /done, the return URL.
async function startParentSite(): Promise<ParentSite> {
  const visits: string[] = [];
  const server = http.createServer((req, res) => {
    visits.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/parent') {
      const src = url.searchParams.get('src') ?? '';
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html>
<html lang="en"><head><title>Our app</title></head><body>
<h1>Our app</h1>
<script>
  window.received = [];
  window.addEventListener('message', (event) => window.received.push({ origin: event.origin, data: event.data }));
</script>
<iframe id="signing" title="Signing" style="width: 100%; height: 1400px" src="${src.replace(/"/g, '&quot;')}"></iframe>
</body></html>`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>Done</title><p>Back in our app</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    visits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const received = (page: Page) => page.evaluate(() => (window as unknown as { received: { origin: string; data: { type: string } }[] }).received);
const typesOf = async (page: Page) => (await received(page)).map((message) => message.data.type);

describe('embedded signing in a page of another origin (headless Chromium)', function () {
  this.timeout(180_000);
  const browser = useChromium();
  let allowed: ParentSite;
  let refused: ParentSite;

  before(async () => {
    allowed = await startParentSite();
    refused = await startParentSite();
  });

  after(async () => {
    await allowed?.close();
    await refused?.close();
  });

  async function embedFor(body: Record<string, unknown> = {}, signer: Record<string, unknown> = {}) {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email: 'ada@example.com', ...signer }] });
    const made = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/embed`, {
      json: { allowedOrigins: [allowed.origin], returnUrl: `${allowed.origin}/done?from=signet`, ...body },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    return { ...account, signingRequest, signerId: signingRequest.signers[0].id as string, url: made.body.url as string };
  }

  async function signInFrame(page: Page) {
    const frame = page.frameLocator('#signing');
    await frame.getByLabel('Type').check();
    await frame.getByLabel('Your full name').fill('Ada Lovelace');
    await frame.getByLabel('I agree to sign this document electronically').check();
    await frame.getByRole('button', { name: 'Sign', exact: true }).click();
  }

  it('the allowed parent receives ready, viewed and completed, in order, from Signet’s origin; the frame goes to returnUrl with the event; the URL reused is 410', async () => {
    const { url, signingRequest, signerId, request, system } = await embedFor();
    const context = await desktopContext(browser());
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    const calls: string[] = [];
    page.on('response', (response) => {
      if (response.url() === url) calls.push(`${response.request().method()} ${response.status()}`);
    });
    try {
      await page.goto(`${allowed.origin}/parent?src=${encodeURIComponent(url)}`);
      await eventually(async () => expect(await typesOf(page)).to.deep.equal(['signet.signing.ready', 'signet.signing.viewed']));
      // The frame loaded the URL, which used nothing up, then its page posted back from the frame, which did.
      expect(calls).to.deep.equal(['GET 200', 'POST 200']);
      const [ready] = await received(page);
      expect(ready.origin).to.equal(new URL(system.url!).origin);
      expect(ready.data).to.deep.equal({ source: 'signet', version: 1, type: 'signet.signing.ready', signingRequestId: signingRequest.id, signerId });
      await page.frameLocator('#signing').getByRole('heading', { name: signingRequest.title }).waitFor();

      await signInFrame(page);
      await eventually(async () => expect(allowed.visits).to.include(`/done?from=signet&event=signing_complete&signing_request_id=${signingRequest.id}`));
      expect(await typesOf(page)).to.deep.equal(['signet.signing.ready', 'signet.signing.viewed', 'signet.signing.completed']);
      await page.frameLocator('#signing').getByText('Back in our app').waitFor();
      await eventually(async () => {
        const read = await request('GET', `/api/v1/signatures/${signingRequest.id}`);
        expect(read.body.signers[0].status).to.equal('signed');
      });

      // The same URL again: 410, a page that knows nothing of the request; the parent hears expired, naming nothing.
      const again = await context.newPage();
      const statuses: number[] = [];
      again.on('response', (response) => {
        if (response.url() === url) statuses.push(response.status());
      });
      await again.goto(`${allowed.origin}/parent?src=${encodeURIComponent(url)}`);
      await eventually(async () => expect(await typesOf(again)).to.deep.equal(['signet.signing.expired']));
      expect((await received(again))[0].data).to.deep.equal({ source: 'signet', version: 1, type: 'signet.signing.expired' });
      expect(statuses).to.deep.equal([410]);
      await again.frameLocator('#signing').getByRole('heading', { name: 'This signing link has expired' }).waitFor();
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('loaded on its own, not in a frame, the page uses nothing up and says to go back; framed afterwards, it opens', async () => {
    const { url, db, signingRequest } = await embedFor();
    const context = await desktopContext(browser());
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const posts: string[] = [];
    context.on('request', (sent) => {
      if (sent.method() === 'POST') posts.push(sent.url());
    });
    try {
      const loaded = await page.goto(url);
      expect(loaded?.status()).to.equal(200);
      await page.getByRole('heading', { name: 'Open this page from your application' }).waitFor();
      expect(posts).to.deep.equal([]);
      const [link] = await db('embedded_signing_links').where({ signer_id: signingRequest.signers[0].id });
      expect(link.used_at).to.equal(null);

      const parent = await context.newPage();
      await parent.goto(`${allowed.origin}/parent?src=${encodeURIComponent(url)}`);
      await eventually(async () => expect(await typesOf(parent)).to.deep.equal(['signet.signing.ready', 'signet.signing.viewed']));
      await parent.frameLocator('#signing').getByRole('heading', { name: signingRequest.title }).waitFor();
      expect(posts).to.deep.equal([url]);
      expect(problems).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('a URL used up between the frame’s load and its post: the frame says it has expired and the parent hears expired, naming nothing', async () => {
    const { url } = await embedFor();
    const context = await desktopContext(browser());
    // Someone else uses the URL up just before the frame's own post reaches Signet.
    const before: number[] = [];
    await context.route(url, async (route) => {
      if (route.request().method() === 'POST') before.push((await fetch(url, { method: 'POST' })).status);
      await route.continue();
    });
    const page = await context.newPage();
    try {
      await page.goto(`${allowed.origin}/parent?src=${encodeURIComponent(url)}`);
      await page.frameLocator('#signing').getByRole('heading', { name: 'This signing link has expired' }).waitFor();
      await eventually(async () => expect(await typesOf(page)).to.deep.equal(['signet.signing.expired']));
      expect((await received(page))[0].data).to.deep.equal({ source: 'signet', version: 1, type: 'signet.signing.expired' });
      expect(before).to.deep.equal([200]);
    } finally {
      await context.close();
    }
  });

  it('a parent on another origin cannot frame the page (the browser refuses), receives nothing, and uses nothing up', async () => {
    const { url, signingRequest } = await embedFor();
    const context = await desktopContext(browser());
    const page = await context.newPage();
    const refusals: string[] = [];
    page.on('console', (message) => {
      if (/frame-ancestors/.test(message.text())) refusals.push(message.text());
    });
    let served = 0;
    page.on('response', (response) => {
      if (response.url() === url) served = response.status();
    });
    try {
      await page.goto(`${refused.origin}/parent?src=${encodeURIComponent(url)}`);
      await eventually(async () => expect(refusals).to.have.length.greaterThan(0));
      expect(served).to.equal(200);
      expect(refusals[0]).to.include(`frame-ancestors ${allowed.origin}`);
      // The frame holds the browser's error page, not Signet's: none of its scripts ran, and nothing was posted.
      const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
      expect(frame?.url()).not.to.equal(url);
      expect(await typesOf(page)).to.deep.equal([]);

      // So the URL is still whole: the allowed parent frames it and gets the signing page.
      const parent = await context.newPage();
      await parent.goto(`${allowed.origin}/parent?src=${encodeURIComponent(url)}`);
      await parent.frameLocator('#signing').getByRole('heading', { name: signingRequest.title }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('a signer asked for an access code: the parent hears verification_required; after the code, viewed and completed', async () => {
    const { url, signingRequest } = await embedFor({}, { verification: { method: 'access_code', code: 'Kite-42' } });
    const context = await desktopContext(browser());
    const page = await context.newPage();
    try {
      await page.goto(`${allowed.origin}/parent?src=${encodeURIComponent(url)}`);
      await eventually(async () => expect(await typesOf(page)).to.deep.equal(['signet.signing.ready', 'signet.signing.verification_required']));
      const frame = page.frameLocator('#signing');
      await frame.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
      await frame.getByLabel('Code').fill('Kite-42');
      await frame.getByRole('button', { name: 'Continue' }).click();
      await eventually(async () =>
        expect(await typesOf(page)).to.deep.equal(['signet.signing.ready', 'signet.signing.verification_required', 'signet.signing.viewed']),
      );
      await frame.getByRole('heading', { name: signingRequest.title }).waitFor();
      await signInFrame(page);
      await eventually(async () => expect(allowed.visits).to.include(`/done?from=signet&event=signing_complete&signing_request_id=${signingRequest.id}`));
      expect((await typesOf(page)).at(-1)).to.equal('signet.signing.completed');
    } finally {
      await context.close();
    }
  });

  it('a signer from an e-mail link who declines goes to the request’s redirectUrl with event=declined', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, {
      signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }],
      redirectUrl: `${allowed.origin}/done`,
    });
    const link = await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id);
    const context = await desktopContext(browser());
    const page = await context.newPage();
    try {
      await page.goto(link);
      await page.getByRole('heading', { name: signingRequest.title }).waitFor();
      await page.getByRole('button', { name: 'Decline', exact: true }).click();
      await page.getByLabel(/Why are you declining/).fill('Not this week.');
      await page.getByRole('button', { name: 'Decline to sign' }).click();
      await page.waitForURL(`${allowed.origin}/done?event=declined&signing_request_id=${signingRequest.id}`);
      expect(allowed.visits).to.include(`/done?event=declined&signing_request_id=${signingRequest.id}`);
    } finally {
      await context.close();
    }
  });
});
