import net from 'node:net';
import { expect } from 'chai';
import { hourlyLimit, rateLimitedOperations } from '../../src/domain/plans';
import { sharedSystem } from '../support/system';
import { startApp } from '../support/app';
import { client } from '../support/http';
import { makeLargePdf, makePdf } from '../support/pdfs';
import { createSigningRequest, eventually } from '../support/signing';
import { serializeCookie } from '../../src/console/sessions';
import { consoleCsp } from '../../src/console/routes';
import { consoleClient, newEmail, PASSWORD, signedUp, uploadPdf, type ConsoleClient } from '../support/consoleClient';

/** A key made on the API keys page. */
async function apiKeyOf(browser: ConsoleClient) {
  await browser.request('GET', '/app/settings/api-keys');
  const created = await browser.request('POST', '/app/settings/api-keys', { form: { _csrf: browser.csrf, name: 'tests' } });
  expect(created.status).to.equal(201);
  return /value="(sk_live_[A-Za-z0-9]{43})"/.exec(created.text)![1];
}

/** The rows of the dashboard table with this caption, as { label in lower case: count }. */
function tableCounts(page: string, caption: string) {
  const table = new RegExp(`<caption>${caption}</caption>([\\s\\S]*?)</table>`).exec(page)?.[1];
  expect(table, `a table “${caption}”`).to.be.a('string');
  const rows = [...table!.matchAll(/<tr><td class="wrap">([^<]*)<\/td><td>(\d+)<\/td><\/tr>/g)];
  return Object.fromEntries(rows.map(([, label, count]) => [label.toLowerCase(), Number(count)]));
}

