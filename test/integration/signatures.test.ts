import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { searchAttributes, stateQuery } from '../../workflows/definitions';
import { client, type Request } from '../support/http';
import { completedRequest, createSigningRequest, drawnSignature, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';
import { uploadDocument } from '../support/documents';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const signer = (account: Account, url: string) => {
  const request = client(account.system.url!);
  const token = tokenOf(url);
  return {
    view: () => request('GET', `/sign/${token}/request`),
    document: () => request('GET', `/sign/${token}/document`),
    sign: (body: unknown = { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } }) =>
      request('POST', `/sign/${token}/sign`, { json: body, headers: { 'User-Agent': 'signet-test-browser/1.0' } }),
    decline: (reason = 'Wrong amount') => request('POST', `/sign/${token}/decline`, { json: { reason } }),
  };
};

const eventsOf = (account: Account) => account.db('events').where({ account_id: account.account.id }).orderBy('id');

/** The text of a PDF as poppler's pdftotext reads it: what a signer's viewer shows and copies. */
function textOf(pdf: Uint8Array) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-text-'));
  try {
    fs.writeFileSync(path.join(dir, 'file.pdf'), pdf);
    return execFileSync('pdftotext', [path.join(dir, 'file.pdf'), '-']).toString();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('POST /api/v1/signatures', () => {
  it('400 with one details string per violated rule', async () => {
    const account = await createTestAccount();
    const response = await account.request('POST', '/api/v1/signatures', { json: { signers: [] } });
    expect(response.status).to.equal(400);
    expect(response.body.error).to.equal('validation_error');
    expect(response.body.details).to.include.members(['document_id is required', 'title is required', 'signers must have at least 1 item(s)']);
  });

  it('400 for a bad e-mail, duplicate e-mails, too many signers, a past expiry, a long title', async () => {
    const { request } = await createTestAccount();
    const many = Array.from({ length: 51 }, (_, i) => ({ name: `S${i}`, email: `s${i}@example.com` }));
    const cases: [Record<string, unknown>, string][] = [
      [{ signers: [{ name: 'A', email: 'not-an-email' }] }, 'signers.0.email must be a valid e-mail address'],
      [
        {
          signers: [
            { name: 'A', email: 'a@example.com' },
            { name: 'B', email: 'A@example.com' },
          ],
        },
        'signers.1.email is a duplicate: each signer needs their own e-mail address',
      ],
      [{ signers: many }, 'signers must have at most 50 items'],
      [{ signers: [{ name: '', email: 'a@example.com' }] }, 'signers.0.name is required'],
      [{ expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt must be in the future'],
      [{ title: 'x'.repeat(201) }, 'title must be at most 200 characters'],
    ];
    for (const [body, detail] of cases) {
      const response = await request('POST', '/api/v1/signatures', {
        json: { document_id: 'doc_x', title: 'T', signers: [{ name: 'A', email: 'a@example.com' }], ...body },
      });
      expect(response.status, detail).to.equal(400);
      expect(response.body.details, detail).to.include(detail);
    }
  });

  it('400 for a field key it does not know, rather than dropping it', async () => {
    const { request } = await createTestAccount();
    const field = { page: 1, x: 50, y: 600, width: 200, height: 40, type: 'text', label: 'company', requried: false };
    const response = await request('POST', '/api/v1/signatures', {
      json: {
        document_id: 'doc_x',
        title: 'T',
        signers: [{ name: 'A', email: 'a@example.com', fields: [field, { ...field, requried: undefined, label: ' ' }] }],
      },
    });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal(['signers.0.fields.0 has unknown field(s): requried', 'signers.0.fields.1.label is required']);
  });

  it('404 for another account’s document, 409 for a document without its PDF', async () => {
    const owner = await createTestAccount();
    const stranger = await createTestAccount();
    const { document } = await createSigningRequest(owner.request);
    const signers = [{ name: 'A', email: 'a@example.com' }];
    const foreign = await stranger.request('POST', '/api/v1/signatures', { json: { document_id: document.id, title: 'T', signers } });
    expect(foreign.status).to.equal(404);
    const empty = await owner.request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: 10 } });
    const waiting = await owner.request('POST', '/api/v1/signatures', { json: { documentId: empty.body.id, title: 'T', signers } });
    expect(waiting.status).to.equal(409);
  });

  it('201 with the request and its signers; the workflow invites them by e-mail', async () => {
    const account = await createTestAccount();
    const { signingRequest, document } = await createSigningRequest(account.request);
    expect(signingRequest.id).to.match(/^sr_/);
    expect(signingRequest).to.include({ documentId: document.id, title: 'Services agreement', status: 'pending', signingOrder: 'parallel' });
    expect(signingRequest.signers.map((s: { id: string }) => s.id)).to.satisfy((ids: string[]) => ids.every((id) => /^sgr_/.test(id)));
    const workflow = await account.system.client.workflow.getHandle(signingRequest.id).describe();
    expect(workflow.workflowId).to.equal(signingRequest.id);
    // Findable in the Temporal UI by account, document and status.
    expect(workflow.typedSearchAttributes.get(searchAttributes.accountId)).to.equal(account.account.id);
    expect(workflow.typedSearchAttributes.get(searchAttributes.documentId)).to.equal(document.id);
    expect(workflow.typedSearchAttributes.get(searchAttributes.status)).to.equal('pending');
    expect((await account.system.client.workflow.getHandle(signingRequest.id).query(stateQuery)).status).to.equal('pending');
    const keys = signingRequest.signers.map((s: { id: string }) => `invitation:${s.id}:0`);
    const mails = await eventually(async () => {
      const rows = await account.db('mail_outbox').whereIn('idempotency_key', keys);
      expect(rows).to.have.length(2);
      return rows;
    });
    expect(mails.map((mail) => mail.to_address).sort()).to.deep.equal(['"Ada Lovelace" <ada@example.com>', '"Alan Turing" <alan@example.com>']);
    expect(mails[0].subject).to.contain('Services agreement');
    expect(mails[0].text).to.match(/\/sign\/[A-Za-z0-9_-]{43}/);
    expect(mails[0].text).to.contain('Please sign by Friday.');
    const got = await eventually(async () => {
      const response = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(response.body.signers.map((s: { status: string }) => s.status)).to.deep.equal(['notified', 'notified']);
      return response;
    });
    expect(got.body.originalSha256).to.equal(document.sha256);
  });
});

