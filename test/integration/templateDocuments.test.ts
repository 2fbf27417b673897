import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { signedUp, uploadPdf } from '../support/consoleClient';
import { client } from '../support/http';
import { makeManyPagePdf, makePdf } from '../support/pdfs';
import { eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount, sharedSystem, useSharedSystem } from '../support/system';
import { uploadDocument } from '../support/documents';

// Templates of several documents: each document copied with its own text tags, fields per document,
// roles of every recipient kind and step, and requests made from them sealed document by document.

type Account = Awaited<ReturnType<typeof createTestAccount>>;

/** A one-page PDF with these lines of text (text tags among them) printed down the page. */
async function taggedPdf(lines: string[]) {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([595, 842]);
  lines.forEach((line, index) => page.drawText(line, { x: 60, y: 760 - index * 80, size: 14, font }));
  return Buffer.from(await pdf.save());
}

const box = { page: 1, x: 300, y: 100, width: 120, height: 30 };

/** A lease (the tenant's tags) and its annex (the landlord's and a tenant date), tagged; roles of every kind in two steps. */
async function leaseWithAnnex(account: Account) {
  const lease = await uploadDocument(account.request, {
    fileName: 'lease.pdf',
    pdf: await taggedPdf(['Lease', 'Rent: {{text:tenant:rent}}', '{{signature:tenant}}']),
  });
  const annex = await uploadDocument(account.request, {
    fileName: 'annex.pdf',
    pdf: await taggedPdf(['Annex', 'From {{date:tenant:start}}', '{{signature:landlord}}']),
  });
  const body = {
    name: 'Lease with annex',
    documents: [{ document_id: lease.id }, { document_id: annex.id }],
    detectFields: true,
    roles: [
      { name: 'tenant', routingOrder: 1 },
      { name: 'landlord', routingOrder: 1 },
      { name: 'manager', recipientType: 'approver', routingOrder: 2 },
      { name: 'archive', recipientType: 'cc' },
    ],
    fields: [{ document_id: annex.id, role: 'tenant', type: 'initials', label: 'initials', ...box }],
  };
  const created = await account.request('POST', '/api/v1/templates', { json: body });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return { lease, annex, template: created.body, body };
}

const recipients = [
  { name: 'Tina Tenant', email: 'tina@example.com', role: 'tenant' },
  { name: 'Larry Landlord', email: 'larry@example.com', role: 'landlord' },
  { name: 'Mia Manager', email: 'mia@example.com', role: 'manager' },
  { name: 'Archie Archive', email: 'archie@example.com', role: 'archive' },
];

