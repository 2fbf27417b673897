import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { PNG } from 'pngjs';
import { client, type Request } from '../support/http';
import { drawnSignature, eventually, tokenOf, signingLinkOf } from '../support/signing';
import { createTestAccount, useSharedSystem } from '../support/system';
import { uploadDocument } from '../support/documents';

/**
 * A 2-page lease with text tags drawn by pdf-lib: the tenant's signature and rent on page 1, the
 * landlord's checkbox and signature on page 2, and a date for the tenant.
 */
async function makeLeasePdf() {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const first = pdf.addPage([595, 842]);
  first.drawText('Residential lease', { x: 60, y: 760, size: 20, font });
  first.drawText('Monthly rent: {{text:tenant:rent}}', { x: 60, y: 600, size: 12, font });
  first.drawText('{{signature:tenant}}', { x: 60, y: 400, size: 16, font });
  first.drawText('{{date:tenant:start}}', { x: 350, y: 400, size: 12, font });
  const second = pdf.addPage([595, 842]);
  second.drawText('Pets allowed: {{checkbox:landlord:pets}}   Parking: {{checkbox:landlord:parking}}', { x: 60, y: 600, size: 12, font });
  second.drawText('{{signature:landlord}}', { x: 60, y: 400, size: 16, font });
  return Buffer.from(await pdf.save());
}

/** A template made through the API from the tagged lease: roles tenant (1), landlord (2). */
async function createLeaseTemplate(request: Request) {
  const document = await uploadDocument(request, { fileName: 'lease.pdf', pdf: await makeLeasePdf() });
  const initials = { role: 'tenant', type: 'initials', label: 'initials', page: 2, x: 500, y: 50, width: 40, height: 20 };
  const template = await request('POST', '/api/v1/templates', {
    json: { name: 'Lease', documentId: document.id, detectFields: true, fields: [initials] },
  });
  expect(template.status, JSON.stringify(template.body)).to.equal(201);
  expect(template.body.roles.map((role: { name: string }) => role.name)).to.deep.equal(['tenant', 'landlord']);
  return template.body;
}

const signers = [
  { name: 'Larry Landlord', email: 'larry@example.com', role: 'landlord' },
  { name: 'Tina Tenant', email: 'tina@example.com', role: 'tenant' },
];

const fromTemplate = (templateId: string, changes: Record<string, unknown> = {}) => ({
  template_id: templateId,
  title: 'Lease of flat 3',
  signers,
  signingOrder: 'sequential',
  prefill: { rent: '1200 EUR', start: '2027-01-01', pets: true, parking: false },
  ...changes,
});

describe('POST /api/v1/signatures with template_id', () => {
  useSharedSystem();

  it('400 for every rule of a request from a template, at once', async () => {
    const { request } = await createTestAccount();
    const template = await createLeaseTemplate(request);
    const shape = await request('POST', '/api/v1/signatures', {
      json: {
        template_id: template.id,
        document_id: 'doc_x',
        title: 'T',
        signers: [{ name: 'A', email: 'a@example.com', fields: [{ page: 1, x: 1, y: 1, width: 5, height: 5, type: 'signature' }] }],
      },
    });
    expect(shape.status).to.equal(400);
    expect(shape.body.details).to.deep.equal([
      'template_id cannot be combined with document_id',
      'signers.0.role is required with template_id',
      'signers.0.fields cannot be given with template_id: the template places them',
    ]);
    const withoutTemplate = await request('POST', '/api/v1/signatures', {
      json: { document_id: 'doc_x', title: 'T', signers: [{ name: 'A', email: 'a@example.com', role: 'tenant' }], prefill: { rent: '1' } },
    });
    expect(withoutTemplate.body.details).to.deep.equal(['signers.0.role needs template_id, or textTags: "fields"', 'prefill needs template_id']);
    const roles = await request('POST', '/api/v1/signatures', {
      json: fromTemplate(template.id, {
        signers: [
          { name: 'A', email: 'a@example.com', role: 'tenant' },
          { name: 'B', email: 'b@example.com', role: 'guarantor' },
          { name: 'C', email: 'c@example.com', role: 'tenant' },
        ],
        prefill: { rent: true, pets: 'yes', tenant: 'x', initials: 'TT' },
      }),
    });
    expect(roles.status).to.equal(400);
    expect(roles.body.details).to.deep.equal([
      'signers.1.role must be one of the template’s roles (tenant, landlord): "guarantor" is not',
      'signers.2.role must be unique: "tenant" is also signers.0.role',
      'signers must have a signer for the role "landlord"',
      "prefill.rent must be text: its field's type is text",
      'prefill.pets must be true or false: it is a checkbox',
      'prefill.tenant must name a field of the template that a sender may fill (text, date, checkbox, number, email, phone, radio, dropdown, multiSelect, checkboxGroup)',
      'prefill.initials must name a field of the template that a sender may fill (text, date, checkbox, number, email, phone, radio, dropdown, multiSelect, checkboxGroup): its type is initials',
    ]);
  });
});

