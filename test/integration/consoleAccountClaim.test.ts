import crypto from 'node:crypto';
import { expect } from 'chai';
import { createAccountWithKey } from '../../src/cli/accountWithKey';
import { client } from '../support/http';
import { consoleClient, mailedLink, newEmail, PASSWORD, signedUp, type ConsoleClient } from '../support/consoleClient';
import { createSigningRequest } from '../support/signing';
import { sharedSystem } from '../support/system';

/** A key made on the API keys page. */
async function apiKeyOf(browser: ConsoleClient) {
  await browser.request('GET', '/app/settings/api-keys');
  const created = await browser.request('POST', '/app/settings/api-keys', { form: { _csrf: browser.csrf, name: 'mine' } });
  expect(created.status, created.text).to.equal(201);
  return /value="(sk_live_[A-Za-z0-9]{43})"/.exec(created.text)![1];
}

const confirmBanner = 'aria-label="Confirm your e-mail address"';
const tokenHash = (path: string) => crypto.createHash('sha256').update(path.split('/').pop()!).digest('hex');

// The attack: the operator makes owner@… with the CLI; someone signs up in the console with the
// same address (another letter case), makes a key; the owner's first-password reset then logged the owner
// into that second account. Addresses now belong to one account, and an unproven sign-up only reads.
describe('who owns an address: unique accounts, proven sign-ups, resets to the owner', function () {
  this.timeout(60_000);
  let baseUrl: string;
  let db: Awaited<ReturnType<typeof sharedSystem>>['database']['knex'];

  before(async () => {
    const system = await sharedSystem();
    baseUrl = system.url!;
    db = system.database.knex;
  });

  const verifyLink = (email: string) => mailedLink(email, '/app/email/verify/');
  const forgot = (email: string) => consoleClient(baseUrl).submit('/app/password/forgot', '/app/password/forgot', { email });

  it('the issue’s reproduction: the address is refused, a fresh one sends nothing until proven, and the owner’s reset lands in the owner’s account', async () => {
    // The operator makes owner@… with the CLI's function.
    const ownerEmail = `owner-${crypto.randomBytes(6).toString('hex')}@example.com`;
    const { account: operatorMade, apiKey: operatorKey } = await createAccountWithKey(db, { email: ownerEmail, plan: 'business', name: 'Owner Ltd' });
    expect(operatorMade.emailVerified, 'the operator vouches for the address').to.equal(true);
    expect((await client(baseUrl, operatorKey)('POST', '/api/v1/documents', { json: {} })).status).to.equal(400);

    // The attacker signs up with the same address in another letter case: refused, nothing made.
    const attacker = consoleClient(baseUrl);
    const taken = await attacker.submit('/app/signup', '/app/signup', { accountName: 'Not the owner', email: ownerEmail.toUpperCase(), password: PASSWORD });
    expect(taken.status).to.equal(409);
    expect(taken.text).to.contain('An account with this e-mail already exists');
    expect(await db('accounts').whereRaw('lower(email) = ?', [ownerEmail])).to.have.length(1);
    expect(await db('users').whereRaw('lower(email) = ?', [ownerEmail])).to.have.length(0);

    // With a fresh address: signed up and logged in, but the address is unproven; a key reads and nothing else.
    const { browser, email } = await signedUp(baseUrl, {}, 'Attacker', { verify: false });
    const api = client(baseUrl, await apiKeyOf(browser));
    expect((await api('GET', '/api/v1/account')).status).to.equal(200);
    const refused = await api('POST', '/api/v1/signatures', {
      json: { document_id: 'doc_x', title: 'Phish', signers: [{ name: 'Victim', email: 'victim@example.com' }] },
    });
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include({ error: 'email_unverified' });
    expect(refused.body.message).to.contain('not confirmed').and.contain('link');

    // Following the link e-mailed at sign-up proves it: the same key now sends.
    expect((await browser.request('GET', '/app')).text).to.contain(confirmBanner);
    const link = await verifyLink(email);
    const confirmed = await browser.request('GET', link);
    expect(confirmed.status).to.equal(200);
    expect(confirmed.text).to.contain('Address confirmed');
    expect(confirmed.text, 'no banner asking for what was just done').not.to.contain(confirmBanner);
    expect((await browser.request('GET', '/app')).text).not.to.contain(confirmBanner);
    await createSigningRequest(api);

    // The link a second time: refused.
    const again = await browser.request('GET', link);
    expect(again.status).to.equal(400);
    expect(again.text).to.contain('This link does not work');

    // The owner's first-password reset lands in the account the operator made.
    await forgot(ownerEmail);
    const resetPath = await mailedLink(ownerEmail, '/app/password/reset/');
    const owner = consoleClient(baseUrl);
    await owner.request('GET', resetPath);
    expect((await owner.request('POST', resetPath, { form: { _csrf: owner.csrf, password: 'the owner’s own password' } })).status).to.equal(303);
    const dashboard = await owner.request('GET', '/app');
    expect(dashboard.text).to.contain('Owner Ltd').and.not.contain('Attacker');
    expect((await db('users').whereRaw('lower(email) = ?', [ownerEmail]).first()).account_id).to.equal(operatorMade.id);
    expect((await client(baseUrl, operatorKey)('GET', '/api/v1/account')).status, 'the operator’s key stays').to.equal(200);
  });

  it('an expired link is refused and proves nothing', async () => {
    const { browser, email } = await signedUp(baseUrl, {}, 'Late', { verify: false });
    const link = await verifyLink(email);
    await db('email_verifications')
      .where({ token_hash: tokenHash(link) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const expired = await browser.request('GET', link);
    expect(expired.status).to.equal(400);
    expect(expired.text).to.contain('more than 24 hours old');
    const { account_id: accountId } = await db('users').where({ email }).first('account_id');
    expect((await db('accounts').where({ id: accountId }).first()).email_verified_at).to.equal(null);
    expect(
      (
        await db('email_verifications')
          .where({ token_hash: tokenHash(link) })
          .first()
      ).used_at,
    ).to.equal(null);
  });

  it('a link stores only its hash and lasts 24 hours; the account’s name is not in the mail', async () => {
    const { email } = await signedUp(baseUrl, {}, 'Click <here> for a prize', { verify: false });
    const link = await verifyLink(email);
    const token = link.split('/').pop()!;
    const stored = await db('email_verifications')
      .where({ token_hash: tokenHash(link) })
      .first();
    expect(stored.used_at).to.equal(null);
    expect(stored.expires_at.getTime() - stored.created_at.getTime()).to.be.closeTo(24 * 3_600_000, 60_000);
    const [mail] = await db('mail_outbox').where('to_address', email);
    expect(mail.subject).to.equal('Confirm your e-mail address for Signet');
    expect(mail.idempotency_key).not.to.contain(token);
    expect(mail.html).to.contain(link);
    expect(`${mail.text}${mail.html}`).not.to.contain('prize');
  });

  it('the link confirms only for the person who signed up: a stranger’s click shows a log-in and changes nothing', async () => {
    const { email } = await signedUp(baseUrl, {}, 'Careful', { verify: false });
    const link = await verifyLink(email);
    const accountId = (await db('users').where({ email }).first('account_id')).account_id;
    const verified = async () => (await db('accounts').where({ id: accountId }).first()).email_verified_at !== null;

    const stranger = consoleClient(baseUrl);
    const shown = await stranger.request('GET', link);
    expect(shown.status).to.equal(200);
    expect(shown.text).to.contain('Log in and confirm');
    expect((await stranger.request('GET', link)).status, 'a look uses nothing up').to.equal(200);
    expect((await stranger.request('POST', link, { form: { password: PASSWORD } })).status, 'without the CSRF token').to.equal(403);
    const wrong = await stranger.request('POST', link, { form: { _csrf: stranger.csrf, password: 'not the password' } });
    expect(wrong.status).to.equal(401);
    expect(await verified()).to.equal(false);

    // Someone logged in as another person is a stranger too.
    const { browser: other } = await signedUp(baseUrl);
    expect((await other.request('GET', link)).text).to.contain('Log in and confirm');
    expect(await verified()).to.equal(false);

    const right = await stranger.request('POST', link, { form: { _csrf: stranger.csrf, password: PASSWORD } });
    expect(right.status).to.equal(200);
    expect(right.text).to.contain('Address confirmed');
    expect(right.text).not.to.contain(confirmBanner);
    expect(await verified()).to.equal(true);
    expect((await stranger.request('GET', '/app')).status, 'and logged in').to.equal(200);
  });

  it('every write of the REST API is 403 email_unverified for an unproven account, every read is let through, and the OpenAPI document says so', async () => {
    const { browser } = await signedUp(baseUrl, {}, 'Reader', { verify: false });
    const api = client(baseUrl, await apiKeyOf(browser));
    const openapi = (await api('GET', '/api/v1/openapi.json')).body;
    let writes = 0;
    for (const [path, operations] of Object.entries(
      openapi.paths as Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>,
    )) {
      for (const [method, operation] of Object.entries(operations)) {
        if (operation.security?.length === 0) continue; // the signer's pages take no key
        const response = await api(method.toUpperCase(), `/api/v1${path.replace(/\{\w+\}/g, 'x')}`, method === 'get' ? {} : { json: {} });
        if (method === 'get') {
          expect(response.body?.error, `${method} ${path}`).not.to.equal('email_unverified');
        } else {
          writes++;
          expect([response.status, response.body.error], `${method} ${path}`).to.deep.equal([403, 'email_unverified']);
          expect(operation.responses, `${method} ${path} documents its 403`).to.have.property('403');
        }
      }
    }
    expect(writes).to.be.above(10);
  });

  it('the console refuses an unproven account’s writes but its API keys, shows a banner, and sends the link again a few times an hour', async () => {
    const { browser, email } = await signedUp(baseUrl, {}, 'Waiting', { verify: false });
    const dashboard = await browser.request('GET', '/app');
    expect(dashboard.status).to.equal(200);
    expect(dashboard.text).to.contain('Confirm your e-mail address.').and.contain('action="/app/email/verification"');

    await browser.request('GET', '/app/documents');
    const upload = await browser.request('POST', '/app/documents', { json: {}, headers: { 'X-CSRF-Token': browser.csrf } });
    expect(upload.status).to.equal(403);
    expect(upload.json).to.include({ error: 'email_unverified' });
    await browser.request('GET', '/app/requests/new');
    const send = await browser.request('POST', '/app/requests', { form: { _csrf: browser.csrf, title: 'Phish' } });
    expect(send.status).to.equal(403);
    expect(send.text).to.contain('Confirm your e-mail address first');
    await apiKeyOf(browser);

    const mails = () => db('mail_outbox').where('to_address', email).andWhere('idempotency_key', 'like', 'email-verification:%');
    expect(await mails()).to.have.length(1);
    for (let n = 1; n <= 5; n++) {
      const resent = await browser.post('/app/email/verification');
      expect(resent.status, `resend ${n}`).to.equal(200);
      expect(resent.text).to.contain(`We sent a new link to ${email}`);
    }
    const limited = await browser.post('/app/email/verification');
    expect(limited.status).to.equal(429);
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 3600);
    expect(await mails()).to.have.length(6);

    // Any unused link works; the banner goes.
    expect((await browser.request('GET', await verifyLink(email))).status).to.equal(200);
    expect((await browser.request('GET', '/app')).text).not.to.contain('Confirm your e-mail address.');
  });

  it('a reset for an address someone else signed up with and never proved gives the inbox’s owner the account, and the squatter nothing', async () => {
    const { browser: squatter, email } = await signedUp(baseUrl, {}, 'Squatter', { verify: false });
    const squattersKey = client(baseUrl, await apiKeyOf(squatter));
    expect((await squattersKey('GET', '/api/v1/account')).status).to.equal(200);

    await forgot(email);
    const resetPath = await mailedLink(email, '/app/password/reset/');
    const owner = consoleClient(baseUrl);
    await owner.request('GET', resetPath);
    expect((await owner.request('POST', resetPath, { form: { _csrf: owner.csrf, password: 'mine, not theirs' } })).status).to.equal(303);

    expect((await squattersKey('GET', '/api/v1/account')).status, 'the squatter’s key is revoked').to.equal(401);
    expect((await squatter.request('GET', '/app')).location, 'the squatter’s session is over').to.equal('/app/login');
    const dashboard = await owner.request('GET', '/app');
    expect(dashboard.status).to.equal(200);
    expect(dashboard.text).not.to.contain('Confirm your e-mail address.');
    const ownersKey = client(baseUrl, await apiKeyOf(owner));
    await createSigningRequest(ownersKey);
  });

  it('the operator’s CLI refuses an address another account has, in any letter case, and a malformed one', async () => {
    const email = newEmail();
    await createAccountWithKey(db, { email, plan: 'free' });
    for (const again of [email, email.toUpperCase(), ` ${email} `]) {
      const error = await createAccountWithKey(db, { email: again, plan: 'free' }).catch((refusal) => refusal);
      expect(error, again).to.include({ status: 409 });
    }
    expect(await createAccountWithKey(db, { email: 'not an address', plan: 'free' }).catch((refusal) => refusal)).to.include({ status: 400 });
    expect(await db('accounts').whereRaw('lower(email) = ?', [email])).to.have.length(1);
  });
});