describe('POST /api/v1/templates with several documents', function () {
  useSharedSystem();
  this.timeout(120_000);

  it('201: copies each document, finds the text tags of each, places fields per document, and keeps each role’s recipient kind and step', async () => {
    const account = await createTestAccount();
    const { lease, annex, template } = await leaseWithAnnex(account);
    expect(template).to.include({ sourceDocumentId: lease.id, pageCount: 1 });
    expect(template.documents.map(({ documentId, fileName, pageCount }: Record<string, unknown>) => ({ documentId, fileName, pageCount }))).to.deep.equal([
      { documentId: lease.id, fileName: 'lease.pdf', pageCount: 1 },
      { documentId: annex.id, fileName: 'annex.pdf', pageCount: 1 },
    ]);
    // The copies have their tags taken out: not the uploaded bytes.
    expect(template.documents[0].sha256).to.not.equal(lease.sha256);
    expect(template.documents[1].sha256).to.not.equal(annex.sha256);
    expect(template.sha256).to.equal(template.documents[0].sha256);
    expect(template.roles).to.deep.equal([
      { name: 'tenant', order: 1, routingOrder: 1 },
      { name: 'landlord', order: 2, routingOrder: 1 },
      { name: 'manager', order: 3, recipientType: 'approver', routingOrder: 2 },
      { name: 'archive', order: 4, recipientType: 'cc' },
    ]);
    const placed = template.fields.map(
      ({ documentId, role, type, label }: Record<string, unknown>) => `${documentId === lease.id ? 'lease' : 'annex'} ${role} ${type} ${label}`,
    );
    expect(placed).to.have.members([
      'annex tenant initials initials',
      'lease tenant text rent',
      'lease tenant signature null',
      'annex tenant date start',
      'annex landlord signature null',
    ]);
    const got = await account.request('GET', `/api/v1/templates/${template.id}`);
    expect(got.body).to.deep.equal(template);
    const [event] = await account.db('events').where({ account_id: account.account.id, type: 'template.created' });
    expect(event.data.documents).to.deep.equal([
      { documentId: lease.id, fileName: 'lease.pdf' },
      { documentId: annex.id, fileName: 'annex.pdf' },
    ]);
    // Each document's page previews with its own fields.
    const preview = await account.request('GET', `/api/v1/templates/${template.id}/preview.png?documentId=${annex.id}`);
    expect(preview.status).to.equal(200);
    expect(preview.headers.get('content-type')).to.equal('image/png');
    const elsewhere = await account.request('GET', `/api/v1/templates/${template.id}/preview.png?documentId=doc_nope`);
    expect(elsewhere.status).to.equal(400);
    expect(elsewhere.body.details).to.deep.equal(['documentId must be one of the template’s documents: "doc_nope" is not']);
  });

  it('400 for a field on an unknown document, without its document, or off its document’s pages, and for roles that break the recipient rules', async () => {
    const account = await createTestAccount();
    const first = await uploadDocument(account.request, { fileName: 'a.pdf', pages: ['A'] });
    const second = await uploadDocument(account.request, { fileName: 'b.pdf', pages: ['B', 'B2'] });
    const documents = [{ document_id: first.id }, { document_id: second.id }];
    const signature = { role: 'signer', type: 'signature', ...box };
    const response = await account.request('POST', '/api/v1/templates', {
      json: {
        name: 'T',
        documents,
        roles: [
          { name: 'signer', routingOrder: 1 },
          { name: 'boss', recipientType: 'approver' },
          { name: 'copy', recipientType: 'cc' },
        ],
        fields: [
          { ...signature, document_id: 'doc_unknown' },
          signature,
          { ...signature, document_id: first.id, page: 2 },
          { ...signature, document_id: second.id, page: 2 },
          { ...signature, role: 'boss', document_id: second.id },
        ],
      },
    });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal([
      'fields.0.document_id must be one of the template’s documents: "doc_unknown" is not',
      'fields.1.document_id is required when the template has several documents',
      'roles.1.routingOrder is required once another role has one',
      'fields.2.page must be at most 1: its document has 1 page(s)',
      'fields.4.role cannot be "boss", an approver: only a signer\'s role has fields',
    ]);
    const cases: [Record<string, unknown>, string][] = [
      [{ documents, documentId: first.id }, 'documents cannot be combined with documentId'],
      [{ documents: [{ document_id: first.id }, { document_id: first.id }] }, 'documents.1.document_id is a duplicate: each document is copied once'],
      [{ documents: [] }, 'documents must have at least 1 item(s)'],
      [
        { documents: [{ document_id: first.id }], roles: [{ name: 'copy', recipientType: 'cc' }], fields: [] },
        'roles must have at least one role that is not cc',
      ],
    ];
    for (const [body, detail] of cases) {
      const refused = await account.request('POST', '/api/v1/templates', {
        json: { name: 'T', roles: [{ name: 'signer' }], fields: [{ ...signature, document_id: first.id }], ...body },
      });
      expect(refused.status, detail).to.equal(400);
      expect(refused.body.details, JSON.stringify(refused.body)).to.include(detail);
    }
  });

  it('404 for another account’s document, and nothing is made', async () => {
    const account = await createTestAccount();
    const stranger = await createTestAccount();
    const mine = await uploadDocument(account.request, { fileName: 'mine.pdf', pages: ['Mine'] });
    const theirs = await uploadDocument(stranger.request, { fileName: 'theirs.pdf', pages: ['Theirs'] });
    const response = await account.request('POST', '/api/v1/templates', {
      json: {
        name: 'T',
        documents: [{ document_id: mine.id }, { document_id: theirs.id }],
        roles: [{ name: 'signer' }],
        fields: [{ document_id: mine.id, role: 'signer', type: 'signature', ...box }],
      },
    });
    expect(response.status).to.equal(404);
    expect(response.body.message).to.equal('Document not found.');
    expect(await account.db('templates').where({ account_id: account.account.id })).to.have.length(0);
    const { template } = await leaseWithAnnex(account);
    const patched = await account.request('PATCH', `/api/v1/templates/${template.id}`, { json: { documents: [{ document_id: theirs.id }] } });
    expect(patched.status).to.equal(404);
  });

  it('holds a template to REQUEST_MAX_DOCUMENTS documents and REQUEST_MAX_PAGES pages, naming the setting', async () => {
    const account = await createTestAccount();
    const many = [];
    for (let i = 0; i < 21; i++) many.push({ document_id: (await uploadDocument(account.request, { fileName: `d${i}.pdf`, pages: [`Page ${i}`] })).id });
    const body = { name: 'T', roles: [{ name: 'signer' }], fields: [{ document_id: many[0].document_id, role: 'signer', type: 'signature', ...box }] };
    const tooMany = await account.request('POST', '/api/v1/templates', { json: { ...body, documents: many } });
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body.details).to.deep.equal(['documents must list at most 20 documents (REQUEST_MAX_DOCUMENTS)']);
    const big = [];
    for (let i = 0; i < 2; i++) big.push({ document_id: (await uploadDocument(account.request, { fileName: `big${i}.pdf`, pdf: makeManyPagePdf(1001) })).id });
    const tooLong = await account.request('POST', '/api/v1/templates', {
      json: { ...body, documents: big, fields: [{ ...body.fields[0], document_id: big[0].document_id }] },
    });
    expect(tooLong.status).to.equal(400);
    expect(tooLong.body.details).to.deep.equal(['documents must have at most 2000 pages in all (REQUEST_MAX_PAGES); these have 2002']);
  });
});

