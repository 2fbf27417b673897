import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { uploadDocument } from '../support/documents';
import { client } from '../support/http';
import { makeManyPagePdf } from '../support/pdfs';
import { eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';
import { signedFileNames } from '../../src/signingRequests/download';
import { invitationMailKey } from '../../src/signingRequests/reminders';

// A signing request that sends several documents (an envelope): made, read, signed, sealed and
// downloaded through the API, each document sealed on its own and checked with poppler and unzip.

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const signerOf = (account: Account, url: string) => {
  const request = client(account.system.url!);
  const token = tokenOf(url);
  return {
    view: () => request('GET', `/sign/${token}/request`),
    original: (documentId?: string) => request('GET', documentId ? `/sign/${token}/documents/${documentId}` : `/sign/${token}/document`),
    sign: (body: unknown) => request('POST', `/sign/${token}/sign`, { json: body }),
  };
};

const pdfsigOf = (pdf: Buffer) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'envelope-')), 'sealed.pdf');
  fs.writeFileSync(file, pdf);
  let out = '';
  try {
    out = execFileSync('pdfsig', [file], { encoding: 'utf8' });
  } catch (error) {
    out = String((error as { stdout?: string }).stdout ?? '');
  }
  return { file, out, text: execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' }) };
};

describe('signing requests with several documents', () => {
  it('sends two documents in order, signs fields on each, and seals each on its own', async () => {
    const account = await createTestAccount();
    const contract = await uploadDocument(account.request, { fileName: 'contract.pdf', pages: ['Contract page one'] });
    const annex = await uploadDocument(account.request, { fileName: 'annex.pdf', pages: ['Annex page one', 'Annex page two'] });

    const created = await account.request('POST', '/api/v1/signatures', {
      json: {
        documents: [{ document_id: contract.id }, { documentId: annex.id }],
        title: 'Contract with annex',
        signers: [
          {
            name: 'Ada Lovelace',
            email: 'ada@example.com',
            fields: [
              { document_id: contract.id, page: 1, x: 50, y: 600, width: 200, height: 40, type: 'signature' },
              { documentId: annex.id, page: 2, x: 50, y: 500, width: 200, height: 40, type: 'signature' },
            ],
          },
          { name: 'Grace Hopper', email: 'grace@example.com' },
        ],
      },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const signingRequest = created.body;
    expect(signingRequest.documentId).to.equal(contract.id);
    expect(signingRequest.originalSha256).to.equal(contract.sha256);
    expect(signingRequest.documents).to.deep.equal([
      { documentId: contract.id, fileName: 'contract.pdf', pageCount: 1, originalSha256: contract.sha256, sealedSha256: null },
      { documentId: annex.id, fileName: 'annex.pdf', pageCount: 2, originalSha256: annex.sha256, sealedSha256: null },
    ]);
    expect(signingRequest.signers[0].fields.map((field: { documentId: string }) => field.documentId)).to.deep.equal([contract.id, annex.id]);

    // The list finds it by either document.
    for (const id of [contract.id, annex.id]) {
      const listed = await account.request('GET', `/api/v1/signatures?documentId=${id}`);
      expect(listed.body.data.map((each: { id: string }) => each.id)).to.deep.equal([signingRequest.id]);
    }
    // Neither document can be deleted while it is out for signature.
    expect((await account.request('DELETE', `/api/v1/documents/${annex.id}`)).status).to.equal(409);

    // The signer's view lists both documents, and serves each original, and nothing else.
    const ada = signerOf(account, await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
    const view = await ada.view();
    expect(view.body.documents).to.deep.equal([
      { id: contract.id, fileName: 'contract.pdf', pageCount: 1 },
      { id: annex.id, fileName: 'annex.pdf', pageCount: 2 },
    ]);
    expect(view.body.document).to.deep.equal({ fileName: 'contract.pdf', pageCount: 1 });
    const originalAnnex = await ada.original(annex.id);
    expect(originalAnnex.status).to.equal(200);
    expect(originalAnnex.headers.get('content-type')).to.equal('application/pdf');
    const other = await uploadDocument(account.request, { fileName: 'other.pdf', pages: ['Not in this request'] });
    expect((await ada.original(other.id)).status).to.equal(404);
    expect((await ada.original('doc_nonsense')).status).to.equal(404);

    // Before completion there is nothing sealed to download.
    expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`)).status).to.equal(409);
    expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}/documents/${annex.id}`)).status).to.equal(409);

    expect((await ada.sign({ consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } })).status).to.equal(200);
    const grace = signerOf(account, await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[1].id));
    expect((await grace.sign({ consent: true, signature: { type: 'typed', value: 'Grace Hopper' } })).status).to.equal(200);

    const completed = await eventually(async () => {
      const got = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(got.body.status).to.equal('completed');
      return got.body;
    }, 60_000);

    // Each document sealed on its own: valid, with the other's hash on its certificate.
    const sealed: Buffer[] = [];
    for (const [index, document] of [contract, annex].entries()) {
      const response = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/documents/${document.id}`);
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('application/pdf');
      const bytes = response.bytes;
      sealed.push(bytes);
      const { out, text, file } = pdfsigOf(bytes);
      expect(out).to.include('Signature is Valid');
      expect(out).to.include('Total document signed');
      execFileSync('qpdf', ['--check', file]);
      expect(text).to.include('Documents of this request (2)');
      expect(text).to.include(contract.sha256).and.to.include(annex.sha256);
      expect(completed.documents[index].sealedSha256).to.match(/^[0-9a-f]{64}$/);
      expect(completed.documents[index].sealedSha256).to.equal(execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0]);
      // Grace, who was given no fields, signs on each document's signatures page; Ada's fields are on both.
      expect(text).to.include('Grace Hopper');
    }
    expect(completed.sealedSha256).to.equal(completed.documents[0].sealedSha256);
    const contractPages = execFileSync('pdfinfo', [pdfsigOf(sealed[0]).file], { encoding: 'utf8' });
    expect(contractPages).to.match(/Pages:\s+3/); // its page, the signatures page, the certificate
    expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}/documents/${other.id}`)).status).to.equal(404);

    // GET /document answers a ZIP of both, in order, byte for byte the same files.
    const zip = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`);
    expect(zip.status).to.equal(200);
    expect(zip.headers.get('content-type')).to.equal('application/zip');
    expect(zip.headers.get('content-disposition')).to.include('.zip');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envelope-zip-'));
    fs.writeFileSync(path.join(dir, 'all.zip'), zip.bytes);
    const listing = execFileSync('zipinfo', ['-1', path.join(dir, 'all.zip')], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(listing).to.deep.equal(['contract (signed).pdf', 'annex (signed).pdf']);
    execFileSync('unzip', ['-q', path.join(dir, 'all.zip'), '-d', dir]);
    expect(fs.readFileSync(path.join(dir, 'contract (signed).pdf')).equals(sealed[0])).to.equal(true);
    expect(fs.readFileSync(path.join(dir, 'annex (signed).pdf')).equals(sealed[1])).to.equal(true);

    // Events: document.signed once per document, naming the request; every request event names both documents.
    const events = await account.db('events').where({ account_id: account.account.id }).orderBy('id');
    const signed = events.filter((row) => row.type === 'document.signed');
    expect(signed.map((row) => row.data.documentId)).to.deep.equal([contract.id, annex.id]);
    for (const row of signed) expect(row.data).to.include({ signingRequestId: signingRequest.id, signatureCount: 2 });
    const documents = [
      { documentId: contract.id, fileName: 'contract.pdf' },
      { documentId: annex.id, fileName: 'annex.pdf' },
    ];
    for (const type of ['signing_request.created', 'signer.signed', 'signing_request.completed']) {
      const rows = events.filter((row) => row.type === type);
      expect(rows.length, type).to.be.greaterThan(0);
      for (const row of rows) expect(row.data.documents, type).to.deep.equal(documents);
    }

    // Everyone gets both sealed PDFs by e-mail.
    const mails = await eventually(async () => {
      const rows = await account.db('mail_outbox').where('idempotency_key', 'like', `completed:${signingRequest.id}:%`);
      expect(rows).to.have.length(3);
      return rows;
    });
    for (const mail of mails) {
      expect(mail.attachments.map((each: { filename: string }) => each.filename)).to.deep.equal(['contract (signed).pdf', 'annex (signed).pdf']);
      expect(Buffer.from(mail.attachments[1].content, 'base64').equals(sealed[1])).to.equal(true);
    }
  });

  it('refuses what cannot be an envelope, each with its reason', async () => {
    const account = await createTestAccount();
    const first = await uploadDocument(account.request, { fileName: 'a.pdf', pages: ['A'] });
    const second = await uploadDocument(account.request, { fileName: 'b.pdf', pages: ['B'] });
    const signers = [{ name: 'Ada', email: 'ada@example.com' }];
    const field = { page: 1, x: 10, y: 10, width: 100, height: 30, type: 'signature' };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ documents: [] }, 400, 'documents must have at least 1 item(s)'],
      [{ documents: [{ document_id: first.id }, { document_id: first.id }] }, 400, 'documents.1.document_id is a duplicate: each document is sent once'],
      [{ documents: [{ document_id: first.id }], document_id: first.id }, 400, 'documents cannot be combined with document_id'],
      [{ documents: [{}] }, 400, 'documents.0.document_id is required'],
      [
        { documents: [{ document_id: first.id }, { document_id: second.id }], signers: [{ ...signers[0], fields: [field] }] },
        400,
        'signers.0.fields.0.document_id is required when the request has several documents',
      ],
      [
        { documents: [{ document_id: first.id }], signers: [{ ...signers[0], fields: [{ ...field, document_id: second.id }] }] },
        400,
        'signers.0.fields.0.document_id must be one of the request’s documents',
      ],
      [
        {
          documents: [{ document_id: first.id }, { document_id: second.id }],
          signers: [{ ...signers[0], fields: [{ ...field, page: 2, document_id: second.id }] }],
        },
        400,
        'signers.0.fields.0.page must be at most 1: the document has 1 page(s)',
      ],
    ];
    for (const [body, status, detail] of cases) {
      const response = await account.request('POST', '/api/v1/signatures', { json: { title: 'T', signers, ...body } });
      expect(response.status, detail).to.equal(status);
      expect(response.body.error, detail).to.equal('validation_error');
      expect(response.body.details, JSON.stringify(response.body)).to.include(detail);
    }

    // Another account's document is not found; nothing was made.
    const stranger = await createTestAccount();
    const theirs = await uploadDocument(stranger.request, { fileName: 'theirs.pdf', pages: ['Theirs'] });
    const foreign = await account.request('POST', '/api/v1/signatures', {
      json: { title: 'T', signers, documents: [{ document_id: first.id }, { document_id: theirs.id }] },
    });
    expect(foreign.status).to.equal(404);
    expect(await account.db('signing_requests').where({ account_id: account.account.id })).to.have.length(0);
  });

  it('holds a request to REQUEST_MAX_DOCUMENTS documents and REQUEST_MAX_PAGES pages, naming the setting', async () => {
    const account = await createTestAccount();
    const one = await uploadDocument(account.request, { fileName: 'one.pdf', pages: ['One'] });
    // 21 distinct documents, so that the count is the problem rather than duplicates.
    const many = [{ document_id: one.id }];
    for (let i = 1; i < 21; i++) many.push({ document_id: (await uploadDocument(account.request, { fileName: `d${i}.pdf`, pages: [`Page ${i}`] })).id });
    const tooMany = await account.request('POST', '/api/v1/signatures', {
      json: { title: 'T', signers: [{ name: 'A', email: 'a@example.com' }], documents: many },
    });
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body.details).to.deep.equal(['documents must list at most 20 documents (REQUEST_MAX_DOCUMENTS)']);

    const big = [];
    for (let i = 0; i < 2; i++) big.push({ document_id: (await uploadDocument(account.request, { fileName: `big${i}.pdf`, pdf: makeManyPagePdf(1001) })).id });
    const tooLong = await account.request('POST', '/api/v1/signatures', {
      json: { title: 'T', signers: [{ name: 'A', email: 'a@example.com' }], documents: big },
    });
    expect(tooLong.status).to.equal(400);
    expect(tooLong.body.details).to.deep.equal(['documents must have at most 2000 pages in all (REQUEST_MAX_PAGES); these have 2002']);
  });

  it('an account deleted for good takes its requests of several documents with it', async () => {
    const account = await createTestAccount();
    const first = await uploadDocument(account.request, { fileName: 'a.pdf', pages: ['A'] });
    const second = await uploadDocument(account.request, { fileName: 'b.pdf', pages: ['B'] });
    const created = await account.request('POST', '/api/v1/signatures', {
      json: { documents: [{ document_id: first.id }, { document_id: second.id }], title: 'T', signers: [{ name: 'Ada', email: 'ada@example.com' }] },
    });
    expect(created.status).to.equal(201);
    await account.request('POST', `/api/v1/signatures/${created.body.id}/cancel`, { json: {} });
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${created.body.id}`)).body.status).to.equal('cancelled'));
    await account.db('accounts').where({ id: account.account.id }).del();
    expect(await account.db('signing_request_documents').where({ signing_request_id: created.body.id })).to.have.length(0);
    expect(await account.db('documents').whereIn('id', [first.id, second.id])).to.have.length(0);
  });

  it('gives two documents of the same name distinct names in the ZIP and the e-mails', () => {
    expect(signedFileNames([{ fileName: 'scan.pdf' }, { fileName: 'Scan.PDF' }, { fileName: 'scan' }])).to.deep.equal([
      'scan (signed).pdf',
      'Scan (signed) (2).pdf',
      'scan (signed) (3).pdf',
    ]);
  });
});

