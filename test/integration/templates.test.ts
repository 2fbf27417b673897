import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { PNG } from 'pngjs';
import { createPostgresSearch } from '../../src/search/postgres';
import { startApp } from '../support/app';
import { client, type Request } from '../support/http';
import { makePdf } from '../support/pdfs';
import { eventually } from '../support/signing';
import { createTestAccount, sharedSystem, useSharedSystem } from '../support/system';
import { templateField, uploadLease } from '../support/templates';

/** A valid template body: a tenant and a landlord, each with a signature field, and a labelled text field. */
const leaseTemplate = (documentId: string, changes: Record<string, unknown> = {}) => ({
  name: 'Residential lease',
  description: 'Twelve months, furnished',
  documentId,
  roles: [{ name: 'tenant' }, { name: 'landlord' }],
  fields: [
    templateField('tenant', 'signature'),
    templateField('tenant', 'text', { label: 'rent', y: 200 }),
    templateField('landlord', 'signature', { page: 2, x: 300 }),
  ],
  ...changes,
});

async function createTemplate(request: Request, documentId?: string, changes: Record<string, unknown> = {}) {
  const response = await request('POST', '/api/v1/templates', { json: leaseTemplate(documentId ?? (await uploadLease(request)), changes) });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body;
}

// Tag positions on page 1 of the tagged PDF: [text, x, baseline y, font size].
const TAGGED_LINES: [string, number, number, number][] = [
  ['{{signature:tenant}}', 60, 600, 14],
  ['Monthly rent: {{text:tenant:rent}}', 60, 550, 12],
  ['{{checkbox:landlord:agree}} {{stamp:tenant}} {{signature}}', 60, 500, 12],
  ['Initials here {{initials:ten', 60, 450, 12],
  ['ant}} and nothing more', 60, 435, 12],
];

/** A 2-page PDF with text tags drawn by pdf-lib (and a date tag and the landlord's signature on page 2). */
async function makeTaggedPdf() {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const first = pdf.addPage([595, 842]);
  first.drawText('Lease agreement', { x: 60, y: 760, size: 20, font });
  for (const [text, x, y, size] of TAGGED_LINES) first.drawText(text, { x, y, size, font });
  const second = pdf.addPage([612, 792]);
  second.drawText('{{signature:landlord}}', { x: 300, y: 200, size: 12, font });
  second.drawText('{{date:tenant}}', { x: 60, y: 200, size: 12, font });
  return { pdf: Buffer.from(await pdf.save()), font };
}

