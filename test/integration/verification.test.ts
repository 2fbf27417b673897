import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PDFDocument } from 'pdf-lib';
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { SignPdf } from '@signpdf/signpdf';
import { Signer } from '@signpdf/utils';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { createLogger } from '../../src/logger';
import { createPdfInspector } from '../../src/pdf/inspect';
import { sealPdf, sha256Of } from '../../src/pdf/seal';
import { generateSelfSignedP12 } from '../../src/pdf/sealCertificate';
import { sealCertificateFingerprint } from '../../src/pdf/sealSigner';
import { startSystem, type RunningSystem } from '../../src/system';
import { startApp } from '../support/app';
import { client, type Request } from '../support/http';
import { makeDoubledPageTree, makeObjectStreamBomb, makePdf } from '../support/pdfs';
import { completedRequest, createSigningRequest, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount, databaseKind, stopLeavingNothing, testConfig, useSharedSystem } from '../support/system';
import { startTestPki } from '../support/testPki';

// Issue #29, part 3: anyone holding a PDF asks Signet, without an API key, whether it is one Signet
// sealed, unchanged. The sealed file comes from the real flow: a request sent, signed through its links,
// completed and downloaded.

type Account = Awaited<ReturnType<typeof createTestAccount>>;

/** A PDF sealed by Signet through the whole flow, and the request that sealed it. */
async function sealThroughTheFlow(account: Pick<Account, 'request'> & { system: { url?: string } }) {
  const { signingRequest, document } = await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] });
  const token = tokenOf(await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
  const signed = await client(account.system.url!)('POST', `/sign/${token}/sign`, {
    json: { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } },
  });
  expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
  const completed = await completedRequest(account.request, signingRequest.id);
  const sealed = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/document`);
  expect(sealed.status).to.equal(200);
  return { sealed: sealed.bytes, signingRequest: completed, document };
}

/** POST /api/v1/verify with the PDF as the body (no API key). */
const verifyRaw = (request: Request, pdf: Buffer, headers: Record<string, string> = {}) =>
  request('POST', '/api/v1/verify', { body: pdf, headers: { 'Content-Type': 'application/pdf', ...headers } });

function multipart(pdf: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'to-verify.pdf');
  return form;
}

/** The sealed PDF with an incremental update appended, as a PDF editor saves a change: a new object, its xref section and trailer. */
function appendIncrementalUpdate(pdf: Buffer): Buffer {
  const text = pdf.toString('latin1');
  const size = Number([...text.matchAll(/\/Size (\d+)/g)].at(-1)![1]);
  const root = [...text.matchAll(/\/Root (\d+ \d+ R)/g)].at(-1)![1];
  const previous = Number([...text.matchAll(/startxref\s+(\d+)/g)].at(-1)![1]);
  const object = `\n${size} 0 obj\n<< /Note (added after the seal) >>\nendobj\n`;
  const xrefAt = pdf.length + object.length;
  const update =
    `${object}xref\n0 1\n0000000000 65535 f \n${size} 1\n${String(pdf.length + 1).padStart(10, '0')} 00000 n \n` +
    `trailer\n<< /Size ${size + 1} /Root ${root} /Prev ${previous} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.concat([pdf, Buffer.from(update, 'latin1')]);
}

/** Signs with OpenSSL's CMS (`openssl cms -sign`, detached, with signed attributes), for a certificate of someone else's. */
class OpenSslSigner extends Signer {
  constructor(private readonly dir: string) {
    super();
  }
  async sign(pdfBuffer: Buffer): Promise<Buffer> {
    const [certificate, key] = ['cert.pem', 'key.pem'].map((name) => path.join(this.dir, name));
    return execFileSync('openssl', ['cms', '-sign', '-binary', '-outform', 'DER', '-md', 'sha256', '-signer', certificate, '-inkey', key, '-nosmimecap'], {
      input: pdfBuffer,
    });
  }
}