describe('signing a request end to end (parallel)', function () {
  this.timeout(90_000);

  it('both sign; the sealed PDF verifies with pdfsig; each event is written exactly once', async () => {
    const account = await createTestAccount();
    const { signingRequest, document } = await createSigningRequest(account.request);
    const [first, second] = signingRequest.signers;
    const ada = signer(account, await signingLinkOf(account.request, signingRequest.id, first.id));
    const alan = signer(account, await signingLinkOf(account.request, signingRequest.id, second.id));

    const view = await ada.view();
    expect(view.status).to.equal(200);
    expect(view.body).to.deep.include({ yourTurn: true });
    expect(view.body.request).to.include({ title: 'Services agreement', message: 'Please sign by Friday.' });
    expect(view.body.signer).to.include({ email: 'ada@example.com' });
    const pdf = await ada.document();
    expect(pdf.headers.get('content-type')).to.equal('application/pdf');

    expect((await ada.sign()).body).to.deep.equal({ signerId: first.id, status: 'signed' });
    const again = await ada.sign();
    expect(again.status).to.equal(409);
    expect(again.body.error).to.equal('conflict');
    expect((await alan.sign({ consent: true, signature: { type: 'drawn', value: drawnSignature } })).status).to.equal(200);

    const completed = await completedRequest(account.request, signingRequest.id);
    expect(completed.sealedSha256).to.match(/^[0-9a-f]{64}$/);
    expect(completed.originalSha256).to.equal(document.sha256);

    const sealed = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`);
    expect(sealed.status).to.equal(200);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-sealed-'));
    fs.writeFileSync(path.join(dir, 'sealed.pdf'), sealed.bytes);
    const report = execFileSync('pdfsig', [path.join(dir, 'sealed.pdf')]).toString();
    expect(report).to.contain('Signature is Valid');
    expect(report).to.contain('Total document signed');
    fs.rmSync(dir, { recursive: true, force: true });

    const events = await eventually(async () => {
      const rows = await eventsOf(account);
      expect(rows.map((row) => row.type)).to.include('signing_request.completed');
      return rows;
    });
    const count = (type: string) => events.filter((row) => row.type === type).length;
    expect(count('signing_request.created')).to.equal(1);
    expect(count('signer.signed')).to.equal(2);
    expect(count('document.signed')).to.equal(1);
    expect(count('signing_request.completed')).to.equal(1);
    const signed = events.find((row) => row.type === 'document.signed')!;
    expect(Object.keys(signed.data).sort()).to.deep.equal(['documentId', 'fileName', 'signatureCount', 'signedAt', 'signingRequestId']);
    expect(signed.data).to.include({ documentId: document.id, fileName: 'agreement.pdf', signatureCount: 2, signingRequestId: signingRequest.id });
    expect(signed.data.signedAt).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const trail = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`);
    const actions = trail.body.data.map((step: { action: string }) => step.action);
    expect(actions).to.include.members(['created', 'invitation_sent', 'signed', 'completed']);
    const adaSigned = trail.body.data.find(
      (step: { action: string; signerEmail: string }) => step.action === 'signed' && step.signerEmail === 'ada@example.com',
    );
    expect(adaSigned).to.include({ userAgent: 'signet-test-browser/1.0' });
    expect(adaSigned.ipAddress).to.be.a('string');

    await eventually(async () => {
      const mails = await account.db('mail_outbox').where('idempotency_key', 'like', `completed:${signingRequest.id}:%`);
      expect(mails).to.have.length(3); // both signers and the owner
      expect(mails[0].attachments[0].contentType).to.equal('application/pdf');
    });
  });

  it('stamps signatures and text values into the signer’s fields', async () => {
    const account = await createTestAccount();
    const fields = [
      { page: 1, x: 50, y: 600, width: 200, height: 40, type: 'signature' },
      { page: 1, x: 50, y: 540, width: 300, height: 20, type: 'text' },
    ];
    const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Grace Hopper', email: 'grace@example.com', fields }] });
    expect(signingRequest.signers[0].fields).to.deep.equal(fields.map((field) => ({ ...field, required: true, documentId: signingRequest.documentId })));
    const grace = signer(account, await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
    const bad = await grace.sign({ consent: true, signature: { type: 'typed', value: 'Grace Hopper' }, fieldValues: { company: 'x' } });
    expect(bad.status).to.equal(400);
    expect(bad.body.details[0]).to.match(/fieldValues/);
    expect(
      (await grace.sign({ consent: true, signature: { type: 'typed', value: 'Grace Hopper' }, fieldValues: { '1': 'Navy Computing Lab' } })).status,
    ).to.equal(200);
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);
    const sealed = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-fields-'));
    fs.writeFileSync(path.join(dir, 'sealed.pdf'), sealed.bytes);
    const firstPage = execFileSync('pdftotext', ['-f', '1', '-l', '1', path.join(dir, 'sealed.pdf'), '-']).toString();
    fs.rmSync(dir, { recursive: true, force: true });
    expect(firstPage).to.contain('Navy Computing Lab');
    expect(firstPage).to.contain('Grace Hopper');
  });

  it('two concurrent sign calls for one signer: one succeeds, one is 409', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const ada = signer(account, await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
    const results = await Promise.all([ada.sign(), ada.sign()]);
    expect(results.map((r) => r.status).sort()).to.deep.equal([200, 409]);
    const rows = await eventually(async () => {
      const events = (await eventsOf(account)).filter((row) => row.type === 'signer.signed');
      expect(events).to.have.length(1);
      return events;
    });
    expect(rows[0].data.signerId).to.equal(signingRequest.signers[0].id);
  });
});