describe('POST /api/v1/templates', () => {
  useSharedSystem();

  it('401 without an API key', async () => {
    const request = client((await sharedSystem()).url!);
    const response = await request('POST', '/api/v1/templates', { json: { name: 'x' } });
    expect(response.status).to.equal(401);
    expect(response.body.error).to.equal('unauthorized');
  });

  it('400 for a body of the wrong shape, every problem at once', async () => {
    const { request } = await createTestAccount();
    const response = await request('POST', '/api/v1/templates', {
      json: { name: ' ', roles: [{}], fields: [{ role: 'tenant', type: 'stamp', page: 0, x: 1, y: 1, width: 0, height: -1 }] },
    });
    expect(response.status).to.equal(400);
    expect(response.body.error).to.equal('validation_error');
    expect(response.body.details).to.have.members([
      'name is required',
      'documentId is required',
      'roles.0.name is required',
      'fields.0.type must be one of: signature, initials, date, text, checkbox, number, email, phone, radio, dropdown, multiSelect, checkboxGroup, calculated, signerName, signerEmail, staticText, image, attachment',
      'fields.0.page must be at least 1',
      'fields.0.width must be a positive number',
      'fields.0.height must be a positive number',
    ]);
  });

  it('400 for a name over 200 characters', async () => {
    const { request } = await createTestAccount();
    const response = await request('POST', '/api/v1/templates', { json: leaseTemplate(await uploadLease(request), { name: 'n'.repeat(201) }) });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal(['name must be at most 200 characters']);
  });

  describe('each rule of a template, one details string each', () => {
    const cases: [string, (documentId: string) => Record<string, unknown>, string][] = [
      ['at least one role', () => ({ roles: [], fields: [] }), 'roles must have at least one role'],
      [
        'unique role names',
        () => ({ roles: [{ name: 'tenant' }, { name: 'landlord' }, { name: 'tenant' }] }),
        'roles.2.name must be unique: "tenant" is also roles.0.name',
      ],
      [
        'every field names an existing role',
        () => ({ fields: [templateField('tenant', 'signature'), templateField('landlord', 'signature'), templateField('ghost', 'date')] }),
        'fields.2.role must be one of the roles (tenant, landlord): "ghost" is not',
      ],
      [
        'the page within the page count',
        () => ({ fields: [templateField('tenant', 'signature'), templateField('landlord', 'signature', { page: 3 })] }),
        'fields.1.page must be at most 2: the PDF has 2 page(s)',
      ],
      [
        'the rectangle inside the page box',
        () => ({ fields: [templateField('tenant', 'signature', { x: 500, width: 100 }), templateField('landlord', 'signature')] }),
        'fields.0 must lie inside page 1 (595 × 842 points)',
      ],
      [
        'at least one signature field per role',
        () => ({ fields: [templateField('tenant', 'signature'), templateField('landlord', 'initials')] }),
        'roles.1 ("landlord") must have at least one signature field',
      ],
      [
        'labels unique within the template',
        () => ({ fields: [templateField('tenant', 'signature', { label: 'sig' }), templateField('landlord', 'signature', { label: 'sig', page: 2 })] }),
        'fields.1.label must be unique within the template: "sig" is also fields.0.label',
      ],
    ];
    for (const [rule, changes, detail] of cases) {
      it(`400: ${rule}`, async () => {
        const { request } = await createTestAccount();
        const documentId = await uploadLease(request);
        const response = await request('POST', '/api/v1/templates', { json: leaseTemplate(documentId, changes(documentId)) });
        expect(response.status).to.equal(400);
        expect(response.body.error).to.equal('validation_error');
        expect(response.body.details).to.deep.equal([detail]);
      });
    }

    it('400: a document of this account that has its file', async () => {
      const { request } = await createTestAccount();
      const other = await createTestAccount();
      const othersDocument = await uploadLease(other.request);
      const waiting = (await request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: 100 } })).body.id;
      for (const [documentId, detail] of [
        [othersDocument, 'documentId must name a document of this account'],
        ['doc_nope', 'documentId must name a document of this account'],
        [waiting, 'documentId must name a document whose PDF has been uploaded'],
      ]) {
        const response = await request('POST', '/api/v1/templates', { json: leaseTemplate(documentId) });
        expect(response.status).to.equal(400);
        expect(response.body.details).to.deep.equal([detail]);
      }
    });

    it('400 with every broken rule at once', async () => {
      const { request } = await createTestAccount();
      const documentId = await uploadLease(request);
      const response = await request('POST', '/api/v1/templates', {
        json: leaseTemplate(documentId, {
          roles: [{ name: 'tenant' }, { name: 'tenant' }, { name: 'witness' }],
          fields: [
            templateField('tenant', 'signature', { label: 'x' }),
            templateField('ghost', 'text', { label: 'x', page: 9 }),
            templateField('witness', 'date', { y: 830 }),
          ],
        }),
      });
      expect(response.status).to.equal(400);
      expect(response.body.details).to.deep.equal([
        'roles.1.name must be unique: "tenant" is also roles.0.name',
        'fields.1.role must be one of the roles (tenant, witness): "ghost" is not',
        'fields.1.page must be at most 2: the PDF has 2 page(s)',
        'fields.1.label must be unique within the template: "x" is also fields.0.label',
        'fields.2 must lie inside page 1 (595 × 842 points)',
        'roles.2 ("witness") must have at least one signature field',
      ]);
    });
  });

  describe('quota of live templates by plan', () => {
    it('403 quota_exceeded for the 4th template on free; deleting one makes room', async () => {
      const { request } = await createTestAccount('free');
      const documentId = await uploadLease(request);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await createTemplate(request, documentId, { name: `Lease ${i}` })).id);
      const fourth = await request('POST', '/api/v1/templates', { json: leaseTemplate(documentId) });
      expect(fourth.status).to.equal(403);
      expect(fourth.body).to.include({ error: 'quota_exceeded', limit: 3, used: 3 });
      expect(fourth.body.message).to.contain('3 templates');
      expect((await request('GET', '/api/v1/account')).body.usage.templates).to.deep.equal({ used: 3, limit: 3 });
      expect((await request('DELETE', `/api/v1/templates/${ids[0]}`)).status).to.equal(204);
      expect((await request('GET', '/api/v1/account')).body.usage.templates).to.deep.equal({ used: 2, limit: 3 });
      expect((await request('POST', '/api/v1/templates', { json: leaseTemplate(documentId) })).status).to.equal(201);
    });

    it('10 on pro, even when created at once; unlimited on business', async () => {
      const { request } = await createTestAccount('pro');
      const documentId = await uploadLease(request);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => request('POST', '/api/v1/templates', { json: leaseTemplate(documentId, { name: `Lease ${i}` }) })),
      );
      expect(results.filter((result) => result.status === 201)).to.have.length(10);
      expect(results.filter((result) => result.status === 403)).to.have.length(2);
      const business = await createTestAccount('business');
      const businessDocument = await uploadLease(business.request);
      for (let i = 0; i < 11; i++) await createTemplate(business.request, businessDocument);
      expect((await business.request('GET', '/api/v1/account')).body.usage.templates).to.deep.equal({ used: 11, limit: null });
    });
  });

  it('201: the template with its own copy of the PDF, roles in signing order, and its event in the same transaction', async () => {
    const { request, db, account } = await createTestAccount();
    const documentId = await uploadLease(request);
    const response = await request('POST', '/api/v1/templates', {
      json: leaseTemplate(documentId, {
        roles: [
          { name: 'tenant', order: 2 },
          { name: 'landlord', order: 1 },
        ],
      }),
    });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    const template = response.body;
    expect(template.id).to.match(/^tpl_[0-9a-z]{26}$/);
    expect(template).to.include({ name: 'Residential lease', description: 'Twelve months, furnished', sourceDocumentId: documentId, pageCount: 2 });
    expect(template.pages).to.deep.equal([
      { width: 595, height: 842 },
      { width: 595, height: 842 },
    ]);
    expect(template.roles).to.deep.equal([
      { name: 'landlord', order: 1 },
      { name: 'tenant', order: 2 },
    ]);
    expect(template.fields).to.deep.equal([
      { role: 'tenant', type: 'signature', required: true, label: null, page: 1, x: 50, y: 100, width: 150, height: 40 },
      { role: 'tenant', type: 'text', required: true, label: 'rent', page: 1, x: 50, y: 200, width: 150, height: 40 },
      { role: 'landlord', type: 'signature', required: true, label: null, page: 2, x: 300, y: 100, width: 150, height: 40 },
    ]);
    const document = await request('GET', `/api/v1/documents/${documentId}`);
    expect(template.sha256).to.equal(document.body.sha256);
    const events = await db('events').where({ account_id: account.id, type: 'template.created' });
    expect(events).to.have.length(1);
    expect(events[0].data).to.include({ templateId: template.id, name: 'Residential lease', fieldCount: 3 });
    // The event's xid is the transaction that wrote it; the template row's xmin is the one that inserted it.
    const { rows } = await db.raw(
      'select (select xmin::text from templates where id = ?) as template, (select (xid::text::bigint % 4294967296)::text from events where id = ?) as event',
      [template.id, events[0].id],
    );
    expect(rows[0].event, 'the transaction that wrote the event').to.equal(rows[0].template);
    // The template keeps working after its document is deleted.
    expect((await request('DELETE', `/api/v1/documents/${documentId}`)).status).to.equal(204);
    expect((await request('GET', `/api/v1/templates/${template.id}`)).status).to.equal(200);
    expect((await request('GET', `/api/v1/templates/${template.id}/preview.png?page=2`)).status).to.equal(200);
    const activity = await request('GET', '/api/v1/dashboard/activity?type=template.created');
    expect(activity.body.data.map((item: { summary: string }) => item.summary)).to.deep.equal(['Template “Residential lease” created']);
  });

  it('a webhook can subscribe to template events', async () => {
    const { request } = await createTestAccount('business');
    const response = await request('POST', '/api/v1/webhooks', {
      json: { url: 'https://example.com/hook', events: ['template.created', 'template.updated', 'template.deleted'] },
    });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    expect(response.body.events).to.deep.equal(['template.created', 'template.updated', 'template.deleted']);
  });
});