async function signedByAnotherCertificate(): Promise<Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-other-cert-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '30', '-subj', '/CN=Someone Else', '-keyout', 'key.pem', '-out', 'cert.pem'],
    {
      cwd: dir,
      stdio: 'ignore',
    },
  );
  const pdfDoc = await PDFDocument.load(await makePdf(['Signed elsewhere']));
  pdflibAddPlaceholder({ pdfDoc, reason: 'Signed elsewhere', contactInfo: '', name: 'Someone Else', location: '', signatureLength: 8192 });
  const withPlaceholder = Buffer.from(await pdfDoc.save({ useObjectStreams: false }));
  return new SignPdf().sign(withPlaceholder, new OpenSslSigner(dir));
}

describe('POST /api/v1/verify', function () {
  this.timeout(90_000);
  useSharedSystem();
  let account: Account;
  let anyone: Request;
  let sealed: Buffer;
  let signingRequest: { id: string; completedAt: string };
  let document: { id: string; fileName: string };

  before(async function () {
    this.timeout(120_000);
    account = await createTestAccount();
    anyone = client(account.system.url!); // no API key
    ({ sealed, signingRequest, document } = await sealThroughTheFlow(account));
  });

  it('sealed_unmodified for the sealed PDF as downloaded, with its request, completion and document, and no API key', async () => {
    const response = await verifyRaw(anyone, sealed);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.headers.get('cache-control')).to.equal('no-store');
    expect(response.body).to.deep.include({
      result: 'sealed_unmodified',
      signingRequestId: signingRequest.id,
      completedAt: signingRequest.completedAt,
      documents: [{ id: document.id, fileName: 'agreement.pdf' }],
    });
    expect(response.body.signatures).to.have.length(1);
    const [signature] = response.body.signatures;
    expect(signature).to.include({ kind: 'signature', signer: 'Signet document seal', trusted: true, intact: true, coversWholeFile: true, timestamp: null });
    expect(signature.certificateFingerprint).to.match(/^[0-9a-f]{64}$/);
    // Today's default seal (self-signed, no timestamp authority): B-B, its time the server's own.
    expect(response.body.seal).to.deep.equal({
      level: 'B-B',
      timestampedAt: null,
      timestampAuthority: null,
      validationDataEmbedded: false,
      archiveTimestampedAt: null,
    });
    expect(new Date(signature.signedAt).getTime()).to.be.closeTo(new Date(signingRequest.completedAt).getTime(), 60_000);
    // Nothing else of the account: no e-mail, title, signers or account id.
    expect(JSON.stringify(response.body)).not.to.match(/ada@example\.com|Services agreement|acct_|owner-/);
  });

  it('the same as the file part of a multipart/form-data body', async () => {
    const response = await anyone('POST', '/api/v1/verify', { body: multipart(sealed) });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body).to.include({ result: 'sealed_unmodified', signingRequestId: signingRequest.id });
  });

  it('modified_after_seal for the sealed PDF with one byte changed inside the signed range', async () => {
    const changed = Buffer.from(sealed);
    const at = changed.indexOf('Sealed by Signet', 0, 'latin1');
    expect(at).to.be.above(0);
    changed[at + 'Sealed by Signe'.length] = 'T'.charCodeAt(0);
    const response = await verifyRaw(anyone, changed);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.result).to.equal('modified_after_seal');
    expect(response.body).not.to.have.any.keys('signingRequestId', 'completedAt', 'documents');
    expect(response.body.signatures[0]).to.include({ trusted: false, intact: false, coversWholeFile: true });
    expect(response.body.seal).to.include({ level: 'B-B' });
  });

  it('modified_after_seal for the sealed PDF with an incremental update appended', async () => {
    const updated = appendIncrementalUpdate(sealed);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signet-updated-')), 'updated.pdf');
    fs.writeFileSync(file, updated);
    execFileSync('qpdf', ['--check', file], { stdio: 'ignore' }); // a well-formed PDF still
    const response = await verifyRaw(anyone, updated);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.result).to.equal('modified_after_seal');
    expect(response.body).not.to.have.any.keys('signingRequestId', 'completedAt', 'documents');
    expect(response.body.signatures[0]).to.include({ signer: 'Signet document seal', trusted: true, intact: true, coversWholeFile: false });
  });

  it('sealed_by_other for a PDF signed with another certificate (OpenSSL CMS)', async () => {
    const response = await verifyRaw(anyone, await signedByAnotherCertificate());
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.result).to.equal('sealed_by_other');
    expect(response.body.signatures).to.have.length(1);
    expect(response.body.signatures[0]).to.include({ kind: 'signature', signer: 'Someone Else', trusted: false, intact: true, coversWholeFile: true });
    expect(response.body.seal).to.equal(null);
    expect(response.body.signatures[0].certificateFingerprint).not.to.equal((await verifyRaw(anyone, sealed)).body.signatures[0].certificateFingerprint);
  });

  it('unsigned for a PDF without a signature', async () => {
    const response = await verifyRaw(anyone, await makePdf());
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body).to.deep.equal({ result: 'unsigned', signatures: [], seal: null });
  });

  it('recognises a sealed PDF by its hash alone where the api cannot read the seal certificate', async () => {
    const api = await startApp({ SEAL_P12_PATH: path.join(os.tmpdir(), 'no-such-seal.p12') });
    try {
      const response = await verifyRaw(client(api.url), sealed);
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(response.body).to.include({ result: 'sealed_unmodified', signingRequestId: signingRequest.id });
      expect(response.body.signatures[0]).to.include({ trusted: true });
      expect(response.body.seal).to.include({ level: 'B-B' });
      // Without the certificate file, a changed file is still told by the certificates that sealed here (seal_certificates).
      expect((await verifyRaw(client(api.url), appendIncrementalUpdate(sealed))).body.result).to.equal('modified_after_seal');
    } finally {
      await api.close();
    }
  });

  it('modified_after_seal for a file sealed with an older seal certificate (since rotated), changed or added to; sealed_by_other before that certificate is known', async () => {
    const older = { p12: await generateSelfSignedP12(), password: '' };
    const fingerprint = await sealCertificateFingerprint(older);
    const sealedBefore = await sealPdf(await makePdf(['Sealed before the rotation']), older);
    const updated = appendIncrementalUpdate(sealedBefore);
    expect((await verifyRaw(anyone, updated)).body.result).to.equal('sealed_by_other');
    // As sealing notes every certificate it seals with (insertSealedDocument).
    await account.db('seal_certificates').insert({ sha256: fingerprint, subject: 'Signet document seal' }).onConflict('sha256').ignore();

    const appended = await verifyRaw(anyone, updated);
    expect(appended.status, JSON.stringify(appended.body)).to.equal(200);
    expect(appended.body.result).to.equal('modified_after_seal');
    expect(appended.body.signatures[0]).to.include({ certificateFingerprint: fingerprint, trusted: true, intact: true, coversWholeFile: false });
    expect(appended.body.seal).to.include({ level: 'B-B' });
    const changed = Buffer.from(sealedBefore);
    changed[changed.indexOf('Sealed by Signet', 0, 'latin1') + 1] ^= 1;
    const response = await verifyRaw(anyone, changed);
    expect(response.body.result).to.equal('modified_after_seal');
    expect(response.body.signatures[0]).to.include({ certificateFingerprint: fingerprint, trusted: false, intact: false });
  });

  it('sealed_unmodified for a copy handed out before an archive renewal replaced the stored file (its hash in sealed_document_versions)', async () => {
    const { sealed: before, signingRequest: renewedRequest, document: renewedDocument } = await sealThroughTheFlow(account);
    // As a renewal leaves it: the stored file is the old one with an update appended, the old copy's hash kept.
    const renewed = appendIncrementalUpdate(before);
    const row = { signing_request_id: renewedRequest.id, document_id: renewedDocument.id };
    await account
      .db('sealed_documents')
      .where(row)
      .update({ content: renewed, sha256: sha256Of(renewed) });
    await account.db('sealed_document_versions').insert({ ...row, sha256: sha256Of(before) });
    for (const copy of [before, renewed]) {
      const response = await verifyRaw(anyone, copy);
      expect(response.status, JSON.stringify(response.body)).to.equal(200);
      expect(response.body).to.deep.include({
        result: 'sealed_unmodified',
        signingRequestId: renewedRequest.id,
        documents: [{ id: renewedDocument.id, fileName: 'agreement.pdf' }],
      });
      expect(response.body.signatures[0]).to.include({ trusted: true, intact: true });
    }
  });

  it('400 for what is not a PDF, 415 for another body type', async () => {
    const notPdf = await verifyRaw(anyone, Buffer.from('hello, not a PDF'));
    expect(notPdf.status).to.equal(400);
    expect(notPdf.body).to.deep.include({ error: 'validation_error', details: ['content must be a PDF file'] });
    const json = await anyone('POST', '/api/v1/verify', { json: { file: 'x' } });
    expect(json.status).to.equal(415);
    expect(json.body.error).to.equal('unsupported_media_type');
    const empty = await anyone('POST', '/api/v1/verify', { body: new FormData() });
    expect(empty.status).to.equal(400);
  });
});

