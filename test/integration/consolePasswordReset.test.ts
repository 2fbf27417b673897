import crypto from 'node:crypto';
import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { startApp } from '../support/app';
import { consoleClient, newEmail, PASSWORD, signedUp } from '../support/consoleClient';
import { sharedSystem } from '../support/system';

// These run on an api of their own that trusts 127.0.0.1 as its proxy: each test comes from an
// X-Forwarded-For address of its own, so the per-address limits of one test (or an earlier run on the
// same PostgreSQL database) never reach another.
describe('the console’s password reset (/app/password) and sign-up limit', function () {
  this.timeout(60_000);
  let baseUrl: string;
  let api: Awaited<ReturnType<typeof startApp>> | undefined;
  let db: Awaited<ReturnType<typeof sharedSystem>>['database']['knex'];
  const SIGNUPS_PER_HOUR = 3;

  before(async () => {
    const system = await sharedSystem();
    db = system.database.knex;
    api = await startApp({ TRUST_PROXY: '127.0.0.1', CONSOLE_SIGNUPS_PER_HOUR: String(SIGNUPS_PER_HOUR) }, { publicUrlIsUrl: true });
    baseUrl = api.url;
  });
  after(async () => {
    await api?.close();
  });

  /** A documentation-range IPv6 address no other test or run uses. */
  const fromNewAddress = () => ({ 'X-Forwarded-For': `2001:db8:${crypto.randomBytes(6).toString('hex').match(/.{4}/g)!.join(':')}::1` });
  const browser = () => consoleClient(baseUrl, fromNewAddress());
  const person = () => signedUp(baseUrl, fromNewAddress());

  /** The reset mails to this address (a sign-up's verification mail is not one). */
  const outbox = (email: string) => db('mail_outbox').where('to_address', email).andWhere('idempotency_key', 'like', 'password-reset:%').orderBy('id', 'desc');
  /** The reset link of the newest mail to this address, as a path. */
  async function resetPath(email: string) {
    const [mail] = await outbox(email);
    expect(mail, `a mail to ${email}`).to.not.equal(undefined);
    const link = /http:\/\/127\.0\.0\.1:\d+(\/app\/password\/reset\/[\w-]{43})\b/.exec(mail.text)![1];
    expect(mail.html).to.contain(link);
    return link;
  }
  const forgot = (client: ReturnType<typeof browser>, email: string) => client.submit('/app/password/forgot', '/app/password/forgot', { email });

  describe('GET and POST /app/password/forgot', () => {
    it('is linked from the login page; a POST without the CSRF token is 403 and sends nothing', async () => {
      const client = browser();
      expect((await client.request('GET', '/app/login')).text).to.contain('href="/app/password/forgot"');
      const { email } = await person();
      await client.request('GET', '/app/password/forgot');
      expect((await client.request('POST', '/app/password/forgot', { form: { email } })).status).to.equal(403);
      expect(await outbox(email)).to.have.length(0);
    });

    it('answers the same for a known and an unknown e-mail; only the known one gets a mail, storing only the token’s hash', async () => {
      const { email } = await person();
      const unknown = newEmail();
      const known = await forgot(browser(), email.toUpperCase());
      const nobody = await forgot(browser(), unknown);
      expect(known.status).to.equal(200);
      expect(nobody.status).to.equal(200);
      const answer = (text: string) => /<p class="notice" role="status">([^<]+)<\/p>/.exec(text)![1];
      expect(answer(known.text)).to.equal(answer(nobody.text)).and.contain('If an account exists');
      expect(await outbox(unknown)).to.have.length(0);
      expect(await db('users').where({ email: unknown }).first()).to.equal(undefined);

      const path = await resetPath(email);
      const token = path.split('/').pop()!;
      const [mail] = await outbox(email);
      expect(mail.subject).to.equal('Set your Signet password');
      expect(mail.idempotency_key).not.to.contain(token);
      const stored = await db('password_resets')
        .where({ token_hash: crypto.createHash('sha256').update(token).digest('hex') })
        .first();
      expect(stored.used_at).to.equal(null);
      expect(stored.expires_at.getTime() - Date.now()).to.be.within(59 * 60_000, 60 * 60_000);
    });

    it('refuses a malformed e-mail with 400 and the problem', async () => {
      const response = await forgot(browser(), 'not-an-address');
      expect(response.status).to.equal(400);
      expect(response.text).to.contain('email must be a valid e-mail address');
    });

    it('is limited per e-mail: the 6th request of the hour is 429 with Retry-After, from any address', async () => {
      const { email } = await person();
      for (let n = 1; n <= 5; n++) expect((await forgot(browser(), email)).status, `request ${n}`).to.equal(200);
      const limited = await forgot(browser(), email);
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 3600);
      expect(await outbox(email)).to.have.length(5);
    });

    it('is limited per address: the 31st request of the hour is 429, whatever the e-mail', async () => {
      const client = browser();
      for (let n = 1; n <= 30; n++) expect((await forgot(client, newEmail())).status, `request ${n}`).to.equal(200);
      const limited = await forgot(client, newEmail());
      expect(limited.status).to.equal(429);
      expect(limited.headers.get('retry-after')).to.match(/^\d+$/);
      expect((await forgot(browser(), newEmail())).status).to.equal(200);
    });
  });

  describe('GET and POST /app/password/reset/:token', () => {
    it('sets the password once, ends every other session, logs in, and the link never works again', async () => {
      const { browser: first, email } = await person();
      const second = browser();
      expect((await second.submit('/app/login', '/app/login', { email, password: PASSWORD })).status).to.equal(303);
      const path = (await forgot(browser(), email), await resetPath(email));

      const resetting = browser();
      const form = await resetting.request('GET', path);
      expect(form.status).to.equal(200);
      expect(form.text).to.contain('<label for="password">New password for').and.contain(email);
      const short = await resetting.request('POST', path, { form: { _csrf: resetting.csrf, password: 'short' } });
      expect(short.status).to.equal(400);
      expect(short.text).to.contain('password must be at least 10 characters');
      expect((await resetting.request('POST', path, { form: { password: 'a brand new password' } })).status).to.equal(403);

      const done = await resetting.request('POST', path, { form: { _csrf: resetting.csrf, password: 'a brand new password' } });
      expect(done.status).to.equal(303);
      expect(done.location).to.equal('/app');
      expect((await resetting.request('GET', '/app')).status).to.equal(200);
      for (const old of [first, second]) expect((await old.request('GET', '/app')).location).to.equal('/app/login');

      expect((await browser().submit('/app/login', '/app/login', { email, password: PASSWORD })).status).to.equal(401);
      expect((await browser().submit('/app/login', '/app/login', { email, password: 'a brand new password' })).status).to.equal(303);

      const again = browser();
      const reused = await again.request('GET', path);
      expect(reused.status).to.equal(400);
      expect(reused.text).to.contain('This link does not work');
      await again.request('GET', '/app/password/forgot'); // the invalid-link page has no form, so no CSRF token
      const posted = await again.request('POST', path, { form: { _csrf: again.csrf, password: 'yet another password' } });
      expect(posted.status).to.equal(400);
      expect((await browser().submit('/app/login', '/app/login', { email, password: 'yet another password' })).status).to.equal(401);
    });

    it('an expired link is 400 and changes nothing; so are unknown and malformed tokens', async () => {
      const { email } = await person();
      await forgot(browser(), email);
      const path = await resetPath(email);
      await db('password_resets')
        .where({ token_hash: crypto.createHash('sha256').update(path.split('/').pop()!).digest('hex') })
        .update({ expires_at: new Date(Date.now() - 1000) });
      const client = browser();
      expect((await client.request('GET', path)).status).to.equal(400);
      await client.request('GET', '/app/password/forgot');
      expect((await client.request('POST', path, { form: { _csrf: client.csrf, password: 'a brand new password' } })).status).to.equal(400);
      expect((await browser().submit('/app/login', '/app/login', { email, password: PASSWORD })).status).to.equal(303);
      expect((await client.request('GET', `/app/password/reset/${crypto.randomBytes(32).toString('base64url')}`)).status).to.equal(400);
      expect((await client.request('GET', '/app/password/reset/short')).status).to.equal(400);
    });

    it('a newer link voids nothing until used; using one voids the others', async () => {
      const { email } = await person();
      await forgot(browser(), email);
      const older = await resetPath(email);
      await forgot(browser(), email);
      const newer = await resetPath(email);
      expect(newer).not.to.equal(older);
      expect((await browser().request('GET', older)).status).to.equal(200);
      const client = browser();
      await client.request('GET', newer);
      expect((await client.request('POST', newer, { form: { _csrf: client.csrf, password: 'a brand new password' } })).status).to.equal(303);
      expect((await browser().request('GET', older)).status).to.equal(400);
    });

    it('lets the owner of an account created with the CLI (no console login yet) set a first password', async () => {
      const email = newEmail();
      const account = await createAccount(db, { email, plan: 'business', name: 'Operator-made' });
      await forgot(browser(), email);
      const user = await db('users').where({ email }).first();
      expect(user).to.include({ account_id: account.id, password_hash: null });
      const client = browser();
      await client.request('GET', await resetPath(email));
      const done = await client.request('POST', await resetPath(email), { form: { _csrf: client.csrf, password: 'a first password' } });
      expect(done.status).to.equal(303);
      const dashboard = await client.request('GET', '/app');
      expect(dashboard.status).to.equal(200);
      expect(dashboard.text).to.contain('Operator-made');
      expect((await db('accounts').where({ id: account.id }).first()).email_verified_at).to.be.an.instanceOf(Date);
    });
  });

  describe('POST /app/signup', () => {
    it(`is limited per address: sign-up ${SIGNUPS_PER_HOUR + 1} of the hour is 429 with Retry-After and creates nothing`, async () => {
      const headers = fromNewAddress();
      for (let n = 1; n <= SIGNUPS_PER_HOUR; n++) await signedUp(baseUrl, headers);
      const email = newEmail();
      const limited = await consoleClient(baseUrl, headers).submit('/app/signup', '/app/signup', { accountName: 'One too many', email, password: PASSWORD });
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 3600);
      expect(limited.text).to.contain('Too many sign-ups');
      expect(await db('users').where({ email }).first()).to.equal(undefined);
      await signedUp(baseUrl, fromNewAddress());
    });
  });
});
