import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { MAX_FIELDS_PER_SIGNER, MAX_SIGNERS } from '../../src/documents/fields';
import { MAX_EXPIRY_DAYS } from '../../src/signingRequests/schema';
import { signedUp, uploadPdf } from '../support/consoleClient';
import { makePdf } from '../support/pdfs';
import { createTestAccount, sharedSystem, useSharedSystem } from '../support/system';
import { templateField, uploadLease } from '../support/templates';

// Every way into a template meets a request's limits (a template that can never be sent is refused),
// and a template's body is reported whole: its shape and its rules in one 400.

/** A PDF whose pages print these tags, 100 lines to a page in a small font. */
async function makeTaggedPdf(tags: string[]) {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let start = 0; start < tags.length; start += 100) {
    const page = pdf.addPage([595, 842]);
    tags.slice(start, start + 100).forEach((tag, line) => page.drawText(tag, { x: 40, y: 820 - line * 8, size: 6, font }));
  }
  return Buffer.from(await pdf.save());
}

describe('POST /api/v1/templates: the shape and the rules in one 400', () => {
  useSharedSystem();

  it('a field with width −1, an unknown role and page 9 gets three details, not one', async () => {
    const { request } = await createTestAccount();
    const documentId = await uploadLease(request);
    const response = await request('POST', '/api/v1/templates', {
      json: {
        name: 'Lease',
        documentId,
        roles: [{ name: 'tenant' }],
        fields: [templateField('tenant', 'signature'), templateField('ghost', 'text', { page: 9, width: -1 })],
      },
    });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.have.members([
      'fields.1.width must be a positive number',
      'fields.1.role must be one of the roles (tenant): "ghost" is not',
      'fields.1.page must be at most 2: the PDF has 2 page(s)',
    ]);
  });

  it('rules that need what the shape left unread are left out, not guessed', async () => {
    const { request } = await createTestAccount();
    const documentId = await uploadLease(request);
    // roles.0 has no name: which roles exist is unknown, so no field's role is called unknown; fields.0's
    // type is unreadable, so it may be tenant's signature field.
    const response = await request('POST', '/api/v1/templates', {
      json: {
        name: 'Lease',
        documentId,
        roles: [{ name: 'tenant' }, { order: 2 }],
        fields: [templateField('tenant', 'stamp'), templateField('landlord', 'signature', { x: 590 })],
      },
    });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.have.members([
      'roles.1.name is required',
      'fields.0.type must be one of: signature, initials, date, text, checkbox, number, email, phone, radio, dropdown, multiSelect, checkboxGroup, calculated, signerName, signerEmail, staticText, image, attachment',
      'fields.1 must lie inside page 1 (595 × 842 points)',
    ]);
  });

  it('PATCH /templates/:id reports them together too', async () => {
    const { request } = await createTestAccount();
    const documentId = await uploadLease(request);
    const created = await request('POST', '/api/v1/templates', {
      json: { name: 'Lease', documentId, roles: [{ name: 'tenant' }], fields: [templateField('tenant', 'signature')] },
    });
    expect(created.status).to.equal(201);
    const response = await request('PATCH', `/api/v1/templates/${created.body.id}`, {
      json: { fields: [templateField('tenant', 'signature'), templateField('ghost', 'text', { page: 9, width: -1 })] },
    });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.have.members([
      'fields.1.width must be a positive number',
      'fields.1.role must be one of the roles (tenant): "ghost" is not',
      'fields.1.page must be at most 2: the PDF has 2 page(s)',
    ]);
  });

  it('the console editor’s save reports them together too', async function () {
    this.timeout(60_000);
    const { browser } = await signedUp((await sharedSystem()).url!);
    const document = await uploadPdf(browser, await makePdf(['Lease', 'Signatures']));
    const response = await browser.postJson('/app/templates', {
      name: 'Lease',
      documentId: document.id,
      roles: [{ name: 'tenant' }],
      fields: [templateField('tenant', 'signature'), templateField('ghost', 'text', { page: 9, width: -1 })],
    });
    expect(response.status).to.equal(400);
    expect(response.json.details).to.have.members([
      'fields.1.width must be a positive number',
      'fields.1.role must be one of the roles (tenant): "ghost" is not',
      'fields.1.page must be at most 2: the PDF has 2 page(s)',
    ]);
  });
});