describe('POST /api/v1/verify: a seal at B-LTA, by a system sealing with the test PKI', function () {
  this.timeout(180_000);
  let pki: Awaited<ReturnType<typeof startTestPki>>;
  let system: RunningSystem;
  let sealed: Buffer;
  let signingRequest: { id: string };

  before(async function () {
    this.timeout(240_000);
    pki = await startTestPki();
    // Its own task queue, so that the shared system's worker (sealing at B-B) never takes its requests.
    const config = testConfig({
      TEMPORAL_TASK_QUEUE: `signet-test-${databaseKind}-${process.pid}-verify-blta`,
      SEAL_P12_PATH: pki.seal.p12,
      SEAL_P12_PASSWORD: pki.seal.password,
      SEAL_TSA_URLS: pki.tsaUrl,
      SEAL_LEVEL: 'B-LTA',
      SEAL_TRUST_ANCHORS_PATH: pki.rootPem,
    });
    system = await startSystem(config, createLogger('silent'));
    const db = system.database.knex;
    const owner = await createAccount(db, { email: `verify-blta-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
    const request = client(system.url!, (await createApiKey(db, owner.id)).secret);
    ({ sealed, signingRequest } = await sealThroughTheFlow({ request, system }));
  });
  after(async () => {
    await stopLeavingNothing(system);
    await pki?.stop();
    if (pki) fs.rmSync(pki.dir, { recursive: true, force: true });
  });

  it('sealed_unmodified at B-LTA: the timestamp, its authority, the embedded validation data and the archive timestamp', async () => {
    const response = await verifyRaw(client(system.url!), sealed);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(response.body).to.include({ result: 'sealed_unmodified', signingRequestId: signingRequest.id });
    const [signature, archive] = response.body.signatures;
    expect(response.body.signatures).to.have.length(2);
    expect(signature).to.include({ kind: 'signature', signer: 'Example Ltd document seal', trusted: true, intact: true, coversWholeFile: false });
    expect(signature.timestamp).to.include({ authority: 'Signet Test TSA', intact: true });
    expect(archive).to.include({ kind: 'document_timestamp', signer: 'Signet Test TSA', trusted: true, intact: true, timestamp: null });
    expect(response.body.seal).to.deep.equal({
      level: 'B-LTA',
      timestampedAt: signature.timestamp.time,
      timestampAuthority: 'Signet Test TSA',
      validationDataEmbedded: true,
      archiveTimestampedAt: archive.signedAt,
    });
  });

  it('modified_after_seal once changed past the seal, the level still read from its intact signature; the document timestamp no longer intact', async () => {
    const changed = Buffer.from(sealed);
    const [, , second, length] = [...sealed.toString('latin1').matchAll(/\/ByteRange\s*\[([\d\s]+)\]/g)][0][1].trim().split(/\s+/).map(Number);
    const stream = changed.indexOf('stream', second + length, 'latin1'); // in the DSS update, past what the seal's signature covers
    changed[stream + 20] ^= 1;
    const response = await verifyRaw(client(system.url!), changed);
    expect(response.body.result).to.equal('modified_after_seal');
    expect(response.body.signatures.map((entry: { intact: boolean }) => entry.intact)).to.deep.equal([true, false]);
    expect(response.body.seal).to.include({ level: 'B-LT', validationDataEmbedded: true, archiveTimestampedAt: null });
  });
});

describe('POST /api/v1/verify: hostile PDFs and the rate limit', function () {
  this.timeout(60_000);
  let api: Awaited<ReturnType<typeof startApp>>;
  const pdf = createPdfInspector(testConfig());
  // The client address comes from X-Forwarded-For (TRUST_PROXY), a fresh one per test: counts left by an earlier run never meet it.
  const someAddress = () => `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 250) + 1).join('.')}`;

  before(async function () {
    this.timeout(120_000);
    api = await startApp({ TRUST_PROXY: '127.0.0.1', VERIFY_REQUESTS_PER_HOUR: '2' }, { deps: { pdf } });
  });
  after(async () => {
    await api?.close();
    await pdf.close();
  });

  const hostile = [
    {
      name: 'a 600 KB PDF whose object stream inflates to 600 MiB',
      make: () => makeObjectStreamBomb(600 * 2 ** 20),
      problem: 'content exceeds the limit of 67108864 bytes decompressed (PDF_MAX_DECOMPRESSED_BYTES)',
    },
    {
      name: 'a page tree listing each child twice',
      make: () => makeDoubledPageTree(22),
      problem: 'content is not a parsable PDF: its page tree lists a page or node twice, or a node under the wrong parent',
    },
  ];
  for (const { name, make, problem } of hostile) {
    it(`400 for ${name}, naming the limit, parsed by the upload's child processes`, async () => {
      const jobsBefore = pdf.jobsStarted;
      const response = await verifyRaw(client(api.url), make(), { 'X-Forwarded-For': someAddress() });
      expect(response.status, JSON.stringify(response.body)).to.equal(400);
      expect(response.body).to.deep.include({ error: 'validation_error', details: [problem] });
      expect(pdf.jobsStarted).to.equal(jobsBefore + 1);
    });
  }

  it('413 for a body over MAX_UPLOAD_BYTES, read no further', async () => {
    const small = await startApp({ MAX_UPLOAD_BYTES: '1000' }, { deps: { pdf } });
    try {
      const response = await verifyRaw(client(small.url), Buffer.alloc(5000, 'a'));
      expect(response.status).to.equal(413);
      expect(response.body.error).to.equal('payload_too_large');
    } finally {
      await small.close();
    }
  });

  it('429 with Retry-After past VERIFY_REQUESTS_PER_HOUR from one client address, before any parsing; another address is still served', async () => {
    const address = someAddress();
    const unsigned = await makePdf();
    for (let i = 0; i < 2; i++) expect((await verifyRaw(client(api.url), unsigned, { 'X-Forwarded-For': address })).status).to.equal(200);
    const jobsBefore = pdf.jobsStarted;
    const limited = await verifyRaw(client(api.url), unsigned, { 'X-Forwarded-For': address });
    expect(limited.status).to.equal(429);
    expect(limited.body.error).to.equal('rate_limit_exceeded');
    expect(Number(limited.headers.get('retry-after'))).to.be.above(0);
    expect(pdf.jobsStarted).to.equal(jobsBefore);
    expect((await verifyRaw(client(api.url), unsigned, { 'X-Forwarded-For': someAddress() })).status).to.equal(200);
  });
});
