import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { consoleClient, signedUp as signedUpInConsole, uploadPdf, type ConsoleClient } from '../support/consoleClient';
import { makePdf } from '../support/pdfs';
import { sharedSystem } from '../support/system';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A fresh account signed up in the console, logged in, on its documents page (for the token). */
async function signedUp(baseUrl: string) {
  const { browser } = await signedUpInConsole(baseUrl, {}, 'Templates Ltd');
  await browser.request('GET', '/app/documents');
  return browser;
}

const uploaded = (browser: ConsoleClient, pdf: Buffer, fileName = 'lease.pdf') => uploadPdf(browser, pdf, fileName);

/** A 2-page PDF with text tags printed on page 2 (see test/integration/templates.test.ts). */
async function makeTaggedPdf() {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  pdf.addPage([595, 842]).drawText('Lease agreement', { x: 60, y: 760, size: 20, font });
  const second = pdf.addPage([595, 842]);
  second.drawText('{{signature:tenant}}', { x: 60, y: 200, size: 14, font });
  second.drawText('{{date:tenant}}', { x: 300, y: 200, size: 14, font });
  return Buffer.from(await pdf.save());
}

const signatureField = { role: 'tenant', type: 'signature', page: 2, x: 60, y: 100, width: 200, height: 40 };