describe('PATCH /api/v1/templates/{id} with documents', function () {
  useSharedSystem();
  this.timeout(120_000);

  it('reorders, keeps each copy and its fields, adds new copies, and refuses to leave fields without their document', async () => {
    const account = await createTestAccount();
    const { lease, annex, template } = await leaseWithAnnex(account);
    const reordered = await account.request('PATCH', `/api/v1/templates/${template.id}`, {
      json: { documents: [{ document_id: annex.id }, { document_id: lease.id }] },
    });
    expect(reordered.status, JSON.stringify(reordered.body)).to.equal(200);
    expect(reordered.body.documents).to.deep.equal([template.documents[1], template.documents[0]]);
    expect(reordered.body.sourceDocumentId).to.equal(annex.id);
    expect(reordered.body.fields).to.deep.equal(template.fields);

    const dropped = await account.request('PATCH', `/api/v1/templates/${template.id}`, { json: { documents: [{ document_id: annex.id }] } });
    expect(dropped.status).to.equal(400);
    expect(dropped.body.details).to.include(`fields.1 is on the document ${lease.id}, which documents leaves out: give fields with documents`);

    const extra = await uploadDocument(account.request, { fileName: 'extra.pdf', pages: ['Extra'] });
    const added = await account.request('PATCH', `/api/v1/templates/${template.id}`, {
      json: { documents: [{ document_id: annex.id }, { document_id: lease.id }, { document_id: extra.id }] },
    });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    expect(added.body.documents.map((document: { documentId: string }) => document.documentId)).to.deep.equal([annex.id, lease.id, extra.id]);
    expect(added.body.documents[2].sha256).to.equal(extra.sha256);
    expect((await account.request('GET', `/api/v1/templates/${template.id}`)).body).to.deep.equal(added.body);
  });
});

