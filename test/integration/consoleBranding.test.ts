import { expect } from 'chai';
import { dataUrl, pngOf } from '../support/branding';
import { signedUp } from '../support/consoleClient';
import { sharedSystem } from '../support/system';

describe('the console’s brand settings (/app/settings/branding)', function () {
  this.timeout(60_000);
  let baseUrl: string;
  before(async () => {
    baseUrl = (await sharedSystem()).url!;
  });

  it('saves the brand with the REST API’s rules, and uploads and removes the logo', async () => {
    const { browser } = await signedUp(baseUrl);
    const empty = await browser.request('GET', '/app/settings/branding');
    expect(empty.status).to.equal(200);
    expect(empty.text).to.include('<h1>Branding</h1>').and.include('No logo.');

    const pale = await browser.submit('/app/settings/branding', '/app/settings/branding', {
      name: 'Acme Rentals',
      accentColor: '#ffcc00',
      emailFooter: '',
      supportEmail: '',
    });
    expect(pale.status).to.equal(400);
    expect(pale.text).to.include('accentColor must have a contrast ratio of at least 4.5:1 against white').and.include('value="Acme Rentals"');

    const saved = await browser.post('/app/settings/branding', { name: 'Acme Rentals', accentColor: '#1d4ed8', emailFooter: 'Leith.', supportEmail: '' });
    expect(saved.status).to.equal(303);
    const shown = await browser.request('GET', saved.location!);
    expect(shown.text).to.include('Saved.').and.include('value="#1d4ed8"').and.include('value="Leith."');

    const logo = await browser.postJson('/app/settings/branding/logo', { logo: dataUrl('image/png', pngOf(30, 10)) });
    expect(logo.status, logo.text).to.equal(200);
    expect(logo.json).to.include({ name: 'Acme Rentals', accentColor: '#1d4ed8', emailFooter: 'Leith.', supportEmail: null });
    const refused = await browser.postJson('/app/settings/branding/logo', { logo: Buffer.from('not an image').toString('base64') });
    expect(refused.status).to.equal(400);
    expect(refused.json.details).to.include('logo must be a PNG or an SVG image');
    const withLogo = await browser.request('GET', '/app/settings/branding');
    expect(withLogo.text).to.include(`src="${new URL(logo.json.logo.url).pathname}"`);
    expect((await browser.post('/app/settings/branding/logo/remove')).status).to.equal(303);
    expect((await browser.request('GET', '/app/settings/branding')).text).to.include('No logo.');
  });

  it('refuses a name that reads as an address, as the REST API does, and keeps the saved one', async () => {
    const { browser } = await signedUp(baseUrl);
    const form = { accentColor: '', emailFooter: '', supportEmail: '' };
    expect((await browser.submit('/app/settings/branding', '/app/settings/branding', { ...form, name: 'Acme Rentals' })).status).to.equal(303);
    const spoof = await browser.submit('/app/settings/branding', '/app/settings/branding', { ...form, name: 'PayPal Security <security@paypal.com>' });
    expect(spoof.status).to.equal(400);
    expect(spoof.text)
      .to.include('name must not contain @, &lt; or &gt;, or a character like them (“&lt;” U+003C): a From name must not read as an e-mail address')
      .and.include('value="PayPal Security &lt;security@paypal.com&gt;"');
    const fullwidth = await browser.submit('/app/settings/branding', '/app/settings/branding', { ...form, name: 'PayPal Security ＜security＠paypal.com＞' });
    expect(fullwidth.status).to.equal(400);
    expect(fullwidth.text).to.include('(“＜” U+FF1C)');
    expect((await browser.request('GET', '/app/settings/branding')).text).to.include('value="Acme Rentals"');
  });
});