describe('the owner console (/app)', function () {
  this.timeout(60_000);
  let baseUrl: string;
  let db: Awaited<ReturnType<typeof sharedSystem>>['database']['knex'];

  before(async () => {
    const system = await sharedSystem();
    baseUrl = system.url!;
    db = system.database.knex;
  });

  describe('GET / and /favicon.ico', () => {
    it('the root leads to the console; /favicon.ico (asked for by Safari whatever the page links) leads to the icon', async () => {
      const browser = consoleClient(baseUrl);
      const root = await browser.request('GET', '/');
      expect(root.status).to.equal(302);
      expect(root.location).to.equal('/app');
      const icon = await browser.request('GET', '/favicon.ico');
      expect(icon.status).to.equal(302);
      expect(icon.location).to.equal('/sign-assets/favicon.svg');
      const svg = await browser.request('GET', icon.location!);
      expect(svg.status).to.equal(200);
      expect(svg.headers.get('content-type')).to.contain('image/svg+xml');
    });
  });

  describe('GET /app/signup', () => {
    it('serves the form with a strict CSP, no-store, and an HttpOnly SameSite=Lax pre-session cookie', async () => {
      const response = await consoleClient(baseUrl).request('GET', '/app/signup');
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-security-policy')).to.equal(consoleCsp);
      expect(consoleCsp).to.contain("script-src 'self'").and.not.contain('unsafe-inline');
      expect(response.headers.get('cache-control')).to.equal('no-store');
      expect(response.text).to.match(/<label for="password">Password<\/label>/);
      expect(response.setCookies).to.have.length(1);
      expect(response.setCookies[0]).to.match(/^signet_presession=[^;]+; Path=\/app; HttpOnly; SameSite=Lax$/);
    });
  });

  describe('POST /app/signup', () => {
    it('without the CSRF token, or with a wrong one, is 403 and creates nothing', async () => {
      const browser = consoleClient(baseUrl);
      await browser.request('GET', '/app/signup');
      const email = newEmail();
      const missing = await browser.request('POST', '/app/signup', { form: { accountName: 'A', email, password: PASSWORD } });
      expect(missing.status).to.equal(403);
      const wrong = await browser.request('POST', '/app/signup', { form: { _csrf: 'x'.repeat(43), accountName: 'A', email, password: PASSWORD } });
      expect(wrong.status).to.equal(403);
      // A token from another browser is bound to that browser's cookie, not this one.
      const other = consoleClient(baseUrl);
      await other.request('GET', '/app/signup');
      const foreign = await browser.request('POST', '/app/signup', { form: { _csrf: other.csrf, accountName: 'A', email, password: PASSWORD } });
      expect(foreign.status).to.equal(403);
      expect(await db('users').where({ email }).first()).to.equal(undefined);
    });

    it('refuses a short password and a bad e-mail, naming each rule', async () => {
      const response = await consoleClient(baseUrl).submit('/app/signup', '/app/signup', { accountName: 'Acme', email: 'not-an-address', password: 'short' });
      expect(response.status).to.equal(400);
      expect(response.text).to.contain('email must be a valid e-mail address').and.contain('password must be at least 10 characters');
    });

    it('creates a free account owned by the person, logs them in at once with a signed HttpOnly SameSite=Lax cookie', async () => {
      const browser = consoleClient(baseUrl);
      const email = newEmail();
      const response = await browser.submit('/app/signup', '/app/signup', { accountName: 'Acme Ltd', email, password: PASSWORD });
      expect(response.status).to.equal(303);
      expect(response.location).to.equal('/app');
      const session = response.setCookies.find((cookie) => cookie.startsWith('signet_session='))!;
      expect(session).to.match(/^signet_session=[\w-]{43}\.[\w-]{43}; Path=\/app; HttpOnly; SameSite=Lax; Max-Age=1209600$/);
      expect(session).not.to.contain('Secure'); // NODE_ENV=test over http; production adds it:
      expect(serializeCookie('signet_session', 'v', { secure: true })).to.match(/; Secure$/);

      const user = await db('users').where({ email }).first();
      expect(user.password_hash).to.match(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
      expect(user.password_hash).not.to.contain(PASSWORD);
      const account = await db('accounts').where({ id: user.account_id }).first();
      expect(account).to.include({ email, name: 'Acme Ltd', plan: 'free' });
      // Only the token's hash is stored.
      const token = session.split('=')[1].split('.')[0];
      const stored = await db('console_sessions').where({ user_id: user.id }).first();
      expect(stored.token_hash)
        .to.match(/^[0-9a-f]{64}$/)
        .and.not.equal(token);

      const dashboard = await browser.request('GET', '/app');
      expect(dashboard.status).to.equal(200);
      expect(dashboard.text).to.contain('Acme Ltd').and.contain('Documents this month');
    });

    it('a second sign-up with the same e-mail (any letter case) is 409', async () => {
      const { email } = await signedUp(baseUrl);
      const response = await consoleClient(baseUrl).submit('/app/signup', '/app/signup', {
        accountName: 'Again',
        email: email.toUpperCase(),
        password: PASSWORD,
      });
      expect(response.status).to.equal(409);
      expect(response.text).to.contain('An account with this e-mail already exists');
    });
  });

  describe('POST /app/login and /app/logout', () => {
    it('a wrong password is 401; the right one starts a session; logout ends it on the server', async () => {
      const { email } = await signedUp(baseUrl);
      const browser = consoleClient(baseUrl);
      const wrong = await browser.submit('/app/login', '/app/login', { email, password: 'wrong password!' });
      expect(wrong.status).to.equal(401);
      expect(wrong.text).to.contain('The e-mail or the password is wrong.');

      const right = await browser.submit('/app/login', '/app/login', { email: email.toUpperCase(), password: PASSWORD });
      expect(right.status).to.equal(303);
      const cookie = browser.cookies.get('signet_session')!;
      expect((await browser.request('GET', '/app/settings/plan')).status).to.equal(200);

      const logout = await browser.request('POST', '/app/logout', { form: { _csrf: browser.csrf } });
      expect(logout.status).to.equal(303);
      expect(logout.setCookies.some((line) => /^signet_session=; .*Max-Age=0/.test(line))).to.equal(true);
      // The old cookie, replayed, opens nothing.
      const replay = await fetch(`${baseUrl}/app/settings/plan`, { headers: { Cookie: `signet_session=${cookie}` }, redirect: 'manual' });
      expect(replay.status).to.equal(302);
      expect(replay.headers.get('location')).to.equal('/app/login');
    });

    it('logout without the CSRF token is 403 and keeps the session', async () => {
      const { browser } = await signedUp(baseUrl);
      expect((await browser.request('POST', '/app/logout', { form: {} })).status).to.equal(403);
      expect((await browser.request('GET', '/app')).status).to.equal(200);
    });

    it('a cookie with a forged signature opens nothing', async () => {
      const { browser } = await signedUp(baseUrl);
      const [token] = browser.cookies.get('signet_session')!.split('.');
      const forged = await fetch(`${baseUrl}/app`, { headers: { Cookie: `signet_session=${token}.${'A'.repeat(43)}` }, redirect: 'manual' });
      expect(forged.status).to.equal(302);
    });

    it('after 10 failed attempts for one e-mail, the next is 429 with Retry-After, even with the right password', async () => {
      const { email } = await signedUp(baseUrl);
      const browser = consoleClient(baseUrl);
      for (let attempt = 0; attempt < 10; attempt++) {
        expect((await browser.submit('/app/login', '/app/login', { email, password: `wrong-${attempt}-password` })).status).to.equal(401);
      }
      const blocked = await browser.submit('/app/login', '/app/login', { email, password: PASSWORD });
      expect(blocked.status).to.equal(429);
      expect(Number(blocked.headers.get('retry-after'))).to.be.within(1, 900);
      expect(blocked.text).to.contain('Too many failed attempts');
    });
  });

  describe('Settings → API keys (/app/settings/api-keys)', () => {
    it('without a session, redirects to the login page', async () => {
      const response = await consoleClient(baseUrl).request('GET', '/app/settings/api-keys');
      expect(response.status).to.equal(302);
      expect(response.location).to.equal('/app/login');
    });

    it('creates a key shown once that works on the REST API; revoking it makes it 401', async () => {
      const { browser, email } = await signedUp(baseUrl);
      await browser.request('GET', '/app/settings/api-keys');
      const noToken = await browser.request('POST', '/app/settings/api-keys', { form: { name: 'ci' } });
      expect(noToken.status).to.equal(403);

      const created = await browser.request('POST', '/app/settings/api-keys', { form: { _csrf: browser.csrf, name: 'ci' } });
      expect(created.status).to.equal(201);
      const secret = /value="(sk_live_[A-Za-z0-9]{43})"/.exec(created.text)![1];
      const api = client(baseUrl, secret);
      const account = await api('GET', '/api/v1/account');
      expect(account.status).to.equal(200);
      expect(account.body).to.include({ email, plan: 'free' });

      const listed = await browser.request('GET', '/app/settings/api-keys');
      expect(listed.text).to.contain(secret.slice(0, 16)).and.not.contain(secret);
      expect((await api('GET', '/api/v1/documents')).status).to.equal(200);
      const keyId = /action="\/app\/settings\/api-keys\/(key_[0-9a-z]{26})\/revoke"/.exec(listed.text)![1];

      // Another person cannot revoke it.
      const { browser: stranger } = await signedUp(baseUrl);
      await stranger.request('GET', '/app/settings/api-keys');
      expect((await stranger.request('POST', `/app/settings/api-keys/${keyId}/revoke`, { form: { _csrf: stranger.csrf } })).status).to.equal(404);
      expect((await api('GET', '/api/v1/account')).status).to.equal(200);

      const revoked = await browser.request('POST', `/app/settings/api-keys/${keyId}/revoke`, { form: { _csrf: browser.csrf } });
      expect(revoked.status).to.equal(303);
      expect((await api('GET', '/api/v1/account')).status).to.equal(401);
      expect((await browser.request('GET', '/app/settings/api-keys')).text).to.contain('revoked');
    });

    it('makes a key with the scopes ticked and the expiry chosen; refuses none ticked', async () => {
      const { browser } = await signedUp(baseUrl);
      const page = await browser.request('GET', '/app/settings/api-keys');
      expect(page.text).to.contain('value="documents:write" checked').and.contain('name="expiresInDays"');
      const form = { _csrf: browser.csrf, name: 'reader', scopesChosen: '1', expiresInDays: '30' };
      const none = await browser.request('POST', '/app/settings/api-keys', { form });
      expect(none.status).to.equal(400);
      expect(none.text).to.contain('choose at least one scope');

      const created = await browser.request('POST', '/app/settings/api-keys', { form: { ...form, scopes: ['documents:read', 'account:read'] } });
      expect(created.status).to.equal(201);
      const api = client(baseUrl, /value="(sk_live_[A-Za-z0-9]{43})"/.exec(created.text)![1]);
      expect((await api('GET', '/api/v1/account')).status).to.equal(200);
      const refused = await api('GET', '/api/v1/signatures');
      expect(refused.status).to.equal(403);
      expect(refused.body.message).to.contain('signatures:read');
      expect(created.text).to.contain('documents:read, account:read');
      const expiresAt = (await db('api_keys').where({ name: 'reader' }).orderBy('created_at', 'desc').first()).expires_at as Date;
      expect(expiresAt.getTime() - Date.now()).to.be.within(29 * 86_400_000, 30 * 86_400_000);
    });
  });

  describe('Settings → plan, dashboard and documents', () => {
    it('the plan page shows the plan, usage against each quota and the rate limits', async () => {
      const { browser } = await signedUp(baseUrl);
      const response = await browser.request('GET', '/app/settings/plan');
      expect(response.text).to.contain('<span class="plan">free</span>');
      expect(response.text)
        .to.match(/Documents: <strong>0<\/strong> of 5/)
        .and.match(/Templates: <strong>0<\/strong> of 3/);
      expect(response.text).to.contain('POST /documents</td><td data-label="Per hour">10<');
    });

    it('the plan page’s rate limits are the ones the REST API enforces', async () => {
      const { browser } = await signedUp(baseUrl);
      const shown = Object.fromEntries(
        [
          ...(await browser.request('GET', '/app/settings/plan')).text.matchAll(
            /<td data-label="Operation" class="mono">([^<]+)<\/td><td data-label="Per hour">(\d+)</g,
          ),
        ].map(([, operation, limit]) => [operation, Number(limit)]),
      );
      expect(shown).to.deep.equal(Object.fromEntries(rateLimitedOperations.map((operation) => [operation, hourlyLimit('free', operation, 1)])));
      const api = client(baseUrl, await apiKeyOf(browser));
      const upload = await api('POST', '/api/v1/documents', { json: { fileName: 'limits.pdf', fileSize: 100 } });
      expect(upload.status).to.equal(201);
      expect(Number(upload.headers.get('x-ratelimit-limit'))).to.equal(shown['POST /documents']);
    });

    it('the dashboard shows the signing breakdown: the REST API’s numbers, as a chart and as tables', async () => {
      const { browser } = await signedUp(baseUrl);
      const empty = await browser.request('GET', '/app');
      expect(empty.text).to.contain('Signing breakdown').and.contain('No signing requests yet.').and.not.contain('breakdown-chart');

      const api = client(baseUrl, await apiKeyOf(browser));
      await createSigningRequest(api);
      const { signingRequest } = await createSigningRequest(api, { signers: [{ name: 'Ada Lovelace', email: 'ADA@example.com' }] });
      expect((await api('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: { reason: 'wrong draft' } })).status).to.equal(200);

      // The breakdown may come from the search index, a moment behind: wait until it has all three changes.
      const rest = await eventually(async () => {
        const response = await api('GET', '/api/v1/dashboard/signing-breakdown');
        expect(response.status).to.equal(200);
        expect(response.body.requestsByStatus).to.include({ pending: 1, cancelled: 1 });
        return response.body;
      });
      const page = (await browser.request('GET', '/app')).text;
      expect(tableCounts(page, 'Signing requests by status')).to.deep.equal(rest.requestsByStatus);
      expect(tableCounts(page, 'Signers by status')).to.deep.equal(rest.signersByStatus);
      expect(tableCounts(page, 'Waiting on')).to.deep.equal(
        Object.fromEntries(rest.topPendingSigners.map((one: { email: string; pendingRequests: number }) => [one.email, one.pendingRequests])),
      );
      expect(tableCounts(page, 'Waiting on')).to.deep.equal({ 'ada@example.com': 1, 'alan@example.com': 1 });
      expect(page).to.contain('Nobody has declined.');
      // The chart's label carries the numbers too, and its data is the REST API's.
      expect(page).to.match(
        /<canvas id="breakdown-chart" role="img" aria-label="Signing requests by status: Pending 1, Completed 0, Declined 0, Cancelled 1, Expired 0">/,
      );
      expect(JSON.parse(/<script type="application\/json" id="breakdown-data">([^<]*)<\/script>/.exec(page)![1])).to.deep.equal(rest.requestsByStatus);

      // Another account's requests are not counted.
      const { browser: stranger } = await signedUp(baseUrl);
      expect((await stranger.request('GET', '/app')).text).to.contain('No signing requests yet.');
    });

    it('uploads a PDF (CSRF header required), lists and finds it, shows it on the dashboard, deletes it', async () => {
      const { browser } = await signedUp(baseUrl);
      await browser.request('GET', '/app/documents');
      const form = () => {
        const body = new FormData();
        body.append('file', new Blob([pdf], { type: 'application/pdf' }), 'lease <b>agreement</b>.pdf');
        return body;
      };
      const pdf = new Uint8Array(await makePdf(['A lease agreement']));
      const refused = await browser.request('POST', '/app/documents', { body: form(), headers: { Accept: 'application/json' } });
      expect(refused.status).to.equal(403);
      const uploaded = await browser.request('POST', '/app/documents', { body: form(), headers: { Accept: 'application/json', 'X-CSRF-Token': browser.csrf } });
      expect(uploaded.status, uploaded.text).to.equal(201);
      const document = JSON.parse(uploaded.text);
      expect(document).to.include({ fileName: 'lease <b>agreement</b>.pdf', status: 'ready', pageCount: 1 });

      const list = await browser.request('GET', '/app/documents');
      expect(list.text).to.contain('lease &lt;b&gt;agreement&lt;/b&gt;.pdf').and.not.contain('<b>agreement</b>');
      // Search is the REST API's: the index follows a moment after the upload.
      await eventually(async () => expect((await browser.request('GET', '/app/documents?q=lease')).text).to.contain(`/app/documents/${document.id}/delete`));
      const missed = await browser.request('GET', '/app/documents?q=invoice');
      expect(missed.text).to.contain('No document matches.');

      const dashboard = await browser.request('GET', '/app');
      expect(dashboard.text).to.contain('Document “lease &lt;b&gt;agreement&lt;/b&gt;.pdf” uploaded');

      const deleted = await browser.request('POST', `/app/documents/${document.id}/delete`, { form: { _csrf: browser.csrf } });
      expect(deleted.status).to.equal(303);
      expect((await browser.request('GET', '/app/documents')).text).to.contain('No documents yet.');
    });

    it('refuses a file that is not a PDF in words for a person; the REST API keeps its details', async () => {
      const { browser } = await signedUp(baseUrl);
      await browser.request('GET', '/app/documents');
      const body = new FormData();
      body.append('file', new Blob(['just some text'], { type: 'application/pdf' }), 'notes.pdf');
      const refused = await browser.request('POST', '/app/documents', { body, headers: { Accept: 'application/json', 'X-CSRF-Token': browser.csrf } });
      expect(refused.status).to.equal(400);
      expect(JSON.parse(refused.text)).to.deep.include({ error: 'validation_error', details: ['Choose a PDF file: this file is not a PDF.'] });
    });

    it('another account’s document is 404 in the console too', async () => {
      const { browser: owner } = await signedUp(baseUrl);
      const { id } = await uploadPdf(owner, await makePdf(), 'mine.pdf');
      const { browser: stranger } = await signedUp(baseUrl);
      await stranger.request('GET', '/app/documents');
      expect((await stranger.request('POST', `/app/documents/${id}/delete`, { form: { _csrf: stranger.csrf } })).status).to.equal(404);
    });
  });

  describe('the upload gate', () => {
    /** An app of its own on the shared system, with its own upload slots. */
    /** Sends the head and the first bytes of a 2 MiB JSON upload, then stalls, holding an upload slot. */
    async function stalledUpload(url: string, path: string, headers: Record<string, string>) {
      const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
      await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      const head = Object.entries({
        Host: '127.0.0.1',
        Accept: 'application/json',
        'Content-Type': 'application/json',
        'Content-Length': String(2 * 1024 * 1024),
        ...headers,
      });
      socket.write(
        `POST ${path} HTTP/1.1\r\n${head.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n{"fileName":"stalled.pdf","content":"${'A'.repeat(64 * 1024)}`,
      );
      socket.on('error', () => undefined);
      return socket;
    }

    it('is one per process: a stalled console upload and a stalled REST upload fill MAX_CONCURRENT_UPLOADS=2 for everyone', async () => {
      const app = await startApp({ MAX_CONCURRENT_UPLOADS: '2', BODY_IDLE_TIMEOUT_MS: '30000' });
      const sockets: net.Socket[] = [];
      try {
        const { browser: viaConsole } = await signedUp(app.url);
        const restKey = await apiKeyOf((await signedUp(app.url)).browser);
        const neighbour = client(app.url, await apiKeyOf((await signedUp(app.url)).browser));
        await viaConsole.request('GET', '/app/documents');
        const cookie = [...viaConsole.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        // Two accounts, one surface each: each holds one slot (an account may hold at most half of them).
        sockets.push(await stalledUpload(app.url, '/app/documents', { Cookie: cookie, 'X-CSRF-Token': viaConsole.csrf }));
        sockets.push(await stalledUpload(app.url, '/api/v1/documents', { Authorization: `Bearer ${restKey}` }));
        await eventually(async () => expect(app.uploads.holding, 'both hold a slot and wait for their bodies').to.equal(2));

        // A third account's large upload waits: with a gate per surface it would have found a free slot.
        const pdf = await makeLargePdf(1536 * 1024);
        let settled = false;
        const upload = neighbour('POST', '/api/v1/documents', {
          json: { fileName: 'third.pdf', fileSize: pdf.length, content: pdf.toString('base64') },
        }).finally(() => (settled = true));
        await eventually(async () => expect(app.uploads.pending, 'the third upload waits for a slot').to.equal(1));
        expect(settled, 'the third upload waited for a slot').to.equal(false);
        // The console's stalled upload hangs up: its slot goes to the waiting upload.
        sockets[0].destroy();
        const uploaded = await upload;
        expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
      } finally {
        for (const socket of sockets) socket.destroy();
        await app.close();
      }
    });
  });
});