describe('GET /api/v1/templates', () => {
  useSharedSystem();

  it('401 without an API key', async () => {
    const response = await client((await sharedSystem()).url!)('GET', '/api/v1/templates');
    expect(response.status).to.equal(401);
  });

  it('lists the account’s live templates newest first, a page at a time, and finds them by part of the name', async () => {
    const { request } = await createTestAccount();
    const other = await createTestAccount();
    await createTemplate(other.request, undefined, { name: 'Lease of the other account' });
    const documentId = await uploadLease(request);
    const names = ['Lease A', 'Offer letter', 'lease B', 'NDA 100%', 'Deleted lease'];
    const ids: string[] = [];
    for (const name of names) ids.push((await createTemplate(request, documentId, { name })).id);
    await request('DELETE', `/api/v1/templates/${ids[4]}`);
    const first = await request('GET', '/api/v1/templates?limit=3');
    expect(first.status).to.equal(200);
    expect(first.body.data.map((template: { name: string }) => template.name)).to.deep.equal(['NDA 100%', 'lease B', 'Offer letter']);
    expect(first.body.pagination).to.deep.equal({ limit: 3, hasMore: true, nextCursor: ids[1] });
    const second = await request('GET', `/api/v1/templates?limit=3&cursor=${first.body.pagination.nextCursor}`);
    expect(second.body.data.map((template: { name: string }) => template.name)).to.deep.equal(['Lease A']);
    expect(second.body.pagination).to.deep.equal({ limit: 3, hasMore: false, nextCursor: null });
    const leases = await request('GET', '/api/v1/templates?q=LEASE');
    expect(leases.body.data.map((template: { name: string }) => template.name)).to.deep.equal(['lease B', 'Lease A']);
    const percent = await request('GET', `/api/v1/templates?q=${encodeURIComponent('0%')}`);
    expect(percent.body.data.map((template: { name: string }) => template.name)).to.deep.equal(['NDA 100%']);
    expect((await request('GET', '/api/v1/templates?q=_')).body.data).to.deep.equal([]);
  });

  it('400 for a bad limit or cursor', async () => {
    const { request } = await createTestAccount();
    const response = await request('GET', '/api/v1/templates?limit=0&cursor=doc_x');
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal(['limit must be at least 1', 'cursor is not a valid cursor']);
  });

  it('is rate limited per plan: the 31st request of the hour on free is 429', async () => {
    const { request } = await createTestAccount('free');
    for (let i = 1; i <= 30; i++) {
      const response = await request('GET', '/api/v1/templates');
      expect(response.status).to.equal(200);
      expect(response.headers.get('x-ratelimit-limit')).to.equal('30');
      expect(response.headers.get('x-ratelimit-remaining')).to.equal(String(30 - i));
    }
    const limited = await request('GET', '/api/v1/templates');
    expect(limited.status).to.equal(429);
    expect(limited.body.error).to.equal('rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 3600);
    // Reading one template is not the limited operation.
    expect((await request('GET', '/api/v1/templates/tpl_01jd8x3c6hf1z8k3q2v5n7m9pt')).status).to.equal(404);
    const pro = await createTestAccount('pro');
    expect((await pro.request('GET', '/api/v1/templates')).headers.get('x-ratelimit-limit')).to.equal('300');
  });
});

describe('GET /api/v1/templates/:id', () => {
  useSharedSystem();

  it('404 for another account’s template, an unknown id, a malformed id and a deleted template', async () => {
    const { request } = await createTestAccount();
    const other = await createTestAccount();
    const theirs = await createTemplate(other.request);
    const mine = await createTemplate(request);
    await request('DELETE', `/api/v1/templates/${mine.id}`);
    for (const id of [theirs.id, 'tpl_01jd8x3c6hf1z8k3q2v5n7m9pt', 'doc_01jd8x3c6hf1z8k3q2v5n7m9pt', 'nope', mine.id]) {
      const response = await request('GET', `/api/v1/templates/${id}`);
      expect(response.status, id).to.equal(404);
      expect(response.body).to.include({ error: 'not_found', message: 'Template not found.' });
    }
  });

  it('200 with the template', async () => {
    const { request } = await createTestAccount();
    const created = await createTemplate(request);
    const response = await request('GET', `/api/v1/templates/${created.id}`);
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal(created);
  });
});

describe('PATCH /api/v1/templates/:id', () => {
  useSharedSystem();

  it('400 for an empty change, and for a change that breaks a rule (revalidated as a whole)', async () => {
    const { request } = await createTestAccount();
    const template = await createTemplate(request);
    const empty = await request('PATCH', `/api/v1/templates/${template.id}`, { json: {} });
    expect(empty.status).to.equal(400);
    expect(empty.body.details).to.deep.equal(['body must change at least one of name, description, documents, roles, fields']);
    const withoutLandlord = await request('PATCH', `/api/v1/templates/${template.id}`, { json: { roles: [{ name: 'tenant' }] } });
    expect(withoutLandlord.status).to.equal(400);
    expect(withoutLandlord.body.details).to.deep.equal(['fields.2.role must be one of the roles (tenant): "landlord" is not']);
    const offPage = await request('PATCH', `/api/v1/templates/${template.id}`, {
      json: { fields: [templateField('tenant', 'signature', { page: 2, y: 820 }), templateField('landlord', 'signature')] },
    });
    expect(offPage.body.details).to.deep.equal(['fields.0 must lie inside page 2 (595 × 842 points)']);
    expect((await request('GET', `/api/v1/templates/${template.id}`)).body).to.deep.equal(template);
  });

  it('404 for another account’s template', async () => {
    const { request } = await createTestAccount();
    const other = await createTestAccount();
    const theirs = await createTemplate(other.request);
    const response = await request('PATCH', `/api/v1/templates/${theirs.id}`, { json: { name: 'Mine now' } });
    expect(response.status).to.equal(404);
    expect((await other.request('GET', `/api/v1/templates/${theirs.id}`)).body.name).to.equal('Residential lease');
  });

  it('200: renames, clears the description, replaces roles and fields, and records template.updated', async () => {
    const { request, db, account } = await createTestAccount();
    const template = await createTemplate(request);
    const response = await request('PATCH', `/api/v1/templates/${template.id}`, {
      json: {
        name: 'Lease 2027',
        description: null,
        roles: [{ name: 'tenant' }, { name: 'guarantor' }],
        fields: [templateField('tenant', 'signature'), templateField('guarantor', 'signature', { label: 'guarantee' })],
      },
    });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body).to.include({ name: 'Lease 2027', description: null, createdAt: template.createdAt });
    expect(response.body.roles).to.deep.equal([
      { name: 'tenant', order: 1 },
      { name: 'guarantor', order: 2 },
    ]);
    expect(response.body.fields.map((placed: { role: string; label: string | null }) => [placed.role, placed.label])).to.deep.equal([
      ['tenant', null],
      ['guarantor', 'guarantee'],
    ]);
    expect(new Date(response.body.updatedAt).getTime()).to.be.greaterThan(new Date(template.updatedAt).getTime());
    const renamed = await request('PATCH', `/api/v1/templates/${template.id}`, { json: { name: 'Lease 2028' } });
    expect(renamed.body.fields).to.deep.equal(response.body.fields);
    const events = await db('events').where({ account_id: account.id, type: 'template.updated' }).orderBy('created_at');
    expect(events.map((event) => event.data.name)).to.deep.equal(['Lease 2027', 'Lease 2028']);
  });
});

