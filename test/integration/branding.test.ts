import { expect } from 'chai';
import { client } from '../support/http';
import { dataUrl, hostileSvg, pngOf } from '../support/branding';
import { createSigningRequest, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount, useSharedSystem } from '../support/system';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const brand = {
  name: 'Acme Rentals',
  accentColor: '#1d4ed8',
  emailFooter: 'Acme Rentals Ltd, 1 Harbour Street, Leith.',
  supportEmail: 'help@acme.example',
};

// The line every e-mail to a signer ends with, which no brand can change.
const identityOf = (account: Account) => `Sent via Signet on behalf of ${account.account.email}, the verified e-mail address of the sending account.`;

const patch = (account: Account, json: unknown) => account.request('PATCH', '/api/v1/account/branding', { json });
const problemsOf = (response: { status: number; body: { details?: string[] } }) => {
  expect(response.status, JSON.stringify(response.body)).to.equal(400);
  return response.body.details!.join(' | ');
};

describe('account branding', function () {
  this.timeout(120_000);
  useSharedSystem();

  describe('PATCH /api/v1/account/branding', () => {
    it('sets, reads back and clears the brand; the logo is served from this origin as an image only', async () => {
      const account = await createTestAccount();
      const empty = await account.request('GET', '/api/v1/account/branding');
      expect(empty.body).to.deep.equal({ name: null, logo: null, accentColor: null, emailFooter: null, supportEmail: null, updatedAt: null });

      const logo = pngOf(40, 20);
      const set = await patch(account, { ...brand, logo: dataUrl('image/png', logo) });
      expect(set.status, JSON.stringify(set.body)).to.equal(200);
      expect(set.body).to.include(brand);
      expect(set.body.logo).to.include({ contentType: 'image/png', size: logo.length });
      expect((await account.request('GET', '/api/v1/account/branding')).body).to.deep.equal(set.body);

      const served = await client(account.system.url!)('GET', new URL(set.body.logo.url).pathname);
      expect(served.status).to.equal(200);
      expect(served.headers.get('content-type')).to.equal('image/png');
      expect(served.headers.get('content-security-policy')).to.equal("default-src 'none'; style-src 'unsafe-inline'");
      expect(served.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(served.bytes.equals(logo)).to.equal(true);

      // Plain base64 is taken too; null clears a field, a field left out keeps its value.
      const cleared = await patch(account, { name: null, logo: null, emailFooter: 'Thanks.' });
      expect(cleared.status, JSON.stringify(cleared.body)).to.equal(200);
      expect(cleared.body).to.include({ name: null, logo: null, accentColor: brand.accentColor, emailFooter: 'Thanks.', supportEmail: brand.supportEmail });
      const plain = await patch(account, { logo: logo.toString('base64') });
      expect(plain.body.logo.contentType).to.equal('image/png');
    });

    it('refuses, naming the rule: a bad colour, too little contrast, control characters, a bad e-mail', async () => {
      const account = await createTestAccount();
      expect(problemsOf(await patch(account, { accentColor: 'blue' }))).to.include('accentColor must be a colour as #rrggbb');
      const pale = problemsOf(await patch(account, { accentColor: '#ffcc00' }));
      expect(pale).to.include('accentColor must have a contrast ratio of at least 4.5:1 against white (WCAG 2.1 AA').and.include('#ffcc00 has 1.');
      // Just under and just over the line: #767676 is the lightest grey that passes.
      expect((await patch(account, { accentColor: '#777777' })).status).to.equal(400);
      expect((await patch(account, { accentColor: '#767676' })).status).to.equal(200);
      expect(problemsOf(await patch(account, { name: 'Acme\u0007' }))).to.include('name must not contain control characters');
      expect(problemsOf(await patch(account, { emailFooter: 'a\u0000b' }))).to.include('emailFooter must not contain NUL characters');
      expect(problemsOf(await patch(account, { emailFooter: 'x'.repeat(501) }))).to.include('emailFooter must be at most 500 characters');
      expect(problemsOf(await patch(account, { supportEmail: 'not an address' }))).to.include('supportEmail must be a valid e-mail address');
      expect((await account.request('GET', '/api/v1/account/branding')).body.name).to.equal(null);
    });

    it('refuses a name that reads as an address (the issue’s PayPal name, fullwidth lookalikes, a domain), on a free account too', async () => {
      const account = await createTestAccount('free');
      const refused = await patch(account, { name: 'PayPal Security <security@paypal.com>' });
      expect(refused.status).to.equal(400);
      expect(refused.body).to.deep.include({
        error: 'validation_error',
        message: 'The request is invalid.',
        details: ['name must not contain @, < or >, or a character like them (“<” U+003C): a From name must not read as an e-mail address'],
      });
      expect(problemsOf(await patch(account, { name: 'PayPal Security ＜security＠paypal.com＞' })))
        .to.include('name must not contain @, < or >')
        .and.include('U+FF1C');
      expect(problemsOf(await patch(account, { name: 'PayPal ‹security› ﹫ paypal' }))).to.include('(“‹” U+2039)');
      expect(problemsOf(await patch(account, { name: 'paypal.com' }))).to.include('name must not look like a domain name (“paypal.com”)');
      expect((await account.request('GET', '/api/v1/account/branding')).body.name).to.equal(null);
      expect((await patch(account, { name: 'Acme Rentals Ltd.' })).status).to.equal(200);
    });

    it('refuses a logo that is too large, not an image, or a PNG whose header claims a decompression bomb', async () => {
      const account = await createTestAccount();
      expect(problemsOf(await patch(account, { logo: dataUrl('image/png', Buffer.alloc(201 * 1024, 1)) }))).to.include('logo must be at most 200 KB');
      expect(problemsOf(await patch(account, { logo: Buffer.from('GIF89a not a logo').toString('base64') }))).to.include('logo must be a PNG or an SVG image');
      expect(problemsOf(await patch(account, { logo: 'not base64 at all!' }))).to.include('logo must be base64, or a data: URL');
      const bomb = pngOf(2, 2, { width: 100_000, height: 100_000 });
      expect(bomb.length).to.be.below(200);
      expect(problemsOf(await patch(account, { logo: dataUrl('image/png', bomb) }))).to.include('(this one is 100000 × 100000)');
      expect(problemsOf(await patch(account, { logo: dataUrl('image/png', pngOf(2001, 1)) }))).to.include('2000 on a side');
      const truncated = pngOf(40, 20).subarray(0, 50);
      expect(problemsOf(await patch(account, { logo: dataUrl('image/png', truncated) }))).to.include('logo must be a PNG image that can be decoded');
    });

    it('keeps of a hostile SVG only what draws: no script, handler, foreignObject or reference outside the file', async () => {
      const account = await createTestAccount();
      const set = await patch(account, { logo: dataUrl('image/svg+xml', Buffer.from(hostileSvg)) });
      expect(set.status, JSON.stringify(set.body)).to.equal(200);
      expect(set.body.logo.contentType).to.equal('image/svg+xml');
      const served = await client(account.system.url!)('GET', new URL(set.body.logo.url).pathname);
      expect(served.headers.get('content-type')).to.equal('image/svg+xml');
      expect(served.headers.get('content-security-policy')).to.equal("default-src 'none'; style-src 'unsafe-inline'");
      const svg = served.bytes.toString();
      for (const banned of [
        '<script',
        'alert',
        'onload',
        'onclick',
        '<style',
        'foreignObject',
        'iframe',
        '<image',
        'evil.example',
        'javascript:',
        'ENTITY',
        'inside',
      ])
        expect(svg, banned).not.to.include(banned);
      expect(svg).to.match(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(svg).to.include('<rect id="box"').and.include('fill="url(#g)"').and.include('<use href="#box">').and.include('>Acme</text>');
    });
  });

  describe('what signers see', () => {
    it('the signing page and every e-mail to a signer carry the brand, and "Signet" only in the line naming the sender', async () => {
      const account = await createTestAccount();
      const set = await patch(account, { ...brand, logo: dataUrl('image/png', pngOf(40, 20)) });
      expect(set.status).to.equal(200);
      const email = `ada-${Math.random().toString(36).slice(2)}@example.com`;
      const { signingRequest } = await createSigningRequest(account.request, {
        signers: [
          { name: 'Ada Lovelace', email, verification: { method: 'email_code' } },
          { name: 'Alan Turing', email: `alan-${Math.random().toString(36).slice(2)}@example.com` },
        ],
      });
      const url = await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id);
      const signer = client(account.system.url!);
      const page = await signer('GET', `/sign/${tokenOf(url)}`);
      expect(page.status).to.equal(200);
      const html = page.bytes.toString();
      expect(html)
        .to.include('<title>Sign a document · Acme Rentals</title>')
        .and.include(`src="${new URL(set.body.logo.url).pathname}"`);
      expect(html).to.include('alt="Acme Rentals"').and.include('mailto:help@acme.example').and.include(':root{--accent:#1d4ed8}');
      expect(html).not.to.include('Signet');
      // The accent colour is the page's one inline style, allowed by its hash and nothing else.
      expect(page.headers.get('content-security-policy')).to.match(/style-src 'self' 'sha256-[A-Za-z0-9+/]+=*'; /);

      expect((await signer('POST', `/sign/${tokenOf(url)}/verification/code`)).status).to.equal(200);
      expect((await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: { reason: 'Wrong dates' } })).status).to.equal(200);
      const kinds = ['invitation', 'verification-code', 'cancelled'];
      const mails = await waitForMails(account, email, kinds);
      for (const mail of mails) {
        const whole = [mail.from_address, mail.subject, mail.text, mail.html].join('\n').replaceAll(identityOf(account), '');
        expect(whole, mail.idempotency_key).not.to.include('Signet');
        expect(mail.from_address).to.match(/^"Acme Rentals" </);
        expect(mail.text).to.include('Sent by Acme Rentals').and.include(brand.emailFooter).and.include('help@acme.example');
        expect(mail.html).to.include(`src="${set.body.logo.url}"`).and.include('alt="Acme Rentals"');
      }
      expect(mails[0].html).to.include('background:#1d4ed8;color:#ffffff;');
    });

    it('every kind of e-mail to a signer ends with the account’s verified address, whatever the brand', async () => {
      const account = await createTestAccount();
      expect((await patch(account, { ...brand, emailFooter: 'Sent via Signet on behalf of security@paypal.com.' })).status).to.equal(200);
      const person = (name: string) => ({ name, email: `${name.toLowerCase()}-${Math.random().toString(36).slice(2)}@example.com` });
      const [ada, sam, dee, bob] = [person('Ada'), person('Sam'), person('Dee'), person('Bob')];
      const signer = client(account.system.url!);
      const linkOf = async (requestId: string, signerId: string) => tokenOf(await signingLinkOf(account.request, requestId, signerId));

      // Invited, reminded an hour later, sent a code, then cancelled.
      const { signingRequest: toCancel } = await createSigningRequest(account.request, { signers: [{ ...ada, verification: { method: 'email_code' } }] });
      await waitForMails(account, ada.email, ['invitation']);
      await account
        .db('signers')
        .where({ signing_request_id: toCancel.id })
        .update({ last_mailed_at: account.db.raw("now() - interval '61 minutes'") });
      const reminded = await account.request('POST', `/api/v1/signatures/${toCancel.id}/remind`);
      expect(reminded.status, JSON.stringify(reminded.body)).to.equal(200);
      expect((await signer('POST', `/sign/${await linkOf(toCancel.id, toCancel.signers[0].id)}/verification/code`)).status).to.equal(200);
      expect((await account.request('POST', `/api/v1/signatures/${toCancel.id}/cancel`, { json: { reason: 'Wrong dates' } })).status).to.equal(200);
      // Signed by its one signer: completed.
      const { signingRequest: toSign } = await createSigningRequest(account.request, { signers: [sam] });
      const signed = await signer('POST', `/sign/${await linkOf(toSign.id, toSign.signers[0].id)}/sign`, {
        json: { consent: true, signature: { type: 'typed', value: 'Sam' } },
      });
      expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
      // Declined by one signer: the other hears of it.
      const { signingRequest: toDecline } = await createSigningRequest(account.request, { signers: [dee, bob] });
      const declined = await signer('POST', `/sign/${await linkOf(toDecline.id, toDecline.signers[0].id)}/decline`, { json: { reason: 'No' } });
      expect(declined.status, JSON.stringify(declined.body)).to.equal(200);

      const mails = [
        ...(await waitForMails(account, ada.email, ['invitation', 'reminder', 'verification-code', 'cancelled'])),
        ...(await waitForMails(account, sam.email, ['completed'])),
        ...(await waitForMails(account, bob.email, ['declined'])),
      ];
      for (const mail of mails) {
        expect(mail.from_address, mail.idempotency_key).to.match(/^"Acme Rentals" </);
        expect(mail.text.trimEnd().split('\n').at(-1), mail.idempotency_key).to.equal(identityOf(account));
        expect(mail.html, mail.idempotency_key).to.include(`${identityOf(account)}</td></tr>`);
      }
    });

    it('a name stored before the rule that reads as an address is not used: the From name and the text are Signet’s', async () => {
      const account = await createTestAccount('free');
      const spoof = 'PayPal Security <security@paypal.com>';
      await account.db('account_brands').insert({ account_id: account.account.id, name: spoof });
      expect((await account.request('GET', '/api/v1/account/branding')).body.name).to.equal(spoof);
      const email = `ada-${Math.random().toString(36).slice(2)}@example.com`;
      const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email }] });
      const [invitation] = await waitForMails(account, email, ['invitation']);
      expect(invitation.from_address).to.equal('"Signet" <no-reply@signet.local>');
      for (const part of [invitation.subject, invitation.text, invitation.html]) expect(part).not.to.include('PayPal').and.not.include('paypal');
      expect(invitation.text).to.include('Sent by Signet on behalf of the sender.').and.include(identityOf(account));
      const url = await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id);
      const page = await client(account.system.url!)('GET', `/sign/${tokenOf(url)}`);
      expect(page.bytes.toString()).to.include('<title>Sign a document · Signet</title>').and.not.include('PayPal');
    });

    it('without a brand, pages and e-mails read as before', async () => {
      const account = await createTestAccount();
      const { signingRequest } = await createSigningRequest(account.request);
      const url = await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id);
      const page = await client(account.system.url!)('GET', `/sign/${tokenOf(url)}`);
      expect(page.bytes.toString()).to.include('<title>Sign a document · Signet</title>').and.not.include('brand-bar').and.not.include('<style>');
      expect(page.headers.get('content-security-policy')).to.include("style-src 'self';");
    });
  });
});

/** The outbox rows to `email` whose keys start with each of `kinds`, once all have been sent (bounded). */
async function waitForMails(account: Account, email: string, kinds: string[]) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = await account.db('mail_outbox').where('to_address', 'like', `%${email}%`).select('idempotency_key', 'from_address', 'subject', 'text', 'html');
    const found = kinds.map((kind) => rows.find((row) => row.idempotency_key.startsWith(kind)));
    if (found.every(Boolean)) return found as { idempotency_key: string; from_address: string; subject: string; text: string; html: string }[];
    if (Date.now() > deadline)
      throw new Error(`mails not sent: ${kinds.filter((_, index) => !found[index]).join(', ')} (found ${rows.map((row) => row.idempotency_key).join(', ')})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