describe('sequential order, declines, cancellation', function () {
  this.timeout(60_000);

  it('sequential: the second signer is not invited and cannot sign before the first', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, { signingOrder: 'sequential' });
    const [first, second] = signingRequest.signers;
    const alan = signer(account, await signingLinkOf(account.request, signingRequest.id, second.id));
    expect((await alan.view()).body.yourTurn).to.equal(false);
    const early = await alan.sign();
    expect(early.status).to.equal(409);
    expect(early.body.message).to.match(/turn/);
    const ada = signer(account, await signingLinkOf(account.request, signingRequest.id, first.id));
    expect((await ada.sign()).status).to.equal(200);
    await eventually(async () => expect((await alan.view()).body.yourTurn).to.equal(true));
    await eventually(async () => {
      const invited = await account.db('mail_outbox').where({ idempotency_key: `invitation:${second.id}:0` });
      expect(invited).to.have.length(1);
    });
  });

  it('a decline ends the request as declined and refuses later signatures', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const [first, second] = signingRequest.signers;
    const alan = signer(account, await signingLinkOf(account.request, signingRequest.id, second.id));
    const ada = signer(account, await signingLinkOf(account.request, signingRequest.id, first.id));
    expect((await alan.decline('The fee is wrong')).body).to.deep.equal({ signerId: second.id, status: 'declined' });
    const late = await ada.sign();
    expect(late.status).to.equal(409);
    const got = await eventually(async () => {
      const response = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(response.body.status).to.equal('declined');
      return response.body;
    });
    expect(got.signers[1]).to.include({ status: 'declined', declineReason: 'The fee is wrong' });
    const declined = (await eventsOf(account)).filter((row) => row.type === 'signer.declined');
    expect(declined).to.have.length(1);
    expect(declined[0].data).to.include({ signerId: second.id, reason: 'The fee is wrong' });
    // The request's own event too, once.
    const requestDeclined = (await eventsOf(account)).filter((row) => row.type === 'signing_request.declined');
    expect(requestDeclined).to.have.length(1);
    expect(requestDeclined[0].data).to.include({ signingRequestId: signingRequest.id, signerId: second.id, reason: 'The fee is wrong' });
  });

  it('cancel ends the request; a second cancel and any signature are 409', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const ada = signer(account, await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
    const cancelled = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: { reason: 'Sent by mistake' } });
    expect(cancelled.status).to.equal(200);
    expect(cancelled.body.status).to.equal('cancelled');
    expect((await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: {} })).status).to.equal(409);
    expect((await ada.sign()).status).to.equal(409);
    expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`)).status).to.equal(409);
  });

  it('a document out for signature cannot be deleted until its request ends', async () => {
    const account = await createTestAccount();
    const { signingRequest, document } = await createSigningRequest(account.request);
    const refused = await account.request('DELETE', `/api/v1/documents/${document.id}`);
    expect(refused.status).to.equal(409);
    expect(refused.body.message).to.contain(signingRequest.id);
    await account.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: {} });
    expect((await account.request('DELETE', `/api/v1/documents/${document.id}`)).status).to.equal(204);
  });

  it('remind names the signers whose turn it is as reminded, once the hour since their invitation has passed', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const signers = account.db('signers').where({ signing_request_id: signingRequest.id });
    await eventually(async () => expect(await signers.clone().whereNotNull('last_mailed_at')).to.have.length(2));
    expect((await account.request('POST', `/api/v1/signatures/${signingRequest.id}/remind`)).status, 'within the hour of the invitations').to.equal(429);
    await signers.clone().update({ last_mailed_at: account.db.raw("now() - interval '61 minutes'") });
    const reminded = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/remind`);
    expect(reminded.status).to.equal(200);
    expect(reminded.body.remindedSignerIds).to.have.members(signingRequest.signers.map((s: { id: string }) => s.id));
  });
});