describe('DELETE /api/v1/templates/:id', () => {
  useSharedSystem();

  it('204, then 404; records template.deleted; another account’s template is 404', async () => {
    const { request, db, account } = await createTestAccount();
    const other = await createTestAccount();
    const theirs = await createTemplate(other.request);
    expect((await request('DELETE', `/api/v1/templates/${theirs.id}`)).status).to.equal(404);
    const template = await createTemplate(request);
    expect((await request('DELETE', `/api/v1/templates/${template.id}`)).status).to.equal(204);
    expect((await request('DELETE', `/api/v1/templates/${template.id}`)).status).to.equal(404);
    expect((await request('GET', `/api/v1/templates/${template.id}/preview.png`)).status).to.equal(404);
    const events = await db('events').where({ account_id: account.id, type: 'template.deleted' });
    expect(events.map((event) => event.data.templateId)).to.deep.equal([template.id]);
  });
});

describe('POST /api/v1/documents/:id/detect-fields', () => {
  useSharedSystem();

  it('401 without a key, 404 for another account’s document, 409 for a document without its PDF', async () => {
    const { request } = await createTestAccount();
    const other = await createTestAccount();
    const theirs = await uploadLease(other.request);
    expect((await client((await sharedSystem()).url!)('POST', `/api/v1/documents/${theirs}/detect-fields`)).status).to.equal(401);
    expect((await request('POST', `/api/v1/documents/${theirs}/detect-fields`)).status).to.equal(404);
    const waiting = (await request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: 100 } })).body.id;
    expect((await request('POST', `/api/v1/documents/${waiting}/detect-fields`)).status).to.equal(409);
  });

  it('finds each tag with its own box, and warns about unknown types, malformed tags and tags split across lines', async () => {
    const { request, db, account } = await createTestAccount();
    const { pdf, font } = await makeTaggedPdf();
    const documentId = await uploadLease(request, pdf);
    const response = await request('POST', `/api/v1/documents/${documentId}/detect-fields`);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.roles).to.deep.equal(['tenant', 'landlord']);
    expect(response.body.fields.map(({ role, type, label, page, tag }: Record<string, unknown>) => ({ role, type, label, page, tag }))).to.deep.equal([
      { role: 'tenant', type: 'signature', label: null, page: 1, tag: '{{signature:tenant}}' },
      { role: 'tenant', type: 'text', label: 'rent', page: 1, tag: '{{text:tenant:rent}}' },
      { role: 'landlord', type: 'checkbox', label: 'agree', page: 1, tag: '{{checkbox:landlord:agree}}' },
      { role: 'landlord', type: 'signature', label: null, page: 2, tag: '{{signature:landlord}}' },
      { role: 'tenant', type: 'date', label: null, page: 2, tag: '{{date:tenant}}' },
    ]);
    // Each box is where pdf-lib printed the tag (within a point or two: pdf.js measures text, not glyphs).
    const expectBox = (
      found: { x: number; y: number; width: number; height: number },
      prefix: string,
      tag: string,
      x: number,
      baseline: number,
      size: number,
    ) => {
      expect(found.x).to.be.closeTo(x + font.widthOfTextAtSize(prefix, size), 2);
      expect(found.width).to.be.closeTo(font.widthOfTextAtSize(tag, size), 3);
      expect(found.y).to.be.within(baseline - size * 0.3, baseline);
      expect(found.y + found.height).to.be.within(baseline + size * 0.6, baseline + size * 1.1);
    };
    const [signature, rent] = response.body.fields;
    expectBox(signature, '', '{{signature:tenant}}', 60, 600, 14);
    expectBox(rent, 'Monthly rent: ', '{{text:tenant:rent}}', 60, 550, 12);
    expect(response.body.warnings).to.deep.equal([
      'page 1: {{stamp:tenant}} has an unknown type "stamp" (known: signature, initials, date, text, checkbox, number, email, phone, radio, dropdown, multiSelect, checkboxGroup, calculated, signerName, signerEmail, image, attachment)',
      'page 1: {{signature}} is malformed: write {{type:role}} or {{type:role:label}}',
      'page 1: a tag is split across lines ("{{initials:ten" … "ant}}"): keep each tag on one line',
    ]);
    expect(await db('templates').where({ account_id: account.id })).to.have.length(0);
  });
});