describe('templates meet a request’s limits, however they are made', function () {
  useSharedSystem();

  this.timeout(120_000);

  it('10,000 text tags naming 10,000 roles: 400 naming the limit of roles; the dry run warns of it', async () => {
    const { request, db, account } = await createTestAccount();
    const documentId = await uploadLease(request, await makeTaggedPdf(Array.from({ length: 10_000 }, (_, index) => `{{signature:signer${index}}}`)));
    const response = await request('POST', '/api/v1/templates', { json: { name: 'Many', documentId, detectFields: true } });
    expect(response.status, JSON.stringify(response.body).slice(0, 500)).to.equal(400);
    expect(response.body.details).to.have.length(1);
    expect(response.body.details[0]).to.match(
      new RegExp(
        `^roles must have at most ${MAX_SIGNERS} items, those its text tags name included \\(a request has at most ${MAX_SIGNERS} signers\\): there are \\d+$`,
      ),
    );
    expect(await db('templates').where({ account_id: account.id })).to.have.length(0);

    const dryRun = await request('POST', `/api/v1/documents/${documentId}/detect-fields`);
    expect(dryRun.status).to.equal(200);
    expect(dryRun.body.warnings.some((warning: string) => warning.startsWith(`roles must have at most ${MAX_SIGNERS} items`))).to.equal(true);
  });

  it(`a role with more than ${MAX_FIELDS_PER_SIGNER} fields, from text tags or given: 400 naming the limit`, async () => {
    const { request } = await createTestAccount();
    const tags = ['{{signature:tenant}}', ...Array.from({ length: MAX_FIELDS_PER_SIGNER }, (_, index) => `{{text:tenant:line${index}}}`)];
    const tagged = await request('POST', '/api/v1/templates', {
      json: { name: 'Long', documentId: await uploadLease(request, await makeTaggedPdf(tags)), detectFields: true },
    });
    expect(tagged.status).to.equal(400);
    expect(tagged.body.details).to.deep.equal([
      `the role of tag {{signature:tenant}} on page 1 ("tenant") must have at most ${MAX_FIELDS_PER_SIGNER} fields (a request's signer has at most ${MAX_FIELDS_PER_SIGNER}): it has ${MAX_FIELDS_PER_SIGNER + 1}`,
    ]);

    const documentId = await uploadLease(request);
    const many = Array.from({ length: MAX_FIELDS_PER_SIGNER + 1 }, (_, index) =>
      templateField('tenant', index === 0 ? 'signature' : 'checkbox', { y: 10 + index * 10, height: 8 }),
    );
    const given = await request('POST', '/api/v1/templates', { json: { name: 'Long', documentId, roles: [{ name: 'tenant' }], fields: many } });
    expect(given.status).to.equal(400);
    expect(given.body.details).to.deep.equal([
      `roles.0 ("tenant") must have at most ${MAX_FIELDS_PER_SIGNER} fields (a request's signer has at most ${MAX_FIELDS_PER_SIGNER}): it has ${MAX_FIELDS_PER_SIGNER + 1}`,
    ]);

    const created = await request('POST', '/api/v1/templates', {
      json: { name: 'Short', documentId, roles: [{ name: 'tenant' }], fields: many.slice(0, MAX_FIELDS_PER_SIGNER) },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const patched = await request('PATCH', `/api/v1/templates/${created.body.id}`, { json: { fields: many } });
    expect(patched.status).to.equal(400);
    expect(patched.body.details).to.deep.equal(given.body.details);
  });

  it('a text tag’s role or label is held to the rules of a given one', async () => {
    const { request } = await createTestAccount();
    const long = 'r'.repeat(101);
    const documentId = await uploadLease(request, await makeTaggedPdf([`{{signature:${long}}}`, '{{signature:tenant}}', `{{text:tenant:${long}}}`]));
    const response = await request('POST', '/api/v1/templates', { json: { name: 'Tagged', documentId, detectFields: true } });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal([
      `the field of tag {{signature:${long}}} on page 1.role must be at most 100 characters`,
      `the field of tag {{text:tenant:${long}}} on page 1.label must be at most 100 characters`,
    ]);
  });
});

describe('expiresAt and expiresInDays: one limit', () => {
  useSharedSystem();

  const DAY = 24 * 60 * 60 * 1000;
  const days = (count: number) => new Date(Date.now() + count * DAY).toISOString().replace(/\.\d+Z$/, 'Z');

  it(`a request may expire at most ${MAX_EXPIRY_DAYS} days ahead, however the date is given`, async () => {
    const { request } = await createTestAccount();
    const documentId = await uploadLease(request);
    const body = (expiry: Record<string, unknown>) => ({
      json: { document_id: documentId, title: 'T', signers: [{ name: 'Ada', email: 'ada@example.com' }], ...expiry },
    });
    for (const expiry of [{ expiresAt: '9999-12-31T23:59:59Z' }, { expiresAt: days(MAX_EXPIRY_DAYS + 1) }]) {
      const response = await request('POST', '/api/v1/signatures', body(expiry));
      expect(response.status, expiry.expiresAt).to.equal(400);
      expect(response.body.details).to.deep.equal([`expiresAt must be at most ${MAX_EXPIRY_DAYS} days ahead`]);
    }
    expect((await request('POST', '/api/v1/signatures', body({ expiresInDays: MAX_EXPIRY_DAYS + 1 }))).body.details).to.deep.equal([
      `expiresInDays must be at most ${MAX_EXPIRY_DAYS}`,
    ]);
    expect((await request('POST', '/api/v1/signatures', body({ expiresAt: '2020-01-01T00:00:00Z' }))).body.details).to.deep.equal([
      'expiresAt must be in the future',
    ]);
    const within = await request('POST', '/api/v1/signatures', body({ expiresAt: days(MAX_EXPIRY_DAYS - 1) }));
    expect(within.status, JSON.stringify(within.body)).to.equal(201);
  });
});