describe('the console’s templates and document view (/app/templates, /app/documents/:id)', function () {
  this.timeout(60_000);
  let baseUrl: string;

  before(async () => {
    baseUrl = (await sharedSystem()).url!;
  });

  describe('GET /app/templates', () => {
    it('sends a visitor without a session to the login page', async () => {
      for (const path of ['/app/templates', '/app/templates/new', `/app/documents/doc_${'0'.repeat(26)}`]) {
        const response = await consoleClient(baseUrl).request('GET', path);
        expect(response.status, path).to.equal(302);
        expect(response.location).to.equal('/app/login');
      }
    });
  });

  describe('POST /app/templates (the editor’s save)', () => {
    it('creates a template from JSON with the CSRF header, answers 201 {id}; the list and the preview show it', async () => {
      const browser = await signedUp(baseUrl);
      const document = await uploaded(browser, await makePdf(['Lease', 'Signatures']));
      const editor = await browser.request('GET', `/app/templates/new?documentId=${document.id}`);
      expect(editor.status).to.equal(200);
      expect(editor.text)
        .to.contain('id="template-editor"')
        .and.contain(`/app/documents/${document.id}/pages/2.png`)
        .and.contain('/app/assets/templateEditor.js');
      expect(editor.text).to.contain('<script type="application/json" id="editor-pages">[[595,842],[595,842]]</script>');

      const created = await browser.postJson('/app/templates', {
        name: 'Lease <b>template</b>',
        documentId: document.id,
        roles: [{ name: 'tenant' }],
        fields: [signatureField, { role: 'tenant', type: 'text', label: 'rent', page: 1, x: 100, y: 500, width: 120, height: 20 }],
      });
      expect(created.status, created.text).to.equal(201);
      expect(Object.keys(created.json)).to.deep.equal(['id']);
      expect(created.json.id).to.match(/^tpl_[0-9a-z]{26}$/);

      const list = await browser.request('GET', '/app/templates');
      expect(list.status).to.equal(200);
      expect(list.headers.get('x-ratelimit-limit'), 'the REST API’s GET /templates limit').to.equal('30');
      expect(list.text)
        .to.contain(`href="/app/templates/${created.json.id}"`)
        .and.contain('Lease &lt;b&gt;template&lt;/b&gt;')
        .and.contain(`href="/app/documents/${document.id}">lease.pdf`);
      expect(list.text).to.contain('<td data-label="Fields">2</td>');

      const preview = await browser.request('GET', `/app/templates/${created.json.id}`);
      expect(preview.status).to.equal(200);
      expect(preview.text).to.contain(`href="/app/requests/new?templateId=${created.json.id}"`).and.contain(`/app/templates/${created.json.id}/pages/2.png`);
      expect(preview.text).to.contain('<td data-label="Label">rent</td>').and.contain('<span class="mono">60, 100; 200 × 40</span>');
    });

    it('refuses fields that break the template rules with 400 and every problem in details, creating nothing', async () => {
      const browser = await signedUp(baseUrl);
      const document = await uploaded(browser, await makePdf(['One page']));
      const response = await browser.postJson('/app/templates', {
        name: 'Broken',
        documentId: document.id,
        roles: [{ name: 'tenant' }],
        fields: [
          { role: 'tenant', type: 'text', page: 3, x: 10, y: 10, width: 50, height: 20 },
          { role: 'landlord', type: 'signature', page: 1, x: 500, y: 10, width: 200, height: 20 },
        ],
      });
      expect(response.status).to.equal(400);
      expect(response.json.error).to.equal('validation_error');
      expect(response.json.details).to.include.members([
        'fields.0.page must be at most 1: the PDF has 1 page(s)',
        'fields.1.role must be one of the roles (tenant): "landlord" is not',
        'fields.1 must lie inside page 1 (595 × 842 points)',
        'roles.0 ("tenant") must have at least one signature field',
      ]);
      const schema = await browser.postJson('/app/templates', {
        name: '',
        documentId: document.id,
        fields: [{ role: 'tenant', type: 'stamp', page: 0, x: -1, y: 0, width: 0, height: 1 }],
      });
      expect(schema.status).to.equal(400);
      expect(schema.json.details)
        .to.include('name is required')
        .and.include(
          'fields.0.type must be one of: signature, initials, date, text, checkbox, number, email, phone, radio, dropdown, multiSelect, checkboxGroup, calculated, signerName, signerEmail, staticText, image, attachment',
        );
      expect((await browser.request('GET', '/app/templates')).text).to.contain('No templates yet.');
    });

    it('without the CSRF token is 403 and creates nothing', async () => {
      const browser = await signedUp(baseUrl);
      const document = await uploaded(browser, await makePdf(['Lease', 'Signatures']));
      const body = { name: 'No token', documentId: document.id, roles: [{ name: 'tenant' }], fields: [signatureField] };
      const missing = await browser.request('POST', '/app/templates', { json: body });
      expect(missing.status).to.equal(403);
      const wrong = await browser.request('POST', '/app/templates', { json: body, headers: { 'X-CSRF-Token': 'x'.repeat(43) } });
      expect(wrong.status).to.equal(403);
      expect((await browser.request('GET', '/app/templates')).text).to.contain('No templates yet.');
    });

    it('finds text tags (a dry run), and creates the template with their fields', async () => {
      const browser = await signedUp(baseUrl);
      const document = await uploaded(browser, await makeTaggedPdf());
      const found = await browser.postJson(`/app/documents/${document.id}/detect-fields`, {});
      expect(found.status, found.text).to.equal(200);
      expect(found.json.roles).to.deep.equal(['tenant']);
      expect(found.json.fields.map((field: { type: string; page: number }) => [field.type, field.page])).to.deep.equal([
        ['signature', 2],
        ['date', 2],
      ]);
      const created = await browser.postJson('/app/templates', { name: 'Tagged', documentId: document.id, detectFields: true });
      expect(created.status, created.text).to.equal(201);
      const preview = await browser.request('GET', `/app/templates/${created.json.id}`);
      expect(preview.text).to.contain('<td data-label="Type">date</td>');
    });
  });

  describe('page images and the original', () => {
    it('renders a page as a real PNG, refuses pages out of range, and serves the original PDF', async () => {
      const browser = await signedUp(baseUrl);
      const pdf = await makePdf(['Lease', 'Signatures']);
      const document = await uploaded(browser, pdf);
      const pageImage = await browser.request('GET', `/app/documents/${document.id}/pages/2.png`);
      expect(pageImage.status).to.equal(200);
      expect(pageImage.headers.get('content-type')).to.equal('image/png');
      expect(pageImage.bytes.subarray(0, 8).equals(PNG_SIGNATURE)).to.equal(true);
      expect(pageImage.bytes.readUInt32BE(16), 'width: one pixel per point').to.equal(595);
      expect(pageImage.bytes.readUInt32BE(20)).to.equal(842);
      expect((await browser.request('GET', `/app/documents/${document.id}/pages/3.png`)).status).to.equal(400);
      for (const page of ['0', 'abc', '1.5', '100001'])
        expect((await browser.request('GET', `/app/documents/${document.id}/pages/${page}.png`)).status, page).to.equal(404);

      const created = await browser.postJson('/app/templates', {
        name: 'Lease',
        documentId: document.id,
        roles: [{ name: 'tenant' }],
        fields: [signatureField],
      });
      const preview = await browser.request('GET', `/app/templates/${created.json.id}/pages/2.png`);
      expect(preview.status).to.equal(200);
      expect(preview.bytes.subarray(0, 8).equals(PNG_SIGNATURE)).to.equal(true);
      expect(preview.bytes.equals(pageImage.bytes), 'the field is drawn on it').to.equal(false);
      expect((await browser.request('GET', `/app/templates/${created.json.id}/pages/3.png`)).status).to.equal(400);
      expect((await browser.request('GET', `/app/templates/${created.json.id}/pages/0.png`)).status).to.equal(404);

      const original = await browser.request('GET', `/app/documents/${document.id}/file`);
      expect(original.status).to.equal(200);
      expect(original.headers.get('content-type')).to.equal('application/pdf');
      expect(original.headers.get('content-disposition')).to.equal("attachment; filename*=UTF-8''lease.pdf");
      expect(original.bytes.equals(pdf)).to.equal(true);
    });
  });

  describe('GET /app/documents/:id', () => {
    it('shows the facts, lazy page images with alt text, and links to act on the document; the list links to it', async () => {
      const browser = await signedUp(baseUrl);
      const document = await uploaded(browser, await makePdf(['Lease', 'Signatures']), 'lease & co.pdf');
      const list = await browser.request('GET', '/app/documents');
      expect(list.text).to.contain(`<a href="/app/documents/${document.id}">lease &amp; co.pdf</a>`);
      const view = await browser.request('GET', `/app/documents/${document.id}`);
      expect(view.status).to.equal(200);
      expect(view.text).to.contain(document.sha256).and.contain('<h1 class="document-name">lease &amp; co.pdf</h1>');
      expect(view.text).to.contain(
        `<img src="/app/documents/${document.id}/pages/2.png" width="595" height="842" loading="lazy" alt="Page 2 of lease &amp; co.pdf">`,
      );
      expect(view.text)
        .to.contain(`href="/app/requests/new?documentId=${document.id}"`)
        .and.contain(`href="/app/templates/new?documentId=${document.id}"`)
        .and.contain(`href="/app/documents/${document.id}/file"`);
      expect(view.text).to.contain(`action="/app/documents/${document.id}/delete"`);
    });
  });

  describe('another account’s ids, and ids that cannot be', () => {
    it('are 404 on every page, image, download and action, and change nothing', async () => {
      const owner = await signedUp(baseUrl);
      const document = await uploaded(owner, await makePdf(['Lease', 'Signatures']));
      const template = (
        await owner.postJson('/app/templates', { name: 'Mine', documentId: document.id, roles: [{ name: 'tenant' }], fields: [signatureField] })
      ).json;
      const stranger = await signedUp(baseUrl);
      for (const path of [
        `/app/templates/${template.id}`,
        `/app/templates/${template.id}/pages/1.png`,
        `/app/documents/${document.id}`,
        `/app/documents/${document.id}/pages/1.png`,
        `/app/documents/${document.id}/file`,
        `/app/templates/new?documentId=${document.id}`,
        `/app/templates/${document.id}`,
        '/app/templates/tpl_nope',
        '/app/documents/tpl_01jd8x3c6hf1z8k3q2v5n7m9pt',
        '/app/templates/new?documentId=nope',
      ]) {
        expect((await stranger.request('GET', path)).status, path).to.equal(404);
      }
      expect((await stranger.request('POST', `/app/templates/${template.id}/delete`, { form: { _csrf: stranger.csrf } })).status).to.equal(404);
      expect((await stranger.postJson(`/app/documents/${document.id}/detect-fields`, {})).status).to.equal(404);
      const theirs = await stranger.postJson('/app/templates', {
        name: 'Theirs',
        documentId: document.id,
        roles: [{ name: 'tenant' }],
        fields: [signatureField],
      });
      expect(theirs.status).to.equal(400);
      expect(theirs.json.details).to.include('documentId must name a document of this account');
      expect((await owner.request('GET', `/app/templates/${template.id}`)).status).to.equal(200);
    });
  });

  describe('POST /app/templates/:id/delete', () => {
    it('needs the CSRF token, then deletes the template and returns to the list', async () => {
      const browser = await signedUp(baseUrl);
      const document = await uploaded(browser, await makePdf(['Lease', 'Signatures']));
      const { id } = (
        await browser.postJson('/app/templates', { name: 'Short-lived', documentId: document.id, roles: [{ name: 'tenant' }], fields: [signatureField] })
      ).json;
      expect((await browser.request('POST', `/app/templates/${id}/delete`, { form: {} })).status).to.equal(403);
      const deleted = await browser.request('POST', `/app/templates/${id}/delete`, { form: { _csrf: browser.csrf } });
      expect(deleted.status).to.equal(303);
      expect(deleted.location).to.equal('/app/templates');
      expect((await browser.request('GET', `/app/templates/${id}`)).status).to.equal(404);
      expect((await browser.request('GET', '/app/templates')).text).to.contain('No templates yet.');
    });
  });
});
