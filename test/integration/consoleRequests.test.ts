import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { createApiKey } from '../../src/apiKeys/service';
import { consoleClient, signedUp as signedUpInConsole, uploadPdf, type ConsoleClient } from '../support/consoleClient';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { eventually } from '../support/signing';
import { sharedSystem } from '../support/system';
import { uploadDocument } from '../support/documents';

describe('the console’s signing requests (/app/requests)', function () {
  this.timeout(90_000);
  let baseUrl: string;
  let db: Awaited<ReturnType<typeof sharedSystem>>['database']['knex'];

  before(async () => {
    const system = await sharedSystem();
    baseUrl = system.url!;
    db = system.database.knex;
  });

  /** A fresh account signed up in the console, logged in, with an API key for setting things up. */
  async function signedUp() {
    const { browser, email } = await signedUpInConsole(baseUrl);
    const { account_id: accountId } = await db('users').where({ email }).first('account_id');
    const { secret } = await createApiKey(db, accountId);
    return { browser, api: client(baseUrl, secret), accountId };
  }

  /** A PDF uploaded through the console's upload endpoint. */
  const uploaded = async (browser: ConsoleClient, fileName = 'contract.pdf') =>
    (await uploadPdf(browser, await makePdf(['A contract', 'Page two']), fileName)).id;

  const twoSigners = {
    'signers-0-name': 'Ada Lovelace',
    'signers-0-email': 'ada@example.com',
    'signers-1-name': 'Alan Turing',
    'signers-1-email': 'alan@example.com',
    'signers-2-name': '',
    'signers-2-email': '',
  };

  /** Sends a document from the console's form; answers the new request's id. */
  async function sent(browser: ConsoleClient, documentId: string, fields: Record<string, string> = {}) {
    await browser.request('GET', '/app/requests/new');
    const response = await browser.post('/app/requests', {
      document_id: documentId,
      title: 'Services agreement',
      message: 'Please sign.',
      ...twoSigners,
      signingOrder: 'parallel',
      expiresInDays: '30',
      reminderEveryDays: '3',
      ...fields,
    });
    expect(response.status, response.text).to.equal(303);
    const id = /^\/app\/requests\/(sr_[0-9a-z]{26})$/.exec(response.location ?? '')?.[1];
    expect(id, response.location ?? '').to.be.a('string');
    return id!;
  }

  describe('GET /app/requests/new and POST /app/requests', () => {
    it('needs a login', async () => {
      const response = await consoleClient(baseUrl).request('GET', '/app/requests/new');
      expect([response.status, response.location]).to.deep.equal([302, '/app/login']);
    });

    it('offers the account’s ready documents and three empty signer rows; sends to the signers in order', async () => {
      const { browser, api } = await signedUp();
      const documentId = await uploaded(browser);
      const form = await browser.request('GET', '/app/requests/new');
      expect(form.status).to.equal(200);
      expect(form.text).to.contain(`<option value="${documentId}">contract.pdf</option>`);
      expect(form.text.match(/<fieldset class="signer-row">/g)).to.have.length(3);
      expect(form.text).to.contain('<label for="title">Title</label>').and.contain('<label>E-mail <input name="signers-2-email"');

      const id = await sent(browser, documentId, { signingOrder: 'sequential', expiresInDays: '7' });
      const viaApi = await api('GET', `/api/v1/signatures/${id}`);
      expect(viaApi.body).to.include({ documentId, title: 'Services agreement', message: 'Please sign.', signingOrder: 'sequential', reminderEveryDays: 3 });
      expect(viaApi.body.signers.map((signer: { email: string }) => signer.email)).to.deep.equal(['ada@example.com', 'alan@example.com']);
      expect(Date.parse(viaApi.body.expiresAt) - Date.now()).to.be.within(6.9 * 86_400_000, 7 * 86_400_000);

      const detail = await browser.request('GET', `/app/requests/${id}`);
      expect(detail.status).to.equal(200);
      expect(detail.text).to.contain('<h1>Services agreement</h1>').and.contain('contract.pdf').and.contain('Ada Lovelace').and.contain('Alan Turing');
      expect(detail.text).to.match(/id="request-status"><span class="badge badge-pending">pending<\/span>/);
      expect(detail.text).to.contain('data-stage="awaiting_signers"').and.contain('<strong>Request created</strong>');
      expect(detail.text, 'no sealed PDF yet').not.to.contain('Download sealed PDF');
    });

    it('sends several documents in the order chosen; the detail page lists each, then its sealed PDF and the ZIP', async () => {
      const { browser, api } = await signedUp();
      const contract = await uploaded(browser, 'contract.pdf');
      const annex = await uploaded(browser, 'annex.pdf');
      const form = await browser.request('GET', '/app/requests/new');
      expect(form.text).to.contain('More documents in the same request').and.contain('<label for="documents-1">Document 2</label>');

      const duplicate = await browser.post('/app/requests', { document_id: contract, 'documents-1': contract, title: 'T', ...twoSigners });
      expect(duplicate.status).to.equal(400);
      expect(duplicate.text).to.contain('Document 2 is a duplicate: each document is sent once');

      const id = await sent(browser, contract, { 'documents-1': '', 'documents-2': annex, 'signers-1-name': '', 'signers-1-email': '' });
      const viaApi = await api('GET', `/api/v1/signatures/${id}`);
      expect(viaApi.body.documents.map((document: { documentId: string }) => document.documentId)).to.deep.equal([contract, annex]);
      const detail = await browser.request('GET', `/app/requests/${id}`);
      expect(detail.text)
        .to.contain('<dt>Documents</dt>')
        .and.match(/<li>contract\.pdf <span class="hint">\(2 pages\)<\/span><\/li>/);

      const link = await api('POST', `/api/v1/signatures/${id}/signers/${viaApi.body.signers[0].id}/link`);
      const token = new URL(link.body.url).pathname.split('/').pop();
      const signed = await client(baseUrl)('POST', `/sign/${token}/sign`, { json: { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } } });
      expect(signed.status).to.equal(200);
      await eventually(async () => expect((await api('GET', `/api/v1/signatures/${id}`)).body.status).to.equal('completed'), 60_000);
      const done = await browser.request('GET', `/app/requests/${id}`);
      expect(done.text).to.contain('Download sealed PDFs (ZIP)').and.contain(`href="/app/requests/${id}/documents/${annex}" download>sealed PDF</a>`);
      const sealedAnnex = await browser.request('GET', `/app/requests/${id}/documents/${annex}`);
      expect(sealedAnnex.status).to.equal(200);
      expect(sealedAnnex.headers.get('content-type')).to.equal('application/pdf');
      const zip = await browser.request('GET', `/app/requests/${id}/document`);
      expect(zip.headers.get('content-type')).to.equal('application/zip');
      expect((await browser.request('GET', `/app/requests/${id}/documents/doc_nonsense`)).status).to.equal(404);
    });

    it('sends recipients of every part in steps; the detail page shows each one’s step and part', async () => {
      const { browser, api } = await signedUp();
      const documentId = await uploaded(browser);
      const form = await browser.request('GET', '/app/requests/new');
      expect(form.text).to.contain('<select name="signers-0-recipientType">').and.contain('name="signers-0-routingOrder"');
      const id = await sent(browser, documentId, {
        'signers-0-recipientType': 'approver',
        'signers-0-routingOrder': '1',
        'signers-1-routingOrder': '2',
        'signers-2-name': 'Cai Copy',
        'signers-2-email': 'cai@example.com',
        'signers-2-recipientType': 'cc',
      });
      const viaApi = await api('GET', `/api/v1/signatures/${id}`);
      expect(viaApi.body.signers.map((signer: { recipientType: string; routingOrder: number }) => [signer.recipientType, signer.routingOrder])).to.deep.equal([
        ['approver', 1],
        ['signer', 2],
        ['cc', 1],
      ]);
      const detail = await browser.request('GET', `/app/requests/${id}`);
      expect(detail.text)
        .to.contain('<h2 id="signers-heading">Recipients</h2>')
        .and.contain('ada<wbr>@example.<wbr>com · approves')
        .and.contain('cai<wbr>@example.<wbr>com · cc');

      const partial = await browser.post('/app/requests', { document_id: documentId, title: 'T', ...twoSigners, 'signers-0-routingOrder': '1' });
      expect(partial.status).to.equal(400);
      expect(partial.text).to.contain('Signer 2 step is required once another recipient has one');
    });

    it('asks a recipient for an access code or an e-mailed code; the detail page names the method, never the code', async () => {
      const { browser, api, accountId } = await signedUp();
      const documentId = await uploaded(browser);
      const form = await browser.request('GET', '/app/requests/new');
      expect(form.text).to.contain('<select id="signers-0-verification" name="signers-0-verification">').and.contain('name="signers-0-accessCode"');
      const id = await sent(browser, documentId, {
        'signers-0-verification': 'access_code',
        'signers-0-accessCode': 'Kite-42',
        'signers-1-verification': 'email_code',
        'signers-1-accessCode': '',
        'signers-2-name': 'Cai Copy',
        'signers-2-email': 'cai@example.com',
        'signers-2-verification': '',
      });
      const viaApi = await api('GET', `/api/v1/signatures/${id}`);
      const signerIds: string[] = viaApi.body.signers.map((signer: { id: string }) => signer.id);
      const rows = await db('signer_verifications').whereIn('signer_id', signerIds).select('signer_id', 'method', 'code_hash');
      const bySigner = new Map(rows.map((row) => [row.signer_id, row]));
      expect(signerIds.map((signerId) => bySigner.get(signerId)?.method ?? null)).to.deep.equal(['access_code', 'email_code', null]);
      const accessCodeRow = bySigner.get(signerIds[0])!;
      expect(accessCodeRow.code_hash).to.be.a('string').and.not.contain('Kite-42');
      expect(JSON.stringify(rows)).not.to.contain('Kite-42');
      expect(JSON.stringify(viaApi.body)).not.to.contain('Kite-42');

      const detail = await browser.request('GET', `/app/requests/${id}`);
      expect(detail.status).to.equal(200);
      expect(detail.text).to.contain('<th scope="col">Verification</th>');
      const cells = [...detail.text.matchAll(/<td data-label="Verification">([^<]*)<\/td>/g)].map((match) => match[1]);
      expect(cells).to.deep.equal(['Access code', 'E-mail code', '—']);
      expect(detail.text).not.to.contain('Kite-42');
      // Once verified (or locked), the page says so beside the method.
      await db('signer_verifications').where({ signer_id: signerIds[0] }).update({ verified_at: new Date() });
      await db('signer_verifications')
        .where({ signer_id: signerIds[1] })
        .update({ locked_until: new Date(Date.now() + 15 * 60_000) });
      const later = await browser.request('GET', `/app/requests/${id}`);
      expect(later.text).to.match(/<td data-label="Verification">Access code, verified <time/);
      expect(later.text).to.match(/<td data-label="Verification">E-mail code, locked until <time/);

      const before = await db('signing_requests').where({ account_id: accountId }).count<{ count: string }[]>('* as count');
      const short = await browser.post('/app/requests', {
        document_id: documentId,
        title: 'Short code',
        ...twoSigners,
        'signers-1-verification': 'access_code',
        'signers-1-accessCode': 'abc',
      });
      expect(short.status).to.equal(400);
      expect(short.text)
        .to.contain('Signer 2 access code must be 4 to 12 characters')
        .and.contain('<option value="access_code" selected>')
        .and.contain('value="Short code"');
      const after = await db('signing_requests').where({ account_id: accountId }).count<{ count: string }[]>('* as count');
      expect(Number(after[0].count)).to.equal(Number(before[0].count));

      const cc = await browser.post('/app/requests', {
        document_id: documentId,
        title: 'A cc with a code',
        ...twoSigners,
        'signers-1-recipientType': 'cc',
        'signers-1-verification': 'email_code',
      });
      expect(cc.status).to.equal(400);
      expect(cc.text).to.contain('Signer 2 verification cannot be given to a cc');
    });

    it('re-renders the form with the person’s values and every problem (400), and creates nothing', async () => {
      const { browser, accountId } = await signedUp();
      const documentId = await uploaded(browser);
      await browser.request('GET', '/app/requests/new');
      const response = await browser.post('/app/requests', {
        document_id: documentId,
        title: '',
        'signers-0-name': '',
        'signers-0-email': '',
        'signers-1-name': 'Grace <Hopper>',
        'signers-1-email': 'not-an-address',
        expiresInDays: '0',
        signingOrder: 'sequential',
      });
      expect(response.status).to.equal(400);
      expect(response.text).to.contain('Title is required').and.contain('Signer 2 e-mail must be a valid e-mail address').and.contain('Expiry (days)');
      expect(response.text).to.contain('value="Grace &lt;Hopper&gt;"').and.contain('value="not-an-address"');
      expect(response.text)
        .to.contain(`<option value="${documentId}" selected>`)
        .and.match(/value="sequential" checked/);
      expect(await db('signing_requests').where({ account_id: accountId }).first()).to.equal(undefined);

      const noSigners = await browser.post('/app/requests', { document_id: documentId, title: 'T' });
      expect(noSigners.status).to.equal(400);
      expect(noSigners.text).to.contain('Add at least one signer.').and.not.contain('item(s)');
      const noDocument = await browser.post('/app/requests', { title: 'T', ...twoSigners });
      expect(noDocument.status).to.equal(400);
      expect(noDocument.text).to.contain('Document is required');
    });

    it('places the fields posted as JSON (requestFields.js) on their rows’ signers; a field it cannot place is a problem in the form’s words', async () => {
      const { browser, api, accountId } = await signedUp();
      const documentId = await uploaded(browser);
      const form = await browser.request('GET', `/app/requests/new?documentId=${documentId}`);
      expect(form.text, 'the document view’s link chooses its document')
        .to.contain(`<option value="${documentId}" selected>`)
        .and.contain('<section id="field-placer" class="field-placer" aria-labelledby="placer-heading" hidden>')
        .and.contain('<input type="hidden" name="fields" id="placed-fields" value="">');
      const pages = await browser.request('GET', `/app/documents/${documentId}/pages`, { headers: { Accept: 'application/json' } });
      expect(pages.json).to.deep.equal({
        fileName: 'contract.pdf',
        pageSizes: [
          [595, 842],
          [595, 842],
        ],
      });

      const signature = { type: 'signature', page: 1, x: 60, y: 100, width: 200, height: 40, label: null, required: true };
      const checkbox = { type: 'checkbox', page: 2, x: 400, y: 100, width: 20, height: 20, label: 'Keys', required: false };
      const id = await sent(browser, documentId, {
        fields: JSON.stringify([
          { signer: 2, ...checkbox },
          { signer: 1, ...signature },
        ]),
      });
      const viaApi = await api('GET', `/api/v1/signatures/${id}`);
      expect(viaApi.body.signers.map((signer: { fields: unknown }) => signer.fields)).to.deep.equal([
        [{ ...signature, documentId }],
        [{ ...checkbox, documentId }],
      ]);

      const refused = async (fields: string) => {
        const response = await browser.post('/app/requests', { document_id: documentId, title: 'T', ...twoSigners, fields });
        expect(response.status, response.text).to.equal(400);
        expect(response.text, 'the fields come back with the form').to.contain(`value="${fields.replace(/"/g, '&quot;')}"`);
        return response.text;
      };
      expect(await refused(JSON.stringify([{ signer: 3, ...signature }]))).to.contain('Field 1 is for signer 3, whose row is empty');
      expect(await refused('[{"signer": "one"}]')).to.contain('The fields placed on the pages could not be read: place them again.');
      expect(await refused('not json')).to.contain('The fields placed on the pages could not be read');
      expect(
        await refused(
          JSON.stringify([
            { signer: 1, ...signature },
            { signer: 2, ...signature, x: -1 },
          ]),
        ),
      ).to.contain('Field 2 x must be');
      expect(
        await refused(
          JSON.stringify([
            { signer: 1, ...signature },
            { signer: 1, ...signature, x: 500 },
          ]),
        ),
      ).to.contain('Field 2 must lie inside page 1 (595 × 842 points)');
      const [{ count }] = await db('signing_requests').where({ account_id: accountId }).count({ count: '*' });
      expect(Number(count)).to.equal(1);
    });

    it('another account’s document is 404 on the re-rendered form; a post without the CSRF token is 403', async () => {
      const other = await signedUp();
      const theirs = await uploaded(other.browser);
      const { browser, accountId } = await signedUp();
      await browser.request('GET', '/app/requests/new');
      const response = await browser.post('/app/requests', { document_id: theirs, title: 'Mine now', ...twoSigners });
      expect(response.status).to.equal(404);
      expect(response.text).to.contain('Document not found.').and.contain('value="Mine now"');

      const forged = await browser.request('POST', '/app/requests', { form: { document_id: await uploaded(browser), title: 'Forged', ...twoSigners } });
      expect(forged.status).to.equal(403);
      expect(await db('signing_requests').where({ account_id: accountId }).first()).to.equal(undefined);
    });

    it('from a template: one signer per role, and its text field prefilled', async () => {
      const { browser, api } = await signedUp();
      const document = await uploadDocument(api, { fileName: 'letter.pdf', pages: ['Engagement letter'] });
      const box = { page: 1, width: 120, height: 30 };
      const template = await api('POST', '/api/v1/templates', {
        json: {
          name: 'Engagement',
          documentId: document.id,
          roles: [{ name: 'client' }, { name: 'firm' }],
          fields: [
            { role: 'client', type: 'signature', x: 50, y: 100, ...box },
            { role: 'firm', type: 'signature', x: 50, y: 200, ...box },
            { role: 'client', type: 'text', label: 'fee', x: 50, y: 300, ...box },
          ],
        },
      });
      expect(template.status, JSON.stringify(template.body)).to.equal(201);

      const picker = await browser.request('GET', '/app/requests/new');
      expect(picker.text).to.contain(`<option value="${template.body.id}">Engagement</option>`);
      const form = await browser.request('GET', `/app/requests/new?template=${template.body.id}`);
      expect(form.status).to.equal(200);
      expect(form.text).to.contain('Role: client').and.contain('Role: firm').and.contain('<label for="prefill-0">fee');
      expect(form.text).not.to.contain('id="document_id"');

      const response = await browser.post('/app/requests', {
        template_id: template.body.id,
        title: 'Engagement 2027',
        'signers-0-role': 'client',
        'signers-0-name': 'Cleo Client',
        'signers-0-email': 'cleo@example.com',
        'signers-1-role': 'firm',
        'signers-1-name': 'Fiona Firm',
        'signers-1-email': 'fiona@example.com',
        'prefill-0': '900 EUR',
        signingOrder: 'sequential',
      });
      expect(response.status, response.text).to.equal(303);
      const created = await api('GET', response.location!.replace('/app/requests/', '/api/v1/signatures/'));
      expect(created.body.signers.map((signer: { name: string }) => signer.name)).to.deep.equal(['Cleo Client', 'Fiona Firm']);
      expect(created.body.signers[0].fields.find((field: { label: string }) => field.label === 'fee')).to.include({ value: '900 EUR' });

      const missingRole = await browser.post('/app/requests', {
        template_id: template.body.id,
        title: 'T',
        'signers-0-role': 'client',
        'signers-0-name': 'Cleo',
        'signers-0-email': 'cleo@example.com',
      });
      expect(missingRole.status).to.equal(400);
      expect(missingRole.text).to.contain('signers must have a signer for the role &quot;firm&quot;').and.contain('Role: firm');
      expect((await browser.request('GET', '/app/requests/new?template=tpl_nope')).status).to.equal(404);
    });

    it('a PDF with text tags: by default they become the fields of the recipients they name, and no signer sees them', async () => {
      const { browser, api } = await signedUp();
      const pdf = await PDFDocument.create();
      const font = await pdf.embedFont(StandardFonts.Helvetica);
      const page = pdf.addPage([595, 842]);
      page.drawText('Agreement', { x: 60, y: 760, size: 20, font });
      page.drawText('Company: {{text:client:company}}', { x: 60, y: 600, size: 12, font });
      page.drawText('Signed {{signature:client}} and {{signature:2}}', { x: 60, y: 400, size: 14, font });
      const documentId = (await uploadPdf(browser, await pdf.save(), 'tagged.pdf')).id;
      const form = await browser.request('GET', '/app/requests/new');
      expect(form.text)
        .to.match(/name="textTags" value="fields" checked/)
        .and.contain('name="signers-0-role"');

      const unnamed = await browser.post('/app/requests', { document_id: documentId, title: 'Tagged', ...twoSigners, textTags: 'fields' });
      expect(unnamed.status).to.equal(400);
      expect(unnamed.text).to.contain('text tags of the role &quot;client&quot;').and.contain('value="Ada Lovelace"');

      const id = await sent(browser, documentId, { textTags: 'fields', 'signers-0-role': ' client ' });
      const created = (await api('GET', `/api/v1/signatures/${id}`)).body;
      expect(created.documentId).to.not.equal(documentId);
      expect(created.signers.map((signer: { fields: { type: string }[] }) => signer.fields.map((field) => field.type))).to.deep.equal([
        ['text', 'signature'],
        ['signature'],
      ]);
      const link = await api('POST', `/api/v1/signatures/${id}/signers/${created.signers[1].id}/link`);
      const served = await client(baseUrl)('GET', `/sign/${new URL(link.body.url).pathname.split('/').pop()}/document`);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-console-tags-'));
      try {
        fs.writeFileSync(path.join(dir, 'served.pdf'), served.bytes);
        expect(execFileSync('pdftotext', [path.join(dir, 'served.pdf'), '-']).toString())
          .to.contain('Company:')
          .and.not.contain('{{');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }

      const removed = await sent(browser, documentId, { textTags: 'remove' });
      expect((await api('GET', `/api/v1/signatures/${removed}`)).body.signers.map((signer: { fields: unknown }) => signer.fields)).to.deep.equal([null, null]);
    });
  });

  describe('GET /app/requests', () => {
    it('lists newest first, filters by status (an unknown status is 400 with the problem), and searches', async () => {
      const { browser } = await signedUp();
      const documentId = await uploaded(browser);
      const older = await sent(browser, documentId, { title: 'Harbour lease' });
      const newer = await sent(browser, documentId, { title: 'Quarry contract' });
      expect((await browser.post(`/app/requests/${older}/cancel`)).status).to.equal(303);

      const all = await browser.request('GET', '/app/requests');
      expect(all.status).to.equal(200);
      expect(all.text.indexOf(`/app/requests/${newer}`))
        .to.be.greaterThan(-1)
        .and.lessThan(all.text.indexOf(`/app/requests/${older}`));
      expect(all.text).to.contain('2 requests').and.contain('<label for="status">Status</label>');

      const cancelled = await browser.request('GET', '/app/requests?status=cancelled');
      expect(cancelled.text).to.contain(`/app/requests/${older}`).and.not.contain(`/app/requests/${newer}`);
      expect(cancelled.text).to.contain('<option value="cancelled" selected>');

      const bad = await browser.request('GET', '/app/requests?status=lost');
      expect(bad.status).to.equal(400);
      expect(bad.text).to.contain('status must be one of');

      await eventually(async () => {
        const found = await browser.request('GET', '/app/requests?q=quarr');
        expect(found.status).to.equal(200);
        expect(found.text).to.contain(`/app/requests/${newer}`).and.not.contain(`/app/requests/${older}`);
      }, 30_000);
      const none = await browser.request('GET', '/app/requests?q=quarry&status=cancelled');
      expect(none.text).to.contain('No signing request matches.');
    });
  });

  describe('GET /app/requests/:id and its actions', () => {
    it('remind: within the hour of the invitations 429 saying when; an hour later 303 back with how many were reminded', async () => {
      const { browser } = await signedUp();
      const id = await sent(browser, await uploaded(browser));
      const signers = db('signers').where({ signing_request_id: id });
      await eventually(async () => expect(await signers.clone().whereNotNull('last_mailed_at')).to.have.length(2));
      await browser.request('GET', `/app/requests/${id}`);
      const early = await browser.post(`/app/requests/${id}/remind`);
      expect(early.status).to.equal(429);
      expect(early.text).to.contain('Each signer gets at most one e-mail with their link an hour, the invitation included');
      await signers.clone().update({ last_mailed_at: db.raw("now() - interval '61 minutes'") });
      await browser.request('GET', `/app/requests/${id}`);
      const response = await browser.post(`/app/requests/${id}/remind`);
      expect([response.status, response.location]).to.deep.equal([303, `/app/requests/${id}?reminded=2`]);
      expect((await browser.request('GET', response.location!)).text).to.contain('Reminded 2 signers.');
    });

    it('shows a recipient as e-mailed in the same read as their invitation_sent step, however soon after sending it is read', async () => {
      const { browser } = await signedUp();
      const documentId = await uploaded(browser);
      /** Each recipient's e-mail with whether its row says e-mailed, and whether the page's audit trail holds its invitation. */
      const readPage = async (id: string) => {
        const page = (await browser.request('GET', `/app/requests/${id}`)).text;
        const rows = /<table class="list compact" id="signer-timeline">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(page)![1].split('</tr>').slice(0, -1);
        const trail = [...page.matchAll(/<strong>Invitation e-mailed<\/strong> ([^\s<]+)/g)].map(([, email]) => email);
        return rows.map((row) => {
          const email = /<span class="hint">(\S+) · /.exec(row)![1].replaceAll('<wbr>', '');
          return { email, row: !/<td data-label="E-mailed">—<\/td>/.test(row), trail: trail.includes(email) };
        });
      };
      // The invitations go out a moment after the request is made, while its page is being read.
      for (let round = 0; round < 4; round++) {
        const id = await sent(browser, documentId);
        for (let read = 0; ; read++) {
          const recipients = await readPage(id);
          for (const { email, row, trail } of recipients) expect(row, `${email} on read ${read} of round ${round}`).to.equal(trail);
          if (recipients.every(({ trail }) => trail)) break;
          expect(read, 'both invited within 200 reads').to.be.below(200);
        }
      }
    });

    it('cancel: without the token 403; with it cancelled with the reason; again 409 shown as a page', async () => {
      const { browser, api } = await signedUp();
      const id = await sent(browser, await uploaded(browser));
      const detail = await browser.request('GET', `/app/requests/${id}`);
      expect(detail.text).to.match(
        /<form method="post" action="\/app\/requests\/[^"]+\/cancel" class="stack cancel-form" data-confirm="Cancel “Services agreement”\?/,
      );

      const forged = await browser.request('POST', `/app/requests/${id}/cancel`, { form: { reason: 'x' } });
      expect(forged.status).to.equal(403);
      const response = await browser.post(`/app/requests/${id}/cancel`, { reason: 'Wrong fee' });
      expect([response.status, response.location]).to.deep.equal([303, `/app/requests/${id}`]);
      const after = await browser.request('GET', `/app/requests/${id}`);
      expect(after.text).to.contain('badge-cancelled').and.contain('data-stage="finished"').and.not.contain('Remind signers');
      expect((await api('GET', `/api/v1/signatures/${id}/audit-trail`)).body.data.map((step: { action: string }) => step.action)).to.include('cancelled');

      const again = await browser.post(`/app/requests/${id}/cancel`);
      expect(again.status).to.equal(409);
      expect(again.text).to.contain('This signing request is cancelled.');
      const remind = await browser.post(`/app/requests/${id}/remind`);
      expect(remind.status).to.equal(409);
    });

    it('the sealed PDF before completion is 409 with the reason; the audit trail downloads as JSON', async () => {
      const { browser } = await signedUp();
      const id = await sent(browser, await uploaded(browser));
      const sealed = await browser.request('GET', `/app/requests/${id}/document`);
      expect(sealed.status).to.equal(409);
      expect(sealed.headers.get('content-type')).to.match(/^text\/html/);
      expect(sealed.text).to.contain('The sealed PDF exists once every signer has signed; this request is pending.');

      const trail = await browser.request('GET', `/app/requests/${id}/audit-trail.json`);
      expect(trail.status).to.equal(200);
      expect(trail.headers.get('content-type')).to.match(/^application\/json/);
      expect(trail.headers.get('content-disposition')).to.equal(`attachment; filename="audit-trail-${id}.json"`);
      expect(JSON.parse(trail.text).data[0]).to.include({ action: 'created' });
    });

    it('another account’s request is 404 on every page and action; a malformed id is 404 too', async () => {
      const owner = await signedUp();
      const id = await sent(owner.browser, await uploaded(owner.browser));
      const { browser } = await signedUp();
      await browser.request('GET', '/app/requests');
      for (const [method, path] of [
        ['GET', `/app/requests/${id}`],
        ['GET', `/app/requests/${id}/document`],
        ['GET', `/app/requests/${id}/audit-trail.json`],
        ['POST', `/app/requests/${id}/remind`],
        ['POST', `/app/requests/${id}/cancel`],
        ['GET', '/app/requests/doc_01jd8x3c6hf1z8k3q2v5n7m9pt'],
        ['GET', '/app/requests/sr_nope'],
      ]) {
        const response = method === 'GET' ? await browser.request('GET', path) : await browser.post(path);
        expect(response.status, `${method} ${path}`).to.equal(404);
        expect(response.text, `${method} ${path}`).to.contain('Signing request not found.');
      }
      expect((await owner.api('GET', `/api/v1/signatures/${id}`)).body.status, 'still pending').to.equal('pending');
    });
  });
});