describe('signing requests with approvers, viewers and cc, in steps', () => {
  it('step 1: an approver and a signer at once; step 2: a viewer; cc gets the sealed documents only', async () => {
    const account = await createTestAccount();
    const contract = await uploadDocument(account.request, { fileName: 'contract.pdf', pages: ['Contract'] });
    const created = await account.request('POST', '/api/v1/signatures', {
      json: {
        document_id: contract.id,
        title: 'Approved contract',
        signers: [
          { name: 'Ann Approver', email: 'ann@example.com', recipientType: 'approver', routingOrder: 1 },
          { name: 'Sam Signer', email: 'sam@example.com', routingOrder: 1 },
          { name: 'Vic Viewer', email: 'vic@example.com', recipientType: 'viewer', routingOrder: 2 },
          { name: 'Cai Copy', email: 'cai@example.com', recipientType: 'cc' },
        ],
      },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const [ann, sam, vic, cai] = created.body.signers;
    expect(created.body.signers.map((each: { recipientType: string; routingOrder: number }) => [each.recipientType, each.routingOrder])).to.deep.equal([
      ['approver', 1],
      ['signer', 1],
      ['viewer', 2],
      ['cc', 1],
    ]);
    expect(created.body.progress.waitingFor).to.deep.equal([ann.id, sam.id]);
    const linkOfCc = await account.request('POST', `/api/v1/signatures/${created.body.id}/signers/${cai.id}/link`);
    expect(linkOfCc.status).to.equal(409);

    // Invitations ask each for its part; the viewer waits for step 1, the cc gets none. (By this request's
    // recipients: other tests write to the same addresses.)
    const invitations = await eventually(async () => {
      const rows = await account.db('mail_outbox').whereIn(
        'idempotency_key',
        [ann, sam, vic, cai].map((recipient) => invitationMailKey(recipient.id)),
      );
      expect(rows).to.have.length(2);
      return rows;
    });
    expect(invitations.map((row) => row.subject).sort()).to.deep.equal([
      `${account.account.email} asks you to approve: Approved contract`,
      `${account.account.email} asks you to sign: Approved contract`,
    ]);

    const annPage = signerOf(account, await signingLinkOf(account.request, created.body.id, ann.id));
    const samPage = signerOf(account, await signingLinkOf(account.request, created.body.id, sam.id));
    const vicPage = signerOf(account, await signingLinkOf(account.request, created.body.id, vic.id));
    const vicView = await vicPage.view();
    expect(vicView.body.signer.recipientType).to.equal('viewer');
    expect(vicView.body.yourTurn).to.equal(false);
    const client_ = client(account.system.url!);
    const tokenOfPage = async (id: string) => tokenOf(await signingLinkOf(account.request, created.body.id, id));
    const annToken = await tokenOfPage(ann.id);
    const vicToken = await tokenOfPage(vic.id);
    // Each recipient does its own part only.
    expect((await annPage.sign({ consent: true, signature: { type: 'typed', value: 'Ann' } })).status).to.equal(409);
    expect((await client_('POST', `/sign/${vicToken}/viewed`)).status).to.equal(409); // not its turn
    expect((await client_('POST', `/sign/${annToken}/approve`)).status).to.equal(200);
    expect((await client_('POST', `/sign/${annToken}/approve`)).status).to.equal(409);
    expect((await samPage.sign({ consent: true, signature: { type: 'typed', value: 'Sam Signer' } })).status).to.equal(200);
    await eventually(async () =>
      expect((await account.request('GET', `/api/v1/signatures/${created.body.id}`)).body.progress.waitingFor).to.deep.equal([vic.id]),
    );
    expect((await vicPage.view()).body.yourTurn).to.equal(true);
    expect((await client_('POST', `/sign/${vicToken}/viewed`)).status).to.equal(200);

    const completed = await eventually(async () => {
      const got = await account.request('GET', `/api/v1/signatures/${created.body.id}`);
      expect(got.body.status).to.equal('completed');
      return got.body;
    }, 60_000);
    expect(completed.signers.map((each: { status: string }) => each.status)).to.deep.equal(['approved', 'signed', 'viewed', 'pending']);
    expect(completed.signers[0].approvedAt).to.be.a('string');

    const sealed = await account.request('GET', `/api/v1/signatures/${created.body.id}/document`);
    const { out, text } = pdfsigOf(sealed.bytes);
    expect(out).to.include('Signature is Valid');
    expect(text).to.include('Recipients').and.include('approver').and.include('Approved at').and.include('viewer').and.include('cc');

    const events = await account.db('events').where({ account_id: account.account.id }).orderBy('id');
    expect(events.filter((row) => row.type === 'signer.approved').map((row) => row.data.signerId)).to.deep.equal([ann.id]);
    expect(events.filter((row) => row.type === 'signer.viewed').map((row) => row.data.signerId)).to.include(vic.id);
    expect(events.find((row) => row.type === 'document.signed')!.data.signatureCount).to.equal(1);
    const trail = await account.request('GET', `/api/v1/signatures/${created.body.id}/audit-trail`);
    const steps = trail.body.data.map((step: { action: string; signerId: string | null }) => `${step.action}:${step.signerId ?? ''}`);
    expect(steps).to.include(`approved:${ann.id}`).and.include(`viewed:${vic.id}`).and.include(`signed:${sam.id}`);

    // The cc hears of completion with the sealed PDF, like everyone else.
    const closing = await eventually(async () => {
      const rows = await account.db('mail_outbox').where('idempotency_key', 'like', `completed:${created.body.id}:%`);
      expect(rows).to.have.length(5);
      return rows;
    });
    expect(closing.map((row) => row.to_address)).to.include('"Cai Copy" <cai@example.com>');
  });

  it('refuses recipient shapes that cannot work, each with its reason', async () => {
    const account = await createTestAccount();
    const document = await uploadDocument(account.request, { fileName: 'a.pdf', pages: ['A'] });
    const field = { page: 1, x: 10, y: 10, width: 100, height: 30, type: 'signature' };
    const cases: [unknown[], Record<string, unknown>, string][] = [
      [
        [{ name: 'A', email: 'a@example.com', recipientType: 'approver', fields: [field] }],
        {},
        'signers.0.fields cannot be given to an approver: only a signer has fields',
      ],
      [[{ name: 'A', email: 'a@example.com', recipientType: 'cc' }], {}, 'signers must have at least one recipient who is not cc'],
      [
        [
          { name: 'A', email: 'a@example.com', routingOrder: 1 },
          { name: 'B', email: 'b@example.com' },
        ],
        {},
        'signers.1.routingOrder is required once another recipient has one',
      ],
      [
        [{ name: 'A', email: 'a@example.com', routingOrder: 1 }],
        { signingOrder: 'sequential' },
        'signingOrder cannot be sequential with routingOrder: the routing orders are the steps',
      ],
      [[{ name: 'A', email: 'a@example.com', recipientType: 'witness' }], {}, 'signers.0.recipientType must be one of: signer, approver, viewer, cc'],
    ];
    for (const [signers, extra, detail] of cases) {
      const response = await account.request('POST', '/api/v1/signatures', { json: { document_id: document.id, title: 'T', signers, ...extra } });
      expect(response.status, detail).to.equal(400);
      expect(response.body.details, JSON.stringify(response.body)).to.include(detail);
    }
  });
});