describe('the signer endpoints refuse bad input', () => {
  it('400 without consent, with an empty or non-PNG signature; 404 for an unknown token', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request);
    const ada = signer(account, await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
    const cases: [unknown, string][] = [
      [{ signature: { type: 'typed', value: 'Ada' } }, 'consent must be true: the signer agrees to sign electronically'],
      [{ consent: true, signature: { type: 'typed', value: '  ' } }, 'signature.value must not be empty'],
      [
        { consent: true, signature: { type: 'drawn', value: 'data:image/jpeg;base64,AAAA' } },
        'signature.value must be a PNG data URL (data:image/png;base64,…)',
      ],
      [{ consent: true, signature: { type: 'drawn', value: `data:image/png;base64,${'A'.repeat(1_500_000)}` } }, 'signature.value must be at most 1 MB'],
    ];
    for (const [body, detail] of cases) {
      const response = await ada.sign(body);
      expect(response.status, detail).to.equal(400);
      expect(response.body.details).to.include(detail);
    }
    expect((await ada.decline('')).status).to.equal(400);
    const unknown = await client(account.system.url!)('GET', `/sign/${'x'.repeat(43)}/request`);
    expect(unknown.status).to.equal(404);
  });

  it('another account’s signing request is 404', async () => {
    const owner = await createTestAccount();
    const stranger = await createTestAccount();
    const { signingRequest } = await createSigningRequest(owner.request);
    for (const path of ['', '/audit-trail', '/document']) {
      expect((await stranger.request('GET', `/api/v1/signatures/${signingRequest.id}${path}`)).status).to.equal(404);
    }
    expect((await stranger.request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: {} })).status).to.equal(404);
    expect((await stranger.request('GET', '/api/v1/signatures')).body.data).to.deep.equal([]);
  });
});