describe('POST /api/v1/templates with detectFields', () => {
  useSharedSystem();

  it('uses the fields of the text tags, adding the roles they name in order of first appearance', async () => {
    const { request } = await createTestAccount();
    const documentId = await uploadLease(request, (await makeTaggedPdf()).pdf);
    const response = await request('POST', '/api/v1/templates', {
      json: {
        name: 'Tagged lease',
        documentId,
        detectFields: true,
        roles: [{ name: 'witness' }],
        fields: [templateField('witness', 'signature', { page: 2, y: 50 })],
      },
    });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    expect(response.body.roles).to.deep.equal([
      { name: 'witness', order: 1 },
      { name: 'tenant', order: 2 },
      { name: 'landlord', order: 3 },
    ]);
    expect(response.body.fields.map(({ role, type, label, page }: Record<string, unknown>) => `${page} ${role} ${type} ${label}`)).to.deep.equal([
      '2 witness signature null',
      '1 tenant signature null',
      '1 tenant text rent',
      '1 landlord checkbox agree',
      '2 landlord signature null',
      '2 tenant date null',
    ]);
  });

  it('checks the tags’ fields by the same rules, naming each by its tag', async () => {
    const { request } = await createTestAccount();
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    pdf.addPage([595, 842]).drawText('{{initials:buyer}} {{text:buyer:price}}', { x: 60, y: 400, size: 12, font });
    const documentId = await uploadLease(request, Buffer.from(await pdf.save()));
    const response = await request('POST', '/api/v1/templates', {
      json: { name: 'Sale', documentId, detectFields: true, fields: [templateField('buyer', 'text', { label: 'price' })] },
    });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal([
      'the field of tag {{text:buyer:price}} on page 1.label must be unique within the template: "price" is also fields.0.label',
      'the role of tag {{initials:buyer}} on page 1 ("buyer") must have at least one signature field',
    ]);
  });

  it('gives a tag’s options to its field, and names the tag of options the rules refuse', async () => {
    const { request } = await createTestAccount();
    const tagged = async (line: string) => {
      const pdf = await PDFDocument.create();
      const font = await pdf.embedFont(StandardFonts.Helvetica);
      pdf.addPage([595, 842]).drawText(line, { x: 60, y: 400, size: 12, font });
      return uploadLease(request, Buffer.from(await pdf.save()));
    };
    const create = async (line: string) => request('POST', '/api/v1/templates', { json: { name: 'Move', documentId: await tagged(line), detectFields: true } });
    const line = '{{dropdown:tenant:Country:UK|France}} {{calculated:tenant:Total:[Rent] * 2}}';
    // The dry run shows what the template will take: the options, and the formula as formulas name fields.
    const dryRun = await request('POST', `/api/v1/documents/${await tagged(line)}/detect-fields`);
    expect(dryRun.body.warnings, JSON.stringify(dryRun.body)).to.deep.equal([]);
    expect(dryRun.body.fields.map(({ type, options, formula }: Record<string, unknown>) => ({ type, options, formula }))).to.deep.equal([
      { type: 'dropdown', options: ['UK', 'France'], formula: undefined },
      { type: 'calculated', options: undefined, formula: '{Rent} * 2' },
    ]);
    const response = await create('{{signature:tenant}} Country: {{dropdown:tenant:Country:UK|France}}');
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    expect(response.body.fields.map(({ type, label, options }: Record<string, unknown>) => ({ type, label, options }))).to.deep.equal([
      { type: 'signature', label: null, options: undefined },
      { type: 'dropdown', label: 'Country', options: ['UK', 'France'] },
    ]);
    const refused = await create('{{signature:tenant}} {{dropdown:tenant:Country:UK|UK}}');
    expect(refused.status).to.equal(400);
    expect(refused.body.details).to.deep.equal(['the field of tag {{dropdown:tenant:Country:UK|UK}} on page 1.options.1 ("UK") is listed twice']);
  });
});

