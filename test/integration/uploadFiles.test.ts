import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { expect } from 'chai';
import { uploadDirOf } from '../../src/api/receivedFile';
import { startApp } from '../support/app';
import { client } from '../support/http';
import { makeLargePdf, makeManyObjectPdf } from '../support/pdfs';
import { eventually } from '../support/signing';
import { createTestAccount, testConfig } from '../support/system';

// An upload over 1 MiB is counted and hashed as it arrives and written to a temporary file in
// DATA_DIR/uploads, which the PDF process reads; the request removes it however it ends.
const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

function multipart(bytes: Buffer, fileName = 'large.pdf') {
  const boundary = 'uploadFilesBoundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/pdf\r\n\r\n`),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } };
}

/** Sends a request's head and the start of its body on a raw socket; `hangUp` goes without the rest. */
async function partialRequest(port: number, head: string, start: Buffer) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  socket.write(head);
  await new Promise<void>((resolve) => socket.write(start, () => resolve()));
  return { hangUp: () => socket.destroy() };
}

describe('uploads over 1 MiB (multipart, raw PDF)', function () {
  this.timeout(60_000);
  const config = testConfig({ MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES), PDF_MAX_OBJECTS: '50000' });
  const uploadDir = uploadDirOf(config.dataDir);
  const leftovers = () => (fs.existsSync(uploadDir) ? fs.readdirSync(uploadDir) : []);
  let api: Awaited<ReturnType<typeof startApp>>;
  let account: Awaited<ReturnType<typeof createTestAccount>>;
  let request: ReturnType<typeof client>;
  before(async () => {
    api = await startApp(config);
    account = await createTestAccount();
    request = client(api.url, account.apiKey);
  });
  after(() => api.close());

  it('a multipart upload is stored byte for byte with the SHA-256 of what was sent, and leaves no temporary file', async () => {
    const pdf = await makeLargePdf(3 * 1024 * 1024);
    const created = await request('POST', '/api/v1/documents', multipart(pdf));
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ status: 'ready', fileSize: pdf.length, pageCount: 1, sha256: sha256(pdf) });
    const stored = await request('GET', `/api/v1/documents/${created.body.id}/file`);
    expect(sha256(stored.bytes)).to.equal(sha256(pdf));
    expect(leftovers()).to.deep.equal([]);
  });

  it('a 20 MB upload, stored in pieces, is stored byte for byte with the SHA-256 of what was sent', async () => {
    const large = await createTestAccount(); // on the shared app: MAX_UPLOAD_BYTES is 25 MiB there
    const pdf = await makeLargePdf(20 * 1024 * 1024);
    const created = await large.request('POST', '/api/v1/documents', multipart(pdf));
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ fileSize: pdf.length, sha256: sha256(pdf) });
    const stored = await large.request('GET', `/api/v1/documents/${created.body.id}/file`);
    expect(stored.bytes.equals(pdf)).to.equal(true);
  });

  it('a raw PDF body (PUT /documents/:id/file) likewise', async () => {
    const pdf = await makeLargePdf(3 * 1024 * 1024);
    const created = await request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: pdf.length } });
    const uploaded = await request('PUT', `/api/v1/documents/${created.body.id}/file`, { body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(200);
    expect(uploaded.body).to.include({ status: 'ready', sha256: sha256(pdf) });
    const stored = await request('GET', `/api/v1/documents/${created.body.id}/file`);
    expect(stored.bytes.equals(pdf)).to.equal(true);
    expect(leftovers()).to.deep.equal([]);
  });

  it('refused uploads answer as before and leave no temporary file: not a PDF, hostile, over the limit, the wrong size', async () => {
    const notPdf = await request('POST', '/api/v1/documents', multipart(crypto.randomBytes(2 * 1024 * 1024)));
    expect(notPdf.status).to.equal(400);
    expect(notPdf.body.details).to.deep.equal(['content must be a PDF file']);

    const hostile = await request('POST', '/api/v1/documents', multipart(makeManyObjectPdf(60_000)));
    expect(hostile.status).to.equal(400);
    expect(hostile.body.details[0]).to.contain('(PDF_MAX_OBJECTS)');

    const tooLarge = await request('POST', '/api/v1/documents', multipart(crypto.randomBytes(MAX_UPLOAD_BYTES + 1)));
    expect(tooLarge.status).to.equal(413);
    expect(tooLarge.body.error).to.equal('payload_too_large');

    const pdf = await makeLargePdf(2 * 1024 * 1024);
    const created = await request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: pdf.length + 1 } });
    const path = `/api/v1/documents/${created.body.id}/file`;
    const wrongSize = await request('PUT', path, { body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    expect(wrongSize.status).to.equal(400);
    expect(wrongSize.body.details[0]).to.contain('fileSize must equal the size of the content');
    // Chunked, so that the limit is found while the body is read rather than from its Content-Length.
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array(crypto.randomBytes(MAX_UPLOAD_BYTES + 1)));
        controller.close();
      },
    });
    const response = await fetch(`${api.url}${path}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/pdf' },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).to.equal(413);
    expect(((await response.json()) as { error: string }).error).to.equal('payload_too_large');
    expect(leftovers()).to.deep.equal([]);
  });

  for (const kind of ['multipart', 'raw PDF'] as const) {
    it(`(${kind}) a client that hangs up mid-body leaves no temporary file`, async () => {
      const created = await request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: 3 * 1024 * 1024 } });
      const { body, headers } =
        kind === 'multipart'
          ? multipart(Buffer.alloc(3 * 1024 * 1024))
          : { body: Buffer.alloc(3 * 1024 * 1024), headers: { 'Content-Type': 'application/pdf' } };
      const head = [
        kind === 'multipart' ? 'POST /api/v1/documents HTTP/1.1' : `PUT /api/v1/documents/${created.body.id}/file HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: Bearer ${account.apiKey}`,
        `Content-Type: ${headers['Content-Type']}`,
        `Content-Length: ${body.length}`,
        '',
        '',
      ].join('\r\n');
      const upload = await partialRequest(api.port, head, body.subarray(0, 2 * 1024 * 1024));
      await eventually(async () => expect(leftovers()).to.have.length(1), 10_000); // past 1 MiB: in a temporary file
      upload.hangUp();
      await eventually(async () => expect(leftovers()).to.deep.equal([]), 10_000);
      const document = await request('GET', `/api/v1/documents/${created.body.id}`);
      expect(document.body.status).to.equal('awaiting_file');
    });
  }
});