describe('POST /signatures rate limit', function () {
  this.timeout(60_000);

  it('counts every request of the hour on free (10) with X-RateLimit-* headers, and answers the 11th with 429', async () => {
    const { request } = await createTestAccount('free');
    for (let i = 1; i <= 10; i++) {
      const refused = await request('POST', '/api/v1/signatures', { json: {} });
      expect(refused.status).to.equal(400);
      expect(refused.headers.get('x-ratelimit-limit')).to.equal('10');
      expect(refused.headers.get('x-ratelimit-remaining')).to.equal(String(10 - i));
    }
    const limited = await request('POST', '/api/v1/signatures', { json: {} });
    expect(limited.status).to.equal(429);
    expect(limited.body.error).to.equal('rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 3600);
  });
});

describe('a request’s fields: label, required and checkbox, as a template’s', function () {
  this.timeout(90_000);

  const fields = [
    { page: 1, x: 50, y: 600, width: 200, height: 40, type: 'signature' },
    { page: 1, x: 50, y: 540, width: 300, height: 20, type: 'text', label: 'company' },
    { page: 1, x: 50, y: 500, width: 20, height: 20, type: 'checkbox', label: 'terms' },
    { page: 1, x: 100, y: 500, width: 20, height: 20, type: 'checkbox', label: 'newsletter', required: false },
    { page: 1, x: 50, y: 460, width: 300, height: 20, type: 'text', label: 'note', required: false },
  ];

  it('stores them and shows them to the signer; a sign without a required field is 400; ticked and unticked boxes are sealed as given', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Grace Hopper', email: 'grace@example.com', fields }] });
    const stored = fields.map((field) => ({ required: true, ...field, documentId: signingRequest.documentId }));
    expect(signingRequest.signers[0].fields).to.deep.equal(stored);
    expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.signers[0].fields).to.deep.equal(stored);
    const grace = signer(account, await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
    expect((await grace.view()).body.signer.fields).to.deep.equal(stored);

    const signature = { type: 'typed', value: 'Grace Hopper' };
    const missing = await grace.sign({ consent: true, signature, fieldValues: { '2': false, '3': true } });
    expect(missing.status).to.equal(400);
    expect(missing.body.details).to.deep.equal([
      'fieldValues.1 is required (the text field \"company\" on page 1)',
      'fieldValues.2 must be ticked: it is required (the checkbox field \"terms\" on page 1)',
    ]);
    const signed = await grace.sign({ consent: true, signature, fieldValues: { '1': 'Navy Computing Lab', '2': true, '3': false } });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);
    const sealed = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`);
    const words = textOf(sealed.bytes).split(/\s+/);
    expect(words).to.include('Navy').and.include('X');
    expect(
      words.filter((word) => word === 'X'),
      'one X: the ticked box',
    ).to.have.length(1);
  });
});

/**
 * A contract with text tags printed by pdf-lib: the client's signature and company, and a witness's
 * signature named by number (the second signer).
 */
async function makeTaggedPdf() {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([595, 842]);
  page.drawText('Consulting contract', { x: 60, y: 760, size: 20, font });
  page.drawText('Company: {{text:client:company}}', { x: 60, y: 600, size: 12, font });
  page.drawText('Client {{signature:client}}', { x: 60, y: 400, size: 16, font });
  page.drawText('Witness {{signature:2}}', { x: 320, y: 400, size: 16, font });
  return Buffer.from(await pdf.save());
}

describe('POST /api/v1/signatures on a PDF with text tags', function () {
  this.timeout(90_000);

  const signers = [
    { name: 'Carla Client', email: 'carla@example.com', role: 'client' },
    { name: 'Walt Witness', email: 'walt@example.com' },
  ];
  const withoutRoles = [{ name: 'Carla Client', email: 'carla@example.com' }, signers[1]];
  const send = (request: Request, body: Record<string, unknown>) =>
    request('POST', '/api/v1/signatures', { json: { title: 'Consulting contract', signers, ...body } });

  it('400 without textTags, saying how to send it; nothing is made', async () => {
    const { request, db, account } = await createTestAccount();
    const tagged = await uploadDocument(request, { pdf: await makeTaggedPdf() });
    const plain = await uploadDocument(request, { pages: ['No tags here'] });
    const response = await send(request, { documents: [{ document_id: plain.id }, { document_id: tagged.id }], signers: withoutRoles });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.have.length(1);
    expect(response.body.details[0]).to.match(
      /^documents\.1\.document_id names a PDF with text tags that its signers would see \(\{\{text:client:company\}\} on page 1, \{\{signature:client\}\} on page 1, \{\{signature:2\}\} on page 1\): send it with textTags: "fields"/,
    );
    expect(response.body.details[0]).to.contain('textTags: "remove"').and.contain('detectFields: true');
    expect(await db('signing_requests').where({ account_id: account.id })).to.have.length(0);
  });

  it('reads a document’s tags once, and keeps them with it: its file never changes', async () => {
    const { request, db } = await createTestAccount();
    const tagged = await uploadDocument(request, { pdf: await makeTaggedPdf() });
    const plain = await uploadDocument(request, { pages: ['No tags here'] });
    expect((await send(request, { document_id: tagged.id, signers: withoutRoles })).status).to.equal(400);
    const kept = async (id: string) => (await db('documents').where({ id }).first('text_tags')).text_tags;
    expect((await kept(tagged.id)).map((field: { tag: string }) => field.tag)).to.deep.equal([
      '{{text:client:company}}',
      '{{signature:client}}',
      '{{signature:2}}',
    ]);
    expect(await kept(plain.id)).to.equal(null);
    expect((await send(request, { document_id: plain.id, signers: withoutRoles })).status).to.equal(201);
    expect(await kept(plain.id)).to.deep.equal([]);
    // What is kept is what the next request goes by (the PDF is not read again).
    await db('documents')
      .where({ id: tagged.id })
      .update({ text_tags: JSON.stringify([]) });
    expect((await send(request, { document_id: tagged.id, signers: withoutRoles })).status).to.equal(201);
    // Unless a reader that knew other tag types kept it (one before image tags, say): then the PDF is read again.
    await db('documents')
      .where({ id: tagged.id })
      .update({ text_tags: JSON.stringify([]), text_tag_types: 'signature,initials,date,text,checkbox' });
    expect((await send(request, { document_id: tagged.id, signers: withoutRoles })).status).to.equal(400);
    expect(await kept(tagged.id)).to.have.length(3);
  });

  it('400 for tags that name no signer, a signer’s role no tag names, and roles without textTags: "fields"', async () => {
    const { request } = await createTestAccount();
    const tagged = await uploadDocument(request, { pdf: await makeTaggedPdf() });
    const unnamed = await send(request, {
      document_id: tagged.id,
      textTags: 'fields',
      signers: [
        { name: 'A', email: 'a@example.com', role: 'customer' },
        { name: 'B', email: 'b@example.com', recipientType: 'approver' },
      ],
    });
    expect(unnamed.status).to.equal(400);
    expect(unnamed.body.details).to.deep.equal([
      'document_id has text tags of the role "client" ({{text:client:company}} on page 1, {{signature:client}} on page 1), which is no signer\'s: give their signer role: "client", or name the signer by number in the tags ({{signature:1}} is the first signer)',
      'document_id has text tags of the role "2" ({{signature:2}} on page 1), which names signers.1, an approver: only a signer has fields',
      'signers.0.role must be the role of text tags in the documents: no tag names "customer"',
    ]);
    const removing = await send(request, { document_id: tagged.id, textTags: 'remove' });
    expect(removing.body.details).to.deep.equal(['signers.0.role needs template_id, or textTags: "fields"']);
  });

  it('textTags: "fields": the signers get the tags’ fields on a copy without the tags, which no signer sees; signed and sealed without them', async () => {
    const account = await createTestAccount();
    const { request, db } = account;
    const original = await uploadDocument(request, { fileName: 'contract.pdf', pdf: await makeTaggedPdf() });
    const own = { page: 1, x: 60, y: 300, width: 20, height: 20, type: 'checkbox', label: 'terms', document_id: original.id };
    const created = await send(request, {
      document_id: original.id,
      textTags: 'fields',
      signers: [{ ...signers[0], fields: [own] }, signers[1]],
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const signingRequest = created.body;

    // A new document without the tags, named as the original, which is kept as it was.
    expect(signingRequest.documentId).to.not.equal(original.id);
    const copy = await request('GET', `/api/v1/documents/${signingRequest.documentId}`);
    expect(copy.body).to.include({ fileName: 'contract.pdf', status: 'ready', pageCount: 1 });
    expect(copy.body.sha256).to.not.equal(original.sha256);
    expect(textOf((await request('GET', `/api/v1/documents/${original.id}/file`)).bytes)).to.contain('{{signature:client}}');
    const events = await db('events').where({ account_id: account.account.id, type: 'document.created' });
    expect(events.map((event) => event.data.documentId)).to.include(signingRequest.documentId);

    const [clientSigner, witness] = signingRequest.signers;
    const summary = (fields: { type: string; label?: string | null; required?: boolean; documentId: string }[]) =>
      fields.map((field) => `${field.type} ${field.label ?? null} ${field.required} ${field.documentId === signingRequest.documentId}`);
    expect(summary(clientSigner.fields)).to.deep.equal(['checkbox terms true true', 'text company true true', 'signature null true true']);
    expect(summary(witness.fields)).to.deep.equal(['signature null true true']);
    const company = clientSigner.fields[1];
    expect(company.x).to.be.within(110, 125);
    expect(company.y).to.be.within(595, 600);

    // Each signer's page serves the copy: the words around the tags, no tag.
    const carla = signer(account, await signingLinkOf(request, signingRequest.id, clientSigner.id));
    const walt = signer(account, await signingLinkOf(request, signingRequest.id, witness.id));
    for (const each of [carla, walt]) {
      const text = textOf((await each.document()).bytes);
      expect(text).to.contain('Consulting contract').and.contain('Company:').and.contain('Witness');
      expect(text).to.not.contain('{{').and.not.contain('signature:');
    }
    expect((await carla.view()).body.signer.fields[1]).to.include({ type: 'text', label: 'company', required: true });
    const signature = { type: 'typed', value: 'Carla Client' };
    expect((await carla.sign({ consent: true, signature, fieldValues: { '0': true } })).body.details).to.deep.equal([
      'fieldValues.1 is required (the text field \"company\" on page 1)',
    ]);
    expect((await carla.sign({ consent: true, signature, fieldValues: { '0': true, '1': 'Acme Ltd' } })).status).to.equal(200);
    expect((await walt.sign({ consent: true, signature: { type: 'typed', value: 'Walt Witness' } })).status).to.equal(200);
    await eventually(async () => expect((await request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);
    const sealed = textOf((await request('GET', `/api/v1/signatures/${signingRequest.id}/document`)).bytes);
    expect(sealed).to.contain('Acme Ltd').and.contain('Carla Client').and.contain('Walt Witness');
    expect(sealed).to.not.contain('{{');
  });

  it('textTags: "remove": a copy without the tags and no field from them; a PDF without tags is sent as it is', async () => {
    const account = await createTestAccount();
    const { request } = account;
    const tagged = await uploadDocument(request, { pdf: await makeTaggedPdf() });
    const plain = await uploadDocument(request, { pages: ['No tags here'] });
    const created = await send(request, {
      documents: [{ document_id: plain.id }, { document_id: tagged.id }],
      textTags: 'remove',
      signers: withoutRoles,
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const [first, second] = created.body.documents;
    expect(first.documentId).to.equal(plain.id);
    expect(second.documentId).to.not.equal(tagged.id);
    expect(created.body.signers.map((each: { fields: unknown }) => each.fields)).to.deep.equal([null, null]);
    const token = tokenOf(await signingLinkOf(request, created.body.id, created.body.signers[0].id));
    const copy = await client(account.system.url!)('GET', `/sign/${token}/documents/${second.documentId}`);
    expect(copy.status).to.equal(200);
    expect(textOf(copy.bytes)).to.contain('Witness').and.not.contain('{{');
  });

  /** A one-page PDF printing each line, top to bottom, in Helvetica: the tags of one signer's form. */
  async function makeFormPdf(lines: string[], size = 12) {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, index) => page.drawText(line, { x: 60, y: 700 - index * 40, size, font }));
    return Buffer.from(await pdf.save());
  }
  const formSigner = { name: 'Carla Client', email: 'carla@example.com' };

  it('textTags: "fields" with options and a formula: the signer chooses and fills, the server computes, GET shows the values', async () => {
    const account = await createTestAccount();
    const { request } = account;
    const pdf = await makeFormPdf([
      'Plan: {{radio:1:Plan:Basic|Pro}}',
      'Rent: {{number:1:Rent}}',
      'Months: {{number:1:Months}}',
      'Total: {{calculated:1:Total:[Rent] * [Months]}}',
      'Signed: {{signature:1}}',
    ]);
    const document = await uploadDocument(request, { pdf });
    const created = await send(request, { document_id: document.id, textTags: 'fields', signers: [formSigner] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const [carlaSigner] = created.body.signers;
    const carla = signer(account, await signingLinkOf(request, created.body.id, carlaSigner.id));
    const shown = (await carla.view()).body.signer.fields;
    expect(shown.map((field: { type: string; label: string | null }) => `${field.type} ${field.label}`)).to.deep.equal([
      'radio Plan',
      'number Rent',
      'number Months',
      'calculated Total',
      'signature null',
    ]);
    expect(shown[0].options).to.deep.equal(['Basic', 'Pro']);
    expect(shown[0]).to.not.have.property('optionBoxes');
    expect(shown[3].formula).to.equal('{Rent} * {Months}');

    const signature = { type: 'typed', value: 'Carla Client' };
    const wrong = await carla.sign({ consent: true, signature, fieldValues: { '0': 'Gold', '1': 1200, '2': 12 } });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.details).to.deep.equal(['fieldValues.0 must be one of: Basic, Pro (the radio field "Plan" on page 1)']);
    const signed = await carla.sign({ consent: true, signature, fieldValues: { '0': 'Pro', '1': 1200, '2': 12 } });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    await eventually(async () => expect((await request('GET', `/api/v1/signatures/${created.body.id}`)).body.status).to.equal('completed'), 60_000);
    const fields = (await request('GET', `/api/v1/signatures/${created.body.id}`)).body.signers[0].fields;
    expect(fields.map((field: { filled?: unknown }) => field.filled)).to.deep.equal([
      { value: 'Pro', hidden: false },
      { value: 1200, hidden: false },
      { value: 12, hidden: false },
      { value: 14400, hidden: false },
      undefined,
    ]);
    const sealed = textOf((await request('GET', `/api/v1/signatures/${created.body.id}/document`)).bytes);
    expect(sealed).to.contain('Pro').and.contain('14400').and.not.contain('{{');
  });

  it('textTags: "fields": a field placed by hand may show by a tag’s field, and is still checked with the tags’ fields', async () => {
    const account = await createTestAccount();
    const pdf = await makeFormPdf(['Plan: {{radio:1:Plan:Basic|Pro}}', 'Signed: {{signature:1}}']);
    const document = await uploadDocument(account.request, { pdf });
    const own = { page: 1, x: 60, y: 100, width: 200, height: 20, type: 'text', label: 'Why Pro', showWhen: { field: 'Plan', is: 'equals', values: ['Pro'] } };
    const created = await send(account.request, { document_id: document.id, textTags: 'fields', signers: [{ ...formSigner, fields: [own] }] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const carla = signer(account, await signingLinkOf(account.request, created.body.id, created.body.signers[0].id));
    const signature = { type: 'typed', value: 'Carla Client' };
    const needed = await carla.sign({ consent: true, signature, fieldValues: { '1': 'Pro' } });
    expect(needed.body.details).to.deep.equal(['fieldValues.0 is required (the text field "Why Pro" on page 1)']);

    // Its own mistakes are named as before, with the tags' or without them.
    const wrong = { ...own, showWhen: { field: 'Plann', is: 'filled' } };
    for (const textTags of ['fields', undefined]) {
      const response = await send(account.request, {
        document_id: document.id,
        ...(textTags ? { textTags } : { textTags: 'remove' }),
        signers: [{ ...formSigner, fields: [wrong] }],
      });
      expect(response.status).to.equal(400);
      expect(response.body.details.join('\n')).to.contain('"Why Pro" names "Plann", which is no field of this form');
    }
  });

  it('400 naming the tag of each bad option list or formula, and of a formula naming no field; nothing is made', async () => {
    const { request, db, account } = await createTestAccount();
    const pdf = await makeFormPdf([
      'Plan: {{radio:1:Plan:Basic|Basic}}',
      'Rent: {{number:1:Rent}}',
      'Total: {{calculated:1:Total:[Rent] ** 2}}',
      'Sum: {{calculated:1:Sum:[Rent] + [Deposit]}}',
      'Signed: {{signature:1}}',
    ]);
    const document = await uploadDocument(request, { pdf });
    const response = await send(request, { document_id: document.id, textTags: 'fields', signers: [formSigner] });
    expect(response.status, JSON.stringify(response.body)).to.equal(400);
    expect(response.body.details).to.deep.equal([
      'the field of tag {{radio:1:Plan:Basic|Basic}} on page 1.options.1 ("Basic") is listed twice',
      'the field of tag {{calculated:1:Total:[Rent] ** 2}} on page 1.formula does not parse: expected a number, a field or ( at 8',
      'signers.0.fields the calculation of "Sum" names "Deposit", which is no field of this form',
    ]);
    // The signer's own fields and the tags' are one form: a formula of a tag may read a field placed by hand.
    const own = { page: 1, x: 60, y: 100, width: 100, height: 20, type: 'number', label: 'Deposit' };
    const fixed = await send(request, {
      document_id: document.id,
      textTags: 'fields',
      signers: [{ ...formSigner, fields: [own, { ...own, y: 60, label: 'Rent' }] }],
    });
    expect(fixed.status).to.equal(400);
    expect(fixed.body.details).to.include(
      'the field of tag {{number:1:Rent}} on page 1.label must be unique among the signer\'s fields, which conditions and formulas name by label: "Rent" is also signers.0.fields.1.label',
    );
    expect(fixed.body.details.some((detail: string) => detail.includes('Deposit'))).to.equal(false);
    // A tag's label is read from the PDF, not from a body: it is held to a label's rules all the same.
    const long = 'L'.repeat(101);
    const labelled = await uploadDocument(request, { pdf: await makeFormPdf([`{{signature:1}} {{text:1:${long}}}`], 4) });
    const refused = await send(request, { document_id: labelled.id, textTags: 'fields', signers: [formSigner] });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.details).to.deep.equal([`the field of tag {{text:1:${long}}} on page 1.label must be at most 100 characters`]);
    expect(await db('signing_requests').where({ account_id: account.id })).to.have.length(0);
  });
});