describe('POST /api/v1/signatures with template_id: who may use which template', () => {
  useSharedSystem();

  it('404 for another account’s template or a deleted one', async () => {
    const { request } = await createTestAccount();
    const other = await createTestAccount();
    const theirs = await createLeaseTemplate(other.request);
    const foreign = await request('POST', '/api/v1/signatures', { json: fromTemplate(theirs.id) });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.message).to.equal('Template not found.');
    const mine = await createLeaseTemplate(request);
    await request('DELETE', `/api/v1/templates/${mine.id}`);
    expect((await request('POST', '/api/v1/signatures', { json: fromTemplate(mine.id) })).status).to.equal(404);
  });

  it('403 quota_exceeded when the month’s documents are used up: the request’s document counts', async () => {
    const { request, db, account } = await createTestAccount('free');
    const template = await createLeaseTemplate(request); // its source document is the 1st of 5
    for (let i = 0; i < 4; i++) expect((await request('POST', '/api/v1/documents', { json: { fileName: `d${i}.pdf`, fileSize: 10 } })).status).to.equal(201);
    const response = await request('POST', '/api/v1/signatures', { json: fromTemplate(template.id) });
    expect(response.status).to.equal(403);
    expect(response.body).to.include({ error: 'quota_exceeded', limit: 5, used: 5 });
    expect(await db('signing_requests').where({ account_id: account.id })).to.have.length(0);
  });
});

