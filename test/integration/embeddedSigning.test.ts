import crypto from 'node:crypto';
import { expect } from 'chai';
import { createSigningRequest, eventually } from '../support/signing';
import { createTestAccount } from '../support/system';
import { client, type Request } from '../support/http';

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
const embedTokenOf = (url: string) => new URL(url).pathname.split('/').pop()!;

describe('POST /api/v1/signatures/{id}/signers/{signerId}/embed', function () {
  this.timeout(60_000);
  const embed = (request: Awaited<ReturnType<typeof createTestAccount>>['request'], requestId: string, signerId: string, json: unknown) =>
    request('POST', `/api/v1/signatures/${requestId}/signers/${signerId}/embed`, { json });

  it('201: a one-time URL under the public URL, expiring within 300 s; only its hash is stored, with the origins as browsers write them', async () => {
    const { request, db, system } = await createTestAccount();
    const { signingRequest } = await createSigningRequest(request);
    const signer = signingRequest.signers[0];
    const before = Date.now();
    const made = await embed(request, signingRequest.id, signer.id, {
      allowedOrigins: ['https://App.Example.com', 'https://app.example.com:443', 'http://127.0.0.1:8080'],
      returnUrl: 'https://app.example.com/done?tab=2',
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    expect(made.body.url).to.match(new RegExp(`^${system.url}/embed/[A-Za-z0-9_-]{43}$`));
    const expiresAt = Date.parse(made.body.expiresAt);
    expect(expiresAt).to.be.within(before + 299_000, Date.now() + 300_000);
    const token = embedTokenOf(made.body.url);
    const rows = await db('embedded_signing_links').where({ signer_id: signer.id });
    expect(rows).to.have.length(1);
    expect(rows[0].token_hash).to.equal(sha256(token));
    expect(rows[0].allowed_origins).to.deep.equal(['https://app.example.com', 'http://127.0.0.1:8080']);
    expect(rows[0].return_url).to.equal('https://app.example.com/done?tab=2');
    expect(JSON.stringify(rows)).not.to.include(token);
  });

  it('400 for what is not an origin, a path, a wildcard, more than 300 s, or an http returnUrl off the loopback', async () => {
    const { request } = await createTestAccount();
    const { signingRequest } = await createSigningRequest(request);
    const signer = signingRequest.signers[0];
    const cases: [unknown, string][] = [
      [{ allowedOrigins: ['app.example.com'] }, 'allowedOrigins.0 must be an origin'],
      [{ allowedOrigins: ['https://app.example.com/embed'] }, 'allowedOrigins.0 must be an origin'],
      [{ allowedOrigins: ['https://app.example.com/'] }, 'allowedOrigins.0 must be an origin'],
      [{ allowedOrigins: ['https://*.example.com'] }, 'allowedOrigins.0 must be an origin'],
      [{ allowedOrigins: ['*'] }, 'allowedOrigins.0 must be an origin'],
      [{ allowedOrigins: ['http://app.example.com'] }, 'allowedOrigins.0 must be an origin'],
      [{ allowedOrigins: ['https://[::1]'] }, 'allowedOrigins.0 must be an origin'],
      [{ allowedOrigins: [] }, 'allowedOrigins must have at least 1 item(s)'],
      [{ allowedOrigins: Array.from({ length: 11 }, (_, index) => `https://app${index}.example.com`) }, 'allowedOrigins must have at most 10 items'],
      [{ allowedOrigins: ['https://app.example.com'], expiresInSeconds: 301 }, 'expiresInSeconds must be at most 300'],
      [{ allowedOrigins: ['https://app.example.com'], returnUrl: 'http://app.example.com/done' }, 'returnUrl must be an https:// URL'],
      [{ allowedOrigins: ['https://app.example.com'], returnUrl: 'javascript:alert(1)' }, 'returnUrl must be an https:// URL'],
      [{ allowedOrigins: ['https://app.example.com'], locale: 'not a locale' }, 'locale must be a BCP 47 language tag'],
      [{}, 'allowedOrigins is required'],
    ];
    for (const [body, detail] of cases) {
      const refused = await embed(request, signingRequest.id, signer.id, body);
      expect(refused.status, JSON.stringify(body)).to.equal(400);
      expect(refused.body.error).to.equal('validation_error');
      expect(refused.body.details.join('\n'), JSON.stringify(body)).to.include(detail);
    }
  });

  it('404 for another account’s request or signer, 409 for a signer whose turn has not come, or a cc', async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const { signingRequest } = await createSigningRequest(owner.request, {
      signingOrder: 'sequential',
    });
    const [first, second] = signingRequest.signers;
    const body = { allowedOrigins: ['https://app.example.com'] };
    expect((await embed(other.request, signingRequest.id, first.id, body)).status).to.equal(404);
    const { signingRequest: theirs } = await createSigningRequest(other.request);
    expect((await embed(other.request, theirs.id, first.id, body)).status).to.equal(404);
    const notYet = await embed(owner.request, signingRequest.id, second.id, body);
    expect(notYet.status).to.equal(409);
    expect(notYet.body.message).to.include('not this signer’s turn');
    const { signingRequest: withCc } = await createSigningRequest(owner.request, {
      signers: [
        { name: 'Ada Lovelace', email: 'ada@example.com' },
        { name: 'Carbon Copy', email: 'cc@example.com', recipientType: 'cc' },
      ],
    });
    expect((await embed(owner.request, withCc.id, withCc.signers[1].id, body)).status).to.equal(409);
  });
});

/** The POST an embedded page makes from its frame: it uses the URL up and answers the session. */
async function startSession(open: Request, url: string) {
  const started = await open('POST', new URL(url).pathname);
  expect(started.status, JSON.stringify(started.body)).to.equal(200);
  return started.body as {
    session: string;
    signingRequestId: string;
    signerId: string;
    allowedOrigins: string[];
    returnUrl: string | null;
    locale: string | null;
  };
}

async function embedded(body: Record<string, unknown> = {}, account?: Awaited<ReturnType<typeof createTestAccount>>) {
  const owner = account ?? (await createTestAccount());
  const { signingRequest } = await createSigningRequest(owner.request);
  const signer = signingRequest.signers[0];
  const made = await owner.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signer.id}/embed`, {
    json: { allowedOrigins: ['https://app.example.com', 'http://127.0.0.1:8080'], ...body },
  });
  expect(made.status, JSON.stringify(made.body)).to.equal(201);
  const url = made.body.url as string;
  return { ...owner, signingRequest, signer, url, path: new URL(url).pathname, open: client(owner.system.url!) };
}

describe('GET /embed/{token}', function () {
  this.timeout(60_000);

  it('uses nothing up: every GET and HEAD gets a page framable by exactly the allowed origins, with nothing of the request in it', async () => {
    const { path, url, open, db, signingRequest, signer } = await embedded({ returnUrl: 'https://app.example.com/done' });
    for (const headers of [{ 'User-Agent': 'LinkPreviewBot/2.0' }, {}, { 'User-Agent': 'Embedding browser/1.0' }] as Record<string, string>[]) {
      const page = await open('GET', path, { headers });
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-security-policy')).to.include('frame-ancestors https://app.example.com http://127.0.0.1:8080');
      expect(page.headers.get('content-security-policy')).to.include("script-src 'self';");
      expect(page.headers.get('x-frame-options')).to.equal(null);
      expect(page.headers.get('cache-control')).to.equal('no-store');
      expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
      for (const secret of [signingRequest.id, signer.id, signer.email, signingRequest.title, 'https://app.example.com/done']) {
        expect(page.body).not.to.include(secret);
      }
      expect(page.body).to.include('<script type="module" src="/sign-assets/embed-open.js"></script>');
    }
    expect((await open('HEAD', path)).status).to.equal(200);
    const [link] = await db('embedded_signing_links').where({ token_hash: sha256(embedTokenOf(url)) });
    expect(link.used_at).to.equal(null);
    expect(await db('signer_tokens').where({ signer_id: signer.id }).whereNotNull('embedded_link_hash')).to.have.length(0);
    expect(await db('audit_trail').where({ signer_id: signer.id, action: 'embedded_session_opened' })).to.have.length(0);
    // Still usable after all of those.
    expect((await startSession(open, url)).signerId).to.equal(signer.id);
  });

  it('wears the account’s brand, as the page of an e-mail link does', async () => {
    const account = await createTestAccount();
    expect((await account.request('PATCH', '/api/v1/account/branding', { json: { name: 'Acme Contracts' } })).status).to.equal(200);
    const { path, open } = await embedded({}, account);
    const page = await open('GET', path);
    expect(page.body).to.include('<title>Sign a document · Acme Contracts</title>');
    expect(page.body).not.to.include('Signet<');
  });

  it('an unknown token: 404, a page nobody may frame; its POST 404 too', async () => {
    const { open } = await embedded();
    const unknown = await open('GET', '/embed/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.status).to.equal(404);
    expect(unknown.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    const posted = await open('POST', '/embed/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(posted.status).to.equal(404);
    expect(posted.body.error).to.equal('not_found');
  });
});

describe('POST /embed/{token}', function () {
  this.timeout(60_000);

  it('uses the URL up: a session of that signer and what its page needs, an audit step with the browser; then 410 link_expired', async () => {
    const { path, url, open, signingRequest, signer, request } = await embedded({ returnUrl: 'https://app.example.com/done' });
    const started = await open('POST', path, { headers: { 'User-Agent': 'Embedding browser/1.0' } });
    expect(started.status, JSON.stringify(started.body)).to.equal(200);
    expect(started.headers.get('cache-control')).to.equal('no-store');
    const page = started.body;
    expect(page).to.include({ signingRequestId: signingRequest.id, signerId: signer.id, returnUrl: 'https://app.example.com/done', locale: null });
    expect(page.allowedOrigins).to.deep.equal(['https://app.example.com', 'http://127.0.0.1:8080']);
    const view = await open('GET', `/sign/${page.session}/request`);
    expect(view.status).to.equal(200);
    expect(view.body.signer.id).to.equal(signer.id);
    expect(view.body.request.id).to.equal(signingRequest.id);

    const again = await open('POST', path);
    expect(again.status).to.equal(410);
    expect(again.body).to.include({
      error: 'link_expired',
      message: 'This embedded signing URL has been used already or has expired: it is used once. Make a new one.',
    });
    const loaded = await open('GET', path, { headers: { Accept: 'application/json' } });
    expect(loaded.status).to.equal(410);
    expect(loaded.body).to.deep.equal({
      error: 'link_expired',
      message: 'This embedded signing URL has been used already or has expired: it is used once. Make a new one.',
    });
    expect((await open('GET', path)).status).to.equal(410);
    expect(embedTokenOf(url)).to.have.length(43);

    // The POST that made the session is a step of the audit trail, with its browser; the refused ones are not.
    const trail = await request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`);
    const opened = trail.body.data.filter((step: { action: string }) => step.action === 'embedded_session_opened');
    expect(opened).to.have.length(1);
    expect(opened[0]).to.include({ signerId: signer.id, actor: signer.email, ipAddress: '127.0.0.1', userAgent: 'Embedding browser/1.0' });
    expect(opened[0].data).to.deep.equal({ allowedOrigins: ['https://app.example.com', 'http://127.0.0.1:8080'] });

    // The signer's pages of the session keep refusing to be framed.
    const linked = await open('GET', `/sign/${page.session}`);
    expect(linked.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
  });

  it('the 410 of a used or late URL shows nothing of it: no brand, request, signer, origins nor return URL, in its page or its headers', async () => {
    const account = await createTestAccount();
    expect((await account.request('PATCH', '/api/v1/account/branding', { json: { name: 'Acme Contracts' } })).status).to.equal(200);
    const used = await embedded({ returnUrl: 'https://app.example.com/done?tab=2' }, account);
    await startSession(used.open, used.url);
    const late = await embedded({ returnUrl: 'https://app.example.com/done?tab=2' }, account);
    await late
      .db('embedded_signing_links')
      .where({ token_hash: sha256(embedTokenOf(late.url)) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    for (const { open, path, signingRequest, signer } of [used, late]) {
      const secrets = [signingRequest.id, signer.id, signer.email, signingRequest.title, 'app.example.com', '127.0.0.1:8080', 'tab=2', 'Acme'];
      for (const [method, accept] of [
        ['GET', 'text/html'],
        ['GET', 'application/json'],
        ['POST', 'application/json'],
      ]) {
        const refused = await open(method, path, { headers: { Accept: accept } });
        expect(refused.status, `${method} ${accept}`).to.equal(410);
        const shown = [refused.bytes.toString(), ...refused.headers.values()].join('\n');
        for (const secret of secrets) expect(shown, `${method} ${accept}`).not.to.include(secret);
      }
      const page = await open('GET', path);
      expect(page.body).to.include('<title>Link expired · Signet</title>');
      expect(page.body).to.include('This signing link has expired');
      expect(page.body).not.to.include('signet-embed');
      expect(page.headers.get('content-security-policy')).to.include('frame-ancestors *');
      expect(page.headers.get('content-security-policy')).to.include("script-src 'self';");
    }
  });

  it('10 POSTs of one URL at once, among GETs: exactly one session, nine 410; the GETs use nothing up', async () => {
    const { path, url, open, db, signer } = await embedded();
    const posts = Array.from({ length: 10 }, () => open('POST', path));
    const gets = Array.from({ length: 10 }, () => open('GET', path));
    const answers = await Promise.all(posts);
    expect(answers.map((answer) => answer.status).sort()).to.deep.equal([200, ...Array(9).fill(410)]);
    for (const loaded of await Promise.all(gets)) expect(loaded.status).to.be.oneOf([200, 410]);
    const sessions = await db('signer_tokens').where({ signer_id: signer.id }).whereNotNull('embedded_link_hash');
    expect(sessions).to.have.length(1);
    expect(sessions[0].embedded_link_hash).to.equal(sha256(embedTokenOf(url)));
    expect(sessions[0].token_hash).to.equal(sha256(answers.find((answer) => answer.status === 200)!.body.session));
    expect(await db('audit_trail').where({ signer_id: signer.id, action: 'embedded_session_opened' })).to.have.length(1);
  });

  it('an unused URL past its time is 410 to GET and POST (its expiry moved into the past), and a session lasts at most an hour', async () => {
    const expired = await embedded({ expiresInSeconds: 30 });
    await expired
      .db('embedded_signing_links')
      .where({ token_hash: sha256(embedTokenOf(expired.url)) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    for (const method of ['GET', 'POST']) {
      const late = await expired.open(method, expired.path, { headers: { Accept: 'application/json' } });
      expect(late.status, method).to.equal(410);
      expect(late.body.error).to.equal('link_expired');
    }
    expect(await expired.db('signer_tokens').where({ signer_id: expired.signer.id }).whereNotNull('embedded_link_hash')).to.have.length(0);

    const fresh = await embedded();
    const page = await startSession(fresh.open, fresh.url);
    const [session] = await fresh.db('signer_tokens').where({ token_hash: sha256(page.session) });
    expect(new Date(session.expires_at).getTime()).to.be.at.most(Date.now() + 60 * 60 * 1000);
    // A session past its time: the signer's endpoints say link_expired.
    await fresh
      .db('signer_tokens')
      .where({ token_hash: sha256(page.session) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const document = await fresh.open('GET', `/sign/${page.session}/document`);
    expect(document.status).to.equal(410);
    expect(document.body.error).to.equal('link_expired');
  });
});

describe('an embedded session of a signer asked for an access code', function () {
  this.timeout(60_000);

  it('shows nothing before the code; the right code opens that session alone, not the next one nor the e-mail link', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, {
      signers: [{ name: 'Ada Lovelace', email: 'ada@example.com', verification: { method: 'access_code', code: 'Kite-42' } }],
    });
    const signer = signingRequest.signers[0];
    const open = client(account.system.url!);
    const session = async () => {
      const made = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signer.id}/embed`, {
        json: { allowedOrigins: ['https://app.example.com'] },
      });
      return (await startSession(open, made.body.url)).session;
    };
    const first = await session();
    const before = await open('GET', `/sign/${first}/request`);
    expect(before.status).to.equal(401);
    expect(before.body.error).to.equal('verification_required');
    expect(JSON.stringify(before.body)).not.to.include(signingRequest.title);
    expect((await open('GET', `/sign/${first}/verification`)).body).to.include({ method: 'access_code', verified: false });

    const right = await open('POST', `/sign/${first}/verification`, { json: { code: 'Kite-42' } });
    expect(right.status).to.equal(200);
    expect(right.headers.get('set-cookie')).to.equal(null);
    expect((await open('GET', `/sign/${first}/request`)).status).to.equal(200);
    expect((await open('GET', `/sign/${first}/verification`)).body.verified).to.equal(true);

    expect((await open('GET', `/sign/${await session()}/request`)).status).to.equal(401);
    const link = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signer.id}/link`);
    expect((await open('GET', `${new URL(link.body.url).pathname}/request`)).status).to.equal(401);
  });
});

describe('redirectUrl of a signing request', function () {
  this.timeout(60_000);

  it('is stored, returned, and shown to the signer’s page; http off the loopback is 400', async () => {
    const { request } = await createTestAccount();
    const { signingRequest } = await createSigningRequest(request, { redirectUrl: 'https://app.example.com/after?x=1' });
    expect(signingRequest.redirectUrl).to.equal('https://app.example.com/after?x=1');
    const read = await request('GET', `/api/v1/signatures/${signingRequest.id}`);
    expect(read.body.redirectUrl).to.equal('https://app.example.com/after?x=1');
    const link = await request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/link`);
    const view = await eventually(async () => {
      const answer = await request('GET', `${new URL(link.body.url).pathname}/request`);
      expect(answer.status).to.equal(200);
      return answer;
    });
    expect(view.body.request.redirectUrl).to.equal('https://app.example.com/after?x=1');

    const { signingRequest: plain } = await createSigningRequest(request);
    expect(plain.redirectUrl).to.equal(null);
    const refused = await request('POST', '/api/v1/signatures', {
      json: { document_id: plain.documentId, title: 'T', signers: [{ name: 'Ada', email: 'ada@example.com' }], redirectUrl: 'http://app.example.com/' },
    });
    expect(refused.status).to.equal(400);
    expect(refused.body.details.join('\n')).to.include('redirectUrl must be an https:// URL');
  });
});
