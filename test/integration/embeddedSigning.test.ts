import crypto from 'node:crypto';
import { expect } from 'chai';
import { createSigningRequest, eventually } from '../support/signing';
import { createTestAccount } from '../support/system';
import { client } from '../support/http';

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
const embedTokenOf = (url: string) => new URL(url).pathname.split('/').pop()!;
const sessionOf = (page: string) => JSON.parse(/<script type="application\/json" id="signet-embed">(.*?)<\/script>/.exec(page)![1]);

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

describe('GET /embed/{token}', function () {
  this.timeout(60_000);

  async function embedded(body: Record<string, unknown> = {}) {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const signer = signingRequest.signers[0];
    const made = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signer.id}/embed`, {
      json: { allowedOrigins: ['https://app.example.com', 'http://127.0.0.1:8080'], ...body },
    });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    return { ...account, signingRequest, signer, url: made.body.url as string, open: client(account.system.url!) };
  }

  it('opens once: a page framable by exactly the allowed origins with a session of that signer; then 410 link_expired', async () => {
    const { url, open, signingRequest, signer, request } = await embedded({ returnUrl: 'https://app.example.com/done' });
    const path = new URL(url).pathname;
    const first = await open('GET', path, { headers: { 'User-Agent': 'Embedding browser/1.0' } });
    expect(first.status).to.equal(200);
    expect(first.headers.get('content-security-policy')).to.include('frame-ancestors https://app.example.com http://127.0.0.1:8080');
    expect(first.headers.get('content-security-policy')).not.to.include("frame-ancestors 'none'");
    expect(first.headers.get('x-frame-options')).to.equal(null);
    expect(first.headers.get('cache-control')).to.equal('no-store');
    const page = sessionOf(first.body);
    expect(page).to.include({ signingRequestId: signingRequest.id, signerId: signer.id, returnUrl: 'https://app.example.com/done', locale: null });
    expect(page.allowedOrigins).to.deep.equal(['https://app.example.com', 'http://127.0.0.1:8080']);
    const view = await open('GET', `/sign/${page.session}/request`);
    expect(view.status).to.equal(200);
    expect(view.body.signer.id).to.equal(signer.id);
    expect(view.body.request.id).to.equal(signingRequest.id);

    const again = await open('GET', path, { headers: { Accept: 'application/json' } });
    expect(again.status).to.equal(410);
    expect(again.body).to.deep.equal({
      error: 'link_expired',
      message: 'This embedded signing URL has been opened already or has expired: it opens once. Make a new one.',
    });
    const againPage = await open('GET', path);
    expect(againPage.status).to.equal(410);
    expect(againPage.body).to.include('This signing link has expired');
    expect(againPage.body).not.to.include(page.session);
    expect(againPage.headers.get('content-security-policy')).to.include('frame-ancestors https://app.example.com http://127.0.0.1:8080');
    expect(sessionOf(againPage.body).session).to.equal(undefined);

    // The open that made the session is a step of the audit trail, with its browser; the refused ones are not.
    const trail = await request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`);
    const opened = trail.body.data.filter((step: { action: string }) => step.action === 'embedded_session_opened');
    expect(opened).to.have.length(1);
    expect(opened[0]).to.include({ signerId: signer.id, actor: signer.email, ipAddress: '127.0.0.1', userAgent: 'Embedding browser/1.0' });
    expect(opened[0].data).to.deep.equal({ allowedOrigins: ['https://app.example.com', 'http://127.0.0.1:8080'] });

    // Every other signer page keeps refusing to be framed.
    const unknown = await open('GET', '/embed/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.status).to.equal(404);
    expect(unknown.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    const linked = await open('GET', `/sign/${page.session}`);
    expect(linked.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
  });

  it('wears the account’s brand, as the page of an e-mail link does', async () => {
    const account = await createTestAccount();
    expect((await account.request('PATCH', '/api/v1/account/branding', { json: { name: 'Acme Contracts' } })).status).to.equal(200);
    const { signingRequest } = await createSigningRequest(account.request);
    const made = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/embed`, {
      json: { allowedOrigins: ['https://app.example.com'] },
    });
    const open = client(account.system.url!);
    const page = await open('GET', new URL(made.body.url).pathname);
    expect(page.body).to.include('<title>Sign a document · Acme Contracts</title>');
    expect(page.body).not.to.include('Signet<');
    const again = await open('GET', new URL(made.body.url).pathname);
    expect(again.status).to.equal(410);
    expect(again.body).to.include('<title>Link expired · Acme Contracts</title>');
  });

  it('10 opens of one URL at once: exactly one session, nine 410', async () => {
    const { url, open, db, signer } = await embedded();
    const path = new URL(url).pathname;
    const answers = await Promise.all(Array.from({ length: 10 }, () => open('GET', path)));
    expect(answers.map((answer) => answer.status).sort()).to.deep.equal([200, ...Array(9).fill(410)]);
    const sessions = await db('signer_tokens').where({ signer_id: signer.id }).whereNotNull('embedded_link_hash');
    expect(sessions).to.have.length(1);
    expect(sessions[0].embedded_link_hash).to.equal(sha256(embedTokenOf(url)));
    expect(await db('audit_trail').where({ signer_id: signer.id, action: 'embedded_session_opened' })).to.have.length(1);
  });

  it('an unopened URL past its time is 410 (its expiry moved into the past), and a session lasts at most an hour', async () => {
    const expired = await embedded({ expiresInSeconds: 30 });
    await expired
      .db('embedded_signing_links')
      .where({ token_hash: sha256(embedTokenOf(expired.url)) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const late = await expired.open('GET', new URL(expired.url).pathname, { headers: { Accept: 'application/json' } });
    expect(late.status).to.equal(410);
    expect(late.body.error).to.equal('link_expired');
    expect(await expired.db('signer_tokens').where({ signer_id: expired.signer.id }).whereNotNull('embedded_link_hash')).to.have.length(0);

    const fresh = await embedded();
    const opened = await fresh.open('GET', new URL(fresh.url).pathname);
    const page = sessionOf(opened.body);
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
      return sessionOf((await open('GET', new URL(made.body.url).pathname)).body).session as string;
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