describe('GET /api/v1/templates/:id/preview.png', () => {
  useSharedSystem();

  /** The colour of a pixel at PDF point (x, y) of a page `height` points tall, rendered at 72 dpi. */
  const pixelAt = (png: PNG, x: number, y: number, height: number) => {
    const offset = (png.width * Math.round(height - y) + Math.round(x)) * 4;
    return [png.data[offset], png.data[offset + 1], png.data[offset + 2]];
  };

  it('a real PNG of the page’s size, with each field drawn in its place', async () => {
    const { request } = await createTestAccount();
    const template = await createTemplate(request, await uploadLease(request, await makePdf(['Lease', 'Signatures'])));
    const response = await request('GET', `/api/v1/templates/${template.id}/preview.png?page=1`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('image/png');
    const png = PNG.sync.read(response.bytes);
    expect([png.width, png.height]).to.deep.equal([595, 842]);
    // Inside the tenant's signature field (50, 100, 150 × 40): tinted; far from any field and text: white.
    expect(pixelAt(png, 125, 110, 842)).to.not.deep.equal([255, 255, 255]);
    expect(pixelAt(png, 400, 400, 842)).to.deep.equal([255, 255, 255]);
    // Its border, in the role's colour, runs along the field's left edge.
    const [red, green, blue] = pixelAt(png, 50, 120, 842);
    expect(blue).to.be.greaterThan(red + 50);
    expect(green).to.be.lessThan(200);
    const second = PNG.sync.read((await request('GET', `/api/v1/templates/${template.id}/preview.png?page=2`)).bytes);
    expect(pixelAt(second, 375, 120, 842)).to.not.deep.equal([255, 255, 255]);
    expect(pixelAt(second, 125, 120, 842)).to.deep.equal([255, 255, 255]);
  });

  it('page 1 by default; 400 for a page the template does not have; 404 for another account’s template', async () => {
    const { request } = await createTestAccount();
    const other = await createTestAccount();
    const template = await createTemplate(request);
    expect(PNG.sync.read((await request('GET', `/api/v1/templates/${template.id}/preview.png`)).bytes).width).to.equal(595);
    const missing = await request('GET', `/api/v1/templates/${template.id}/preview.png?page=3`);
    expect(missing.status).to.equal(400);
    expect(missing.body.details).to.deep.equal(['page must be at most 2: the template has 2 page(s)']);
    expect((await request('GET', `/api/v1/templates/${template.id}/preview.png?page=x`)).status).to.equal(400);
    expect((await other.request('GET', `/api/v1/templates/${template.id}/preview.png`)).status).to.equal(404);
  });
});

describe('GET /api/v1/search finds templates by name', () => {
  useSharedSystem();

  /** The API of the shared system with PostgreSQL search, whatever backend the shared system has. */
  async function withPostgresSearch(apiKey: string, run: (request: Request) => Promise<void>) {
    const system = await sharedSystem();
    const api = await startApp({}, { deps: { search: createPostgresSearch(system.database.knex) } });
    try {
      await run(client(api.url, apiKey));
    } finally {
      await api.close();
    }
  }

  it('on both backends: live templates of the account, with the name highlighted', async () => {
    const { request, apiKey, system } = await createTestAccount();
    const other = await createTestAccount();
    const documentId = await uploadLease(request);
    const lease = await createTemplate(request, documentId, { name: 'Quokka lease' });
    const offer = await createTemplate(request, documentId, { name: 'Quokka offer letter' });
    await createTemplate(other.request, undefined, { name: 'Quokka lease' });
    expect((await request('DELETE', `/api/v1/templates/${offer.id}`)).status).to.equal(204);
    const expectLeaseOnly = async (search: Request) => {
      for (const query of ['q=quokka&type=template', 'q=quok']) {
        const response = await search('GET', `/api/v1/search?${query}`);
        expect(response.status, JSON.stringify(response.body)).to.equal(200);
        expect(response.body.data.map((hit: { id: string }) => hit.id)).to.deep.equal([lease.id]);
      }
      const [hit] = (await search('GET', '/api/v1/search?q=quokka')).body.data;
      expect(hit).to.include({ type: 'template', name: 'Quokka lease', sourceDocumentId: documentId });
      expect(hit.highlight.name).to.equal('<mark>Quokka</mark> lease');
      expect((await search('GET', '/api/v1/search?q=quokka&status=ready')).body.data).to.deep.equal([]);
    };
    await withPostgresSearch(apiKey, expectLeaseOnly);
    // The shared system's own backend (Elasticsearch when configured) follows the template events.
    expect(system.config.ELASTICSEARCH_URL, 'the integration run has Elasticsearch').to.be.a('string');
    await eventually(() => expectLeaseOnly(request), 15_000);
  });
});