describe('a request made from a template of several documents', function () {
  useSharedSystem();
  this.timeout(180_000);

  it('copies every document, places fields and prefill across them, routes each role’s recipient kind and step, and seals each document', async () => {
    const account = await createTestAccount();
    const { template } = await leaseWithAnnex(account);
    const created = await account.request('POST', '/api/v1/signatures', {
      json: { template_id: template.id, title: 'Lease of flat 3', signers: recipients, prefill: { rent: '1200 EUR', start: '2027-01-01' } },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const signingRequest = created.body;
    expect(
      signingRequest.documents.map(({ fileName, pageCount, originalSha256 }: Record<string, unknown>) => ({ fileName, pageCount, originalSha256 })),
    ).to.deep.equal(template.documents.map(({ fileName, pageCount, sha256 }: Record<string, unknown>) => ({ fileName, pageCount, originalSha256: sha256 })));
    const [leaseCopy, annexCopy] = signingRequest.documents.map((document: { documentId: string }) => document.documentId);
    const byRole = Object.fromEntries(
      signingRequest.signers.map((signer: { email: string }, index: number) => [
        recipients.find((each) => each.email === signer.email)!.role,
        { ...signer, index },
      ]),
    );
    expect(
      ['tenant', 'landlord', 'manager', 'archive'].map((role) => [byRole[role].recipientType, byRole[role].routingOrder, byRole[role].fields === null]),
    ).to.deep.equal([
      ['signer', 1, false],
      ['signer', 1, false],
      ['approver', 2, true],
      ['cc', 1, true],
    ]);
    const where = (fields: { documentId: string; type: string; label: string | null; value?: string }[]) =>
      fields.map(
        (field) =>
          `${field.documentId === leaseCopy ? 'lease' : field.documentId === annexCopy ? 'annex' : '?'} ${field.type} ${field.label} ${field.value ?? '-'}`,
      );
    expect(where(byRole.tenant.fields)).to.have.members([
      'annex initials initials -',
      'lease text rent 1200 EUR',
      'lease signature null -',
      'annex date start 2027-01-01',
    ]);
    expect(where(byRole.landlord.fields)).to.deep.equal(['annex signature null -']);
    // The cc never gets a link; the approver waits for the first step.
    expect((await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${byRole.archive.id}/link`)).status).to.equal(409);
    const url = account.system.url!;
    const linkOf = async (role: string) => tokenOf(await signingLinkOf(account.request, signingRequest.id, byRole[role].id));
    const managerToken = await linkOf('manager');
    expect((await client(url)('POST', `/sign/${managerToken}/approve`)).status).to.equal(409);
    const tenantFields = Object.fromEntries(
      byRole.tenant.fields.flatMap((field: { type: string }, index: number) => (field.type === 'initials' ? [[String(index), 'T.T.']] : [])),
    );
    const sign = async (role: string, name: string, fieldValues?: Record<string, string>) =>
      client(url)('POST', `/sign/${await linkOf(role)}/sign`, { json: { consent: true, signature: { type: 'typed', value: name }, fieldValues } });
    expect((await sign('tenant', 'Tina Tenant', tenantFields)).status).to.equal(200);
    expect((await sign('landlord', 'Larry Landlord')).status).to.equal(200);
    await eventually(async () => expect((await client(url)('POST', `/sign/${managerToken}/approve`)).status).to.equal(200), 60_000);
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);

    // Each document sealed on its own, valid, its prefilled values printed in it.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-template-documents-'));
    try {
      for (const [documentId, printed, absent] of [
        [leaseCopy, '1200 EUR', '2027-01-01'],
        [annexCopy, '2027-01-01', '1200 EUR'],
      ]) {
        const sealed = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/documents/${documentId}`);
        expect(sealed.status).to.equal(200);
        const file = path.join(dir, `${documentId}.pdf`);
        fs.writeFileSync(file, sealed.bytes);
        expect(execFileSync('pdfsig', [file]).toString()).to.contain('Signature is Valid');
        execFileSync('qpdf', ['--check', file]);
        const firstPage = execFileSync('pdftotext', ['-f', '1', '-l', '1', file, '-']).toString();
        expect(firstPage).to.contain(printed).and.not.contain(absent).and.not.contain('{{');
        expect(execFileSync('pdftotext', [file, '-']).toString()).to.contain('Documents of this request (2)');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('400 for a recipient kind or step other than its role’s, and for sequential order over roles with steps', async () => {
    const account = await createTestAccount();
    const { template } = await leaseWithAnnex(account);
    const response = await account.request('POST', '/api/v1/signatures', {
      json: {
        template_id: template.id,
        title: 'T',
        signingOrder: 'sequential',
        signers: [{ ...recipients[0], recipientType: 'viewer' }, recipients[1], recipients[2], recipients[3]],
      },
    });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal([
      'signers.0.recipientType must be left out or be the role\'s: "tenant" is a signer\'s role',
      'signingOrder cannot be sequential: the template’s roles have routing orders, which are the steps',
    ]);
    const step = await account.request('POST', '/api/v1/signatures', {
      json: {
        template_id: template.id,
        title: 'T',
        signers: recipients.map((recipient) => ({ ...recipient, routingOrder: recipient.role === 'manager' ? 3 : 1 })),
      },
    });
    expect(step.status).to.equal(400);
    expect(step.body.details).to.deep.equal(['signers.2.routingOrder must be left out or be the role\'s: "manager" acts in step 2']);
  });
});

describe('the console’s template pages with several documents', function () {
  useSharedSystem();
  this.timeout(120_000);

  it('the editor’s save takes documents; the list counts them, the preview shows each document’s pages, the send form each role’s part', async () => {
    const { browser } = await signedUp((await sharedSystem()).url!, {}, 'Packets Ltd');
    await browser.request('GET', '/app/documents');
    const lease = await uploadPdf(browser, await makePdf(['Lease']), 'lease.pdf');
    const annex = await uploadPdf(browser, await makePdf(['Annex', 'Annex 2']), 'annex.pdf');
    const created = await browser.postJson('/app/templates', {
      name: 'Packet',
      documents: [{ document_id: lease.id }, { document_id: annex.id }],
      roles: [{ name: 'tenant' }, { name: 'boss', recipientType: 'approver' }],
      fields: [{ document_id: annex.id, role: 'tenant', type: 'signature', ...box, page: 2 }],
    });
    expect(created.status, created.text).to.equal(201);
    const list = await browser.request('GET', '/app/templates');
    expect(list.text).to.contain(`href="/app/documents/${lease.id}">lease.pdf`).and.contain('and 1 more');
    const preview = await browser.request('GET', `/app/templates/${created.json.id}`);
    expect(preview.status).to.equal(200);
    expect(preview.text)
      .to.contain('Document 1: lease.pdf')
      .and.contain('Document 2: annex.pdf')
      .and.contain(`/app/templates/${created.json.id}/pages/2.png?documentId=${annex.id}`)
      .and.contain('<td data-label="Document">annex.pdf</td>');
    const image = await browser.request('GET', `/app/templates/${created.json.id}/pages/2.png?documentId=${annex.id}`);
    expect(image.status).to.equal(200);
    expect(image.headers.get('content-type')).to.equal('image/png');
    expect((await browser.request('GET', `/app/templates/${created.json.id}/pages/2.png?documentId=${lease.id}`)).status).to.equal(400);
    // The send form names the documents and each role's part.
    const send = await browser.request('GET', `/app/requests/new?template=${created.json.id}`);
    expect(send.status).to.equal(200);
    expect(send.text).to.contain('(2 documents, 3 pages)').and.contain('Role: boss <span class="hint">(approver)</span>');
  });
});