describe('a request made from a template, signed in order and sealed', () => {
  useSharedSystem();

  const linkFor = async (request: Request, requestId: string, signerId: string) => tokenOf(await signingLinkOf(request, requestId, signerId));
  const sign = async (url: string, token: string, name: string, fieldValues?: Record<string, string>) =>
    client(url)('POST', `/sign/${token}/sign`, { json: { consent: true, signature: { type: 'typed', value: name }, fieldValues } });

  /** Words of a page of a PDF with their boxes, from poppler's pdftotext -bbox (top-left origin, points). */
  function wordsOn(file: string, page: number) {
    const html = execFileSync('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), file, '-']).toString();
    return [...html.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((match) => ({
      text: match[5],
      xMin: Number(match[1]),
      yMin: Number(match[2]),
      xMax: Number(match[3]),
      yMax: Number(match[4]),
    }));
  }
  /** Whether a word lies within a field (PDF coordinates from the bottom-left of a page `height` tall), give or take a point. */
  const inside = (
    word: { xMin: number; yMin: number; xMax: number; yMax: number },
    field: { x: number; y: number; width: number; height: number },
    height: number,
  ) =>
    word.xMin >= field.x - 1 && word.xMax <= field.x + field.width + 1 && word.yMin >= height - field.y - field.height - 1 && word.yMax <= height - field.y + 1;

  it('one signer per role in the roles’ order, each with its role’s fields and prefilled values; the sealed PDF prints them, shows no raw tag, and verifies', async function () {
    this.timeout(120_000);
    const { request, db, account, system } = await createTestAccount();
    const template = await createLeaseTemplate(request);
    const created = await request('POST', '/api/v1/signatures', { json: fromTemplate(template.id) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const signingRequest = created.body;

    // A new document, made from the template's PDF (with its tags painted over).
    expect(signingRequest.documentId).to.not.equal(template.sourceDocumentId);
    const document = await request('GET', `/api/v1/documents/${signingRequest.documentId}`);
    expect(document.body).to.include({ fileName: 'Lease.pdf', status: 'ready', pageCount: 2, sha256: template.sha256 });
    expect(signingRequest.originalSha256).to.equal(template.sha256);
    const documentEvents = await db('events').where({ account_id: account.id, type: 'document.created' });
    expect(documentEvents.map((event) => event.data.documentId)).to.include(signingRequest.documentId);

    // Tenant first (role order 1), although the landlord was given first.
    const [tenant, landlord] = signingRequest.signers;
    expect([tenant.email, tenant.order, landlord.email, landlord.order]).to.deep.equal(['tina@example.com', 1, 'larry@example.com', 2]);
    const summary = (fields: { type: string; label: string | null; value?: string }[]) =>
      fields.map((field) => `${field.type} ${field.label} ${field.value ?? '-'}`);
    expect(summary(tenant.fields)).to.deep.equal(['initials initials -', 'text rent 1200 EUR', 'signature null -', 'date start 2027-01-01']);
    expect(summary(landlord.fields)).to.deep.equal(['checkbox pets true', 'checkbox parking false', 'signature null -']);

    // Sequential: the landlord waits for the tenant.
    const url = system.url!;
    const landlordToken = await linkFor(request, signingRequest.id, landlord.id);
    expect((await sign(url, landlordToken, 'Larry Landlord')).status).to.equal(409);
    const tenantView = await client(url)('GET', `/sign/${await linkFor(request, signingRequest.id, tenant.id)}/request`);
    expect(tenantView.body.signer.fields[1]).to.include({ label: 'rent', value: '1200 EUR' });
    expect((await sign(url, await linkFor(request, signingRequest.id, tenant.id), 'Tina Tenant', { '0': 'T.T.' })).status).to.equal(200);
    expect((await sign(url, landlordToken, 'Larry Landlord')).status).to.equal(200);
    await eventually(async () => expect((await request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);

    const sealed = await request('GET', `/api/v1/signatures/${signingRequest.id}/document`);
    expect(sealed.status).to.equal(200);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-template-seal-'));
    try {
      const file = path.join(dir, 'sealed.pdf');
      fs.writeFileSync(file, sealed.bytes);
      expect(execFileSync('pdfsig', [file]).toString()).to.contain('Signature is Valid');
      expect(execFileSync('pdftotext', [file, '-']).toString(), 'no raw tag in the text').to.not.contain('{{');
      const byLabel = (label: string) => template.fields.find((field: { label: string | null }) => field.label === label);
      // Each prefilled value is printed inside its field.
      const first = wordsOn(file, 1);
      for (const [label, words] of [
        ['rent', ['1200', 'EUR']],
        ['start', ['2027-01-01']],
      ] as const) {
        for (const text of words)
          expect(
            first.some((word) => word.text === text && inside(word, byLabel(label), 842)),
            `${text} in ${label}`,
          ).to.equal(true);
      }
      const second = wordsOn(file, 2);
      expect(
        second.some((word) => word.text === 'T.T.' && inside(word, byLabel('initials'), 842)),
        'typed initials in their field',
      ).to.equal(true);
      expect(
        second.some((word) => word.text === 'X' && inside(word, byLabel('pets'), 842)),
        'X in pets',
      ).to.equal(true);
      expect(
        second.some((word) => word.text === 'X' && inside(word, byLabel('parking'), 842)),
        'no X in parking',
      ).to.equal(false);
      // No raw tag shows: the unticked checkbox's tag renders as blank paper, the ticked one holds its X.
      execFileSync('pdftoppm', ['-png', '-r', '72', '-f', '2', '-l', '2', '-singlefile', file, path.join(dir, 'page2')]);
      const page = PNG.sync.read(fs.readFileSync(path.join(dir, 'page2.png')));
      const inked = (field: { x: number; y: number; width: number; height: number }) => {
        let count = 0;
        for (let y = Math.ceil(842 - field.y - field.height); y < Math.floor(842 - field.y); y++) {
          for (let x = Math.ceil(field.x); x < Math.floor(field.x + field.width); x++) {
            const offset = (page.width * y + x) * 4;
            if (page.data[offset] < 200 || page.data[offset + 1] < 200 || page.data[offset + 2] < 200) count++;
          }
        }
        return count;
      };
      expect(inked(byLabel('parking'))).to.equal(0);
      expect(inked(byLabel('pets'))).to.be.greaterThan(0);
      expect(
        wordsOn(file, 1)
          .map((word) => word.text)
          .join(' '),
      ).to.contain('Monthly rent:');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('POST /sign/{token}/sign on a request made from a template: the signer’s field values', function () {
  useSharedSystem();

  this.timeout(90_000);

  // The tenant's fields, by position: what fieldValues keys them by.
  const tenantFields = [
    { role: 'tenant', type: 'signature', page: 2, x: 60, y: 400, width: 200, height: 40 },
    { role: 'tenant', type: 'text', label: 'employer', page: 1, x: 60, y: 500, width: 250, height: 20 },
    { role: 'tenant', type: 'text', label: 'note', required: false, page: 1, x: 60, y: 470, width: 250, height: 20 },
    { role: 'tenant', type: 'checkbox', label: 'rules', page: 1, x: 60, y: 440, width: 20, height: 20 },
    { role: 'tenant', type: 'checkbox', label: 'pets', required: false, page: 1, x: 100, y: 440, width: 20, height: 20 },
    { role: 'tenant', type: 'initials', label: 'initials', page: 2, x: 500, y: 50, width: 40, height: 20 },
    { role: 'tenant', type: 'date', page: 2, x: 300, y: 400, width: 100, height: 20 },
    { role: 'tenant', type: 'text', label: 'rent', page: 1, x: 60, y: 300, width: 200, height: 20 },
  ];

  /** A one-signer request from a template whose tenant has every kind of field, the rent prefilled; the tenant's sign function. */
  async function tenantOfFormRequest() {
    const account = await createTestAccount();
    const document = await uploadDocument(account.request, { fileName: 'lease.pdf', pdf: await makeLeasePdf() });
    const template = await account.request('POST', '/api/v1/templates', {
      json: { name: 'Form', documentId: document.id, roles: [{ name: 'tenant' }], fields: tenantFields },
    });
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    const created = await account.request('POST', '/api/v1/signatures', {
      json: {
        template_id: template.body.id,
        title: 'Form',
        signers: [{ name: 'Tina Tenant', email: 'tina@example.com', role: 'tenant' }],
        prefill: { rent: '1200 EUR' },
      },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const signer = created.body.signers[0];
    const link = await account.request('POST', `/api/v1/signatures/${created.body.id}/signers/${signer.id}/link`);
    const sign = (fieldValues?: Record<string, unknown>) =>
      client(account.system.url!)('POST', `/sign/${tokenOf(link.body.url)}/sign`, {
        json: { consent: true, signature: { type: 'drawn', value: drawnSignature }, fieldValues },
      });
    return { account, signingRequest: created.body, sign };
  }

  const signerStatus = async (request: Request, requestId: string) => (await request('GET', `/api/v1/signatures/${requestId}`)).body.signers[0].status;

  it('400 naming each required field left empty: text, a checkbox not ticked, initials; nothing is recorded', async () => {
    const { account, signingRequest, sign } = await tenantOfFormRequest();
    const response = await sign({ '2': '   ', '3': false });
    expect(response.status).to.equal(400);
    expect(response.body.error).to.equal('validation_error');
    expect(response.body.details).to.deep.equal([
      'fieldValues.1 is required (the text field \"employer\" on page 1)',
      'fieldValues.3 must be ticked: it is required (the checkbox field \"rules\" on page 1)',
      'fieldValues.5 is required: the initials field "initials" on page 2',
    ]);
    expect((await sign({ '1': '  ', '3': true, '5': 'TT' })).body.details).to.deep.equal(['fieldValues.1 is required (the text field \"employer\" on page 1)']);
    expect(await signerStatus(account.request, signingRequest.id)).to.not.equal('signed');
  });

  it('400 for each value of the wrong shape for its field, for a prefilled field (the prefill stands) and for no field, all at once', async () => {
    const { account, signingRequest, sign } = await tenantOfFormRequest();
    const response = await sign({ '4': { ticked: true } });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal([
      'fieldValues.4 must be text (a text field, initials), true or false (a checkbox), a number, or a list of options (a multiSelect, a checkbox group)',
    ]);
    const shapes = await sign({
      '0': 'Tina',
      '1': true,
      '2': 'x'.repeat(501),
      '3': 'yes',
      '5': 'data:image/png;base64,AAAA',
      '6': '2027-01-01',
      '7': '900 EUR',
      '8': 'x',
    });
    expect(shapes.status).to.equal(400);
    expect(shapes.body.details).to.deep.equal([
      'fieldValues.8 must name one of your fields: 0 to 7',
      'fieldValues.0 must not be given: the signature field on page 2 takes your signature',
      'fieldValues.1 must be text (the text field "employer" on page 1)',
      'fieldValues.2 must be at most 500 characters (the text field "note" on page 1)',
      'fieldValues.3 must be true or false: it is a checkbox (the checkbox field "rules" on page 1)',
      'fieldValues.5 must be a PNG image: the initials field "initials" on page 2',
      'fieldValues.6 must not be given: the date field on page 2 is filled with the date of signing',
      'fieldValues.7 must not be given: the sender prefilled the text field "rent" on page 1',
    ]);
    expect((await sign({ '1': 'Acme', '3': true, '5': 'far too long for initials' })).body.details).to.deep.equal([
      'fieldValues.5 must be your initials, 1 to 20 characters, or a drawing (a PNG data URL): the initials field "initials" on page 2',
    ]);
    expect(await signerStatus(account.request, signingRequest.id)).to.not.equal('signed');
  });

  it('200 with every required field filled (checkboxes as true/false or their text, initials drawn); the sealed PDF prints them and the prefill', async () => {
    const { account, signingRequest, sign } = await tenantOfFormRequest();
    const response = await sign({ '1': 'Acme Widgets', '3': 'true', '4': false, '5': drawnSignature });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);
    const stored = await account.db('signers').where({ id: signingRequest.signers[0].id }).first('signature');
    expect(stored.signature.fieldValues).to.deep.equal({ '1': 'Acme Widgets', '3': 'true', '4': 'false', '5': drawnSignature });
    const sealed = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-form-seal-'));
    try {
      fs.writeFileSync(path.join(dir, 'sealed.pdf'), sealed.bytes);
      const text = execFileSync('pdftotext', ['-f', '1', '-l', '1', path.join(dir, 'sealed.pdf'), '-']).toString();
      expect(text).to.contain('Acme Widgets');
      expect(text).to.contain('1200 EUR');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a template’s copies never carry text tags, whether they place fields or not', function () {
  useSharedSystem();

  this.timeout(60_000);

  it('made without detectFields, and given another tagged document by PATCH: the signers’ documents show no tag', async () => {
    const { request, system } = await createTestAccount();
    const upload = async (fileName: string) => uploadDocument(request, { fileName, pdf: await makeLeasePdf() });
    const lease = await upload('lease.pdf');
    const annex = await upload('annex.pdf');
    const signature = { role: 'tenant', type: 'signature', page: 1, x: 300, y: 100, width: 150, height: 40 };
    const template = await request('POST', '/api/v1/templates', {
      json: { name: 'Plain lease', documentId: lease.id, roles: [{ name: 'tenant' }], fields: [signature] },
    });
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    expect(template.body.fields).to.have.length(1);
    expect(template.body.sha256).to.not.equal(lease.sha256);
    const patched = await request('PATCH', `/api/v1/templates/${template.body.id}`, {
      json: {
        documents: [{ document_id: lease.id }, { document_id: annex.id }],
        fields: [
          { ...signature, document_id: lease.id },
          { ...signature, document_id: annex.id, type: 'initials', label: 'annex' },
        ],
      },
    });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.documents[1].sha256).to.not.equal(annex.sha256);

    const created = await request('POST', '/api/v1/signatures', {
      json: { template_id: template.body.id, title: 'Lease', signers: [{ name: 'Tina Tenant', email: 'tina@example.com', role: 'tenant' }] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const token = tokenOf(await signingLinkOf(request, created.body.id, created.body.signers[0].id));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-template-tags-'));
    try {
      for (const document of created.body.documents) {
        const served = await client(system.url!)('GET', `/sign/${token}/documents/${document.documentId}`);
        expect(served.status).to.equal(200);
        fs.writeFileSync(path.join(dir, 'served.pdf'), served.bytes);
        const text = execFileSync('pdftotext', [path.join(dir, 'served.pdf'), '-']).toString();
        expect(text, document.fileName).to.contain('Monthly rent:').and.not.contain('{{');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
