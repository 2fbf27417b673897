import crypto from 'node:crypto';
import { expect } from 'chai';
import { FAILED_LOGINS_PER_EMAIL, FAILED_LOGINS_PER_EMAIL_AND_CLIENT } from '../../src/console/loginLimits';
import { startApp } from '../support/app';
import { consoleClient, mailedLink, PASSWORD, signedUp, type ConsoleClient } from '../support/consoleClient';

// On an api of its own that trusts 127.0.0.1 as its proxy: each client of a test comes from an
// X-Forwarded-For network of its own (a /64 of the documentation range), so no test or earlier run on the
// same PostgreSQL database shares its counts.
describe('the console’s limit on failed logins (POST /app/login)', function () {
  this.timeout(120_000);
  let baseUrl: string;
  let api: Awaited<ReturnType<typeof startApp>> | undefined;

  before(async () => {
    api = await startApp({ TRUST_PROXY: '127.0.0.1' }, { publicUrlIsUrl: true });
    baseUrl = api.url;
  });
  after(async () => {
    await api?.close();
  });

  /** The /64 of a network no other test or run uses, and one address in it. */
  const newNetwork = () => `2001:db8:${crypto.randomBytes(6).toString('hex').match(/.{4}/g)!.join(':')}`;
  const from = (network: string, host = '1') => ({ 'X-Forwarded-For': `${network}::${host}` });
  const stranger = () => consoleClient(baseUrl, from(newNetwork()));
  /** A person with an account, signed up (and so trusted) in a browser of their own network. */
  const owner = () => signedUp(baseUrl, from(newNetwork()));
  const logIn = (client: ConsoleClient, email: string, password: string) => client.submit('/app/login', '/app/login', { email, password });

  it(`40 wrong passwords at once from one client: exactly ${FAILED_LOGINS_PER_EMAIL_AND_CLIENT} are checked (401), the rest 429 with Retry-After`, async () => {
    const { email } = await owner();
    const client = stranger();
    await client.request('GET', '/app/login');
    const answers = await Promise.all(Array.from({ length: 40 }, (_, n) => client.post('/app/login', { email, password: `wrong password ${n}` })));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 401)).to.have.length(FAILED_LOGINS_PER_EMAIL_AND_CLIENT);
    expect(statuses.filter((status) => status === 429)).to.have.length(40 - FAILED_LOGINS_PER_EMAIL_AND_CLIENT);
    for (const answer of answers.filter((one) => one.status === 429)) {
      expect(Number(answer.headers.get('retry-after'))).to.be.within(1, 900);
      expect(answer.text).to.contain('Too many failed attempts.');
    }
    // That client stays refused, the right password too; the owner, elsewhere, is not.
    expect((await logIn(client, email, PASSWORD)).status).to.equal(429);
    expect((await logIn(consoleClient(baseUrl, from(newNetwork())), email, PASSWORD)).status).to.equal(303);
  });

  it('a stranger’s failures lock out the stranger only: the owner logs in from their own network, new browser or not', async () => {
    const { email, browser } = await owner();
    const network = newNetwork();
    const attacker = consoleClient(baseUrl, from(network));
    for (let n = 0; n < FAILED_LOGINS_PER_EMAIL_AND_CLIENT; n++) expect((await logIn(attacker, email, `guess ${n} of many`)).status).to.equal(401);
    expect((await logIn(attacker, email, 'one guess too many')).status).to.equal(429);
    // Changing address inside the same /64 changes nothing.
    expect((await logIn(consoleClient(baseUrl, from(network, 'beef')), email, PASSWORD)).status).to.equal(429);

    expect((await logIn(browser, email, PASSWORD)).status).to.equal(303);
    expect((await logIn(consoleClient(baseUrl, from(newNetwork())), email, PASSWORD)).status).to.equal(303);
  });

  it(`guesses from many networks: past ${FAILED_LOGINS_PER_EMAIL} for one e-mail, only a browser the owner has logged in from gets in`, async () => {
    const { email, browser } = await owner();
    for (let network = 0; network < FAILED_LOGINS_PER_EMAIL / FAILED_LOGINS_PER_EMAIL_AND_CLIENT; network++) {
      const attacker = stranger();
      await attacker.request('GET', '/app/login');
      const answers = await Promise.all(
        Array.from({ length: FAILED_LOGINS_PER_EMAIL_AND_CLIENT }, (_, n) => attacker.post('/app/login', { email, password: `guess ${network}-${n}` })),
      );
      expect(answers.map((answer) => answer.status)).to.deep.equal(Array(FAILED_LOGINS_PER_EMAIL_AND_CLIENT).fill(401));
    }
    const newcomer = await logIn(consoleClient(baseUrl, from(newNetwork())), email, PASSWORD);
    expect(newcomer.status).to.equal(429);
    expect(newcomer.text).to.contain('from elsewhere');
    expect(Number(newcomer.headers.get('retry-after'))).to.be.within(1, 900);
    // The owner's own browser (its device cookie), from any network.
    expect((await logIn(browser, email, PASSWORD)).status).to.equal(303);
  });

  it('a browser the owner has used counts its own failures: 10 refuse it, not the owner elsewhere', async () => {
    const { email, browser } = await owner();
    for (let n = 0; n < 10; n++) expect((await logIn(browser, email, `typo ${n} in it`)).status).to.equal(401);
    expect((await logIn(browser, email, PASSWORD)).status).to.equal(429);
    expect((await logIn(consoleClient(baseUrl, from(newNetwork())), email, PASSWORD)).status).to.equal(303);
  });

  it('a successful password reset lifts every limit on its e-mail', async () => {
    const { email, browser } = await owner();
    const network = newNetwork();
    const attacker = consoleClient(baseUrl, from(network));
    await attacker.request('GET', '/app/login');
    await Promise.all(Array.from({ length: 60 }, (_, n) => attacker.post('/app/login', { email, password: `guess ${n} again` })));
    for (let other = 0; other < FAILED_LOGINS_PER_EMAIL / FAILED_LOGINS_PER_EMAIL_AND_CLIENT; other++) {
      const more = stranger();
      for (let n = 0; n < FAILED_LOGINS_PER_EMAIL_AND_CLIENT; n++) await logIn(more, email, `guess ${other}-${n} elsewhere`);
    }
    for (let n = 0; n < 10; n++) await logIn(browser, email, `typo ${n} again`);
    expect((await logIn(attacker, email, PASSWORD)).status).to.equal(429);
    expect((await logIn(browser, email, PASSWORD)).status).to.equal(429);
    expect((await logIn(consoleClient(baseUrl, from(newNetwork())), email, PASSWORD)).status).to.equal(429);

    // The owner, on the attacker's network even, proves the inbox.
    const resetting = consoleClient(baseUrl, from(network, '7'));
    await resetting.submit('/app/password/forgot', '/app/password/forgot', { email });
    const path = await mailedLink(email, '/app/password/reset/');
    await resetting.request('GET', path);
    expect((await resetting.request('POST', path, { form: { _csrf: resetting.csrf, password: 'a fresh start at last' } })).status).to.equal(303);

    expect((await logIn(consoleClient(baseUrl, from(network, '8')), email, 'a fresh start at last')).status).to.equal(303);
    expect((await logIn(browser, email, 'a fresh start at last')).status).to.equal(303);
    expect((await logIn(consoleClient(baseUrl, from(newNetwork())), email, 'a fresh start at last')).status).to.equal(303);
  });

  it('after a reset, a browser trusted under the old password is a stranger again', async () => {
    const { email, browser: lost } = await owner();
    const resetting = consoleClient(baseUrl, from(newNetwork()));
    await resetting.submit('/app/password/forgot', '/app/password/forgot', { email });
    const path = await mailedLink(email, '/app/password/reset/');
    await resetting.request('GET', path);
    expect((await resetting.request('POST', path, { form: { _csrf: resetting.csrf, password: 'after the lost laptop' } })).status).to.equal(303);

    for (let network = 0; network < FAILED_LOGINS_PER_EMAIL / FAILED_LOGINS_PER_EMAIL_AND_CLIENT; network++) {
      const attacker = stranger();
      for (let n = 0; n < FAILED_LOGINS_PER_EMAIL_AND_CLIENT; n++) await logIn(attacker, email, `guess ${network}-${n} later`);
    }
    expect((await logIn(lost, email, 'after the lost laptop')).status).to.equal(429);
    await resetting.request('GET', '/app'); // logged in since the reset: its token is on the dashboard
    expect((await resetting.post('/app/login', { email, password: 'after the lost laptop' })).status).to.equal(303);
  });

  it('an unknown e-mail is counted like a known one', async () => {
    const client = stranger();
    const unknown = `nobody-${crypto.randomBytes(6).toString('hex')}@example.com`;
    for (let n = 0; n < FAILED_LOGINS_PER_EMAIL_AND_CLIENT; n++) expect((await logIn(client, unknown, `guess ${n} for nobody`)).status).to.equal(401);
    expect((await logIn(client, unknown, 'one more for nobody')).status).to.equal(429);
  });
});
