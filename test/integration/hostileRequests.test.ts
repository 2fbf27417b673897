import http from 'node:http';
import net from 'node:net';
import { expect } from 'chai';
import { startApp } from '../support/app';
import { client } from '../support/http';
import { makeLargePdf, makePdf } from '../support/pdfs';
import { createSigningRequest, eventually, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

// Requests an attacker with a free account would send: each is a clear 4xx in the usual error body.

describe('hostile requests: every path under /api is authenticated, in any case', () => {
  it('case variants of the prefix reach no handler: 404 with the error body, with or without a key', async () => {
    const account = await createTestAccount();
    const anonymous = client(account.system.url!);
    for (const path of ['/API/V1/documents', '/Api/v1/documents', '/api/V1/documents', '/API/documents', '/api/v1/DOCUMENTS']) {
      for (const request of [anonymous, account.request]) {
        const response = await request('GET', path);
        expect(response.status, path).to.equal(404);
        expect(response.body.error, path).to.equal('not_found');
      }
    }
  });
});

describe('hostile requests: NUL characters, odd dates, forged cursors', () => {
  it('a NUL byte in a body field, a query value or a path id is a 4xx, never a 500', async () => {
    const account = await createTestAccount();
    const created = await account.request('POST', '/api/v1/documents', { json: { fileName: 'a\u0000b.pdf', fileSize: 10 } });
    expect(created.status).to.equal(400);
    expect(created.body.details).to.deep.equal(['fileName must not contain NUL characters']);
    const signers = await account.request('POST', '/api/v1/signatures', {
      json: { document_id: 'doc_x', title: 'T', signers: [{ name: 'A\u0000', email: 'a@example.com' }] },
    });
    expect(signers.body.details).to.deep.equal(['signers.0.name must not contain NUL characters']);
    for (const path of ['/api/v1/search?q=a%00b', '/api/v1/signatures?signerEmail=a%00@example.com', '/api/v1/documents?cursor=doc_%00']) {
      const response = await account.request('GET', path);
      expect(response.status, path).to.equal(400);
      expect(response.body.error).to.equal('validation_error');
    }
    for (const path of ['/api/v1/documents/doc_%00', '/api/v1/signatures/sr_%00x', '/api/v1/webhooks/%00']) {
      expect((await account.request('GET', path)).status, path).to.equal(404);
    }
  });

  it('query dates are ISO 8601 only: 0, 2024, "March 7" and year -271821 are 400; real dates are 200', async () => {
    const account = await createTestAccount();
    for (const value of ['0', '2024', 'March 7', '-271821-04-20', '+275760-09-13', '2024-13-45', '0001-01-01']) {
      for (const path of ['/api/v1/signatures', '/api/v1/search']) {
        const response = await account.request('GET', `${path}?createdAfter=${encodeURIComponent(value)}`);
        expect(response.status, `${path} ${value}`).to.equal(400);
        expect(response.body.details, `${path} ${value}`).to.deep.equal(['createdAfter must be an ISO 8601 date']);
      }
    }
    for (const value of ['2024-03-07', '2024-03-07T10:00:00Z', '2024-03-07T10:00:00.123+02:00']) {
      expect((await account.request('GET', `/api/v1/signatures?createdAfter=${encodeURIComponent(value)}`)).status, value).to.equal(200);
    }
  });

  it('a search cursor holding a huge number is 400', async () => {
    const account = await createTestAccount();
    const forged = Buffer.from(JSON.stringify(['-createdAt', 1e300, 'doc_01jd8x3c6hf1z8k3q2v5n7m9pt'])).toString('base64url');
    const response = await account.request('GET', `/api/v1/search?cursor=${forged}`);
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal(['cursor is not a valid cursor']);
  });

  it('every response says X-Content-Type-Options: nosniff', async () => {
    const account = await createTestAccount();
    const anonymous = client(account.system.url!);
    for (const response of [
      await account.request('GET', '/api/v1/documents'),
      await anonymous('GET', '/api/v1/documents'),
      await anonymous('GET', '/nowhere'),
      await anonymous('GET', '/healthz'),
    ]) {
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
    }
  });
});

describe('hostile requests: X-Forwarded-For is evidence only from a trusted proxy', function () {
  this.timeout(60_000);

  async function signedFrom(trustProxy: string) {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Ada', email: 'ada@example.com' }] });
    const link = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/link`);
    const api = await startApp({ TRUST_PROXY: trustProxy });
    try {
      const signed = await client(api.url)('POST', `/sign/${tokenOf(link.body.url)}/sign`, {
        json: { consent: true, signature: { type: 'typed', value: 'Ada' } },
        headers: { 'X-Forwarded-For': '203.0.113.9' },
      });
      expect(signed.status).to.equal(200);
    } finally {
      await api.close();
    }
    return eventually(async () => {
      const steps = (await account.request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`)).body.data;
      const step = steps.find((candidate: { action: string }) => candidate.action === 'signed');
      expect(step).to.not.equal(undefined);
      return step.ipAddress as string;
    });
  }

  it('by default the connecting address is recorded, whatever the header says', async () => {
    expect(await signedFrom('')).to.match(/127\.0\.0\.1$/);
  });

  it('behind a proxy named in TRUST_PROXY, the address it forwarded for is recorded', async () => {
    expect(await signedFrom('127.0.0.1')).to.equal('203.0.113.9');
  });
});

describe('hostile requests: a PDF field name with NUL in a multipart upload', () => {
  it('is 400, not 500', async () => {
    const account = await createTestAccount();
    const form = new FormData();
    form.append('fileName', 'bad\u0000name.pdf');
    form.append('file', new Blob([new Uint8Array(await makePdf())], { type: 'application/pdf' }), 'x.pdf');
    const response = await account.request('POST', '/api/v1/documents', { body: form });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal(['fileName must not contain NUL characters']);
  });
});

describe('hostile requests: bodies and methods answer in JSON, consistently', () => {
  it('a corrupt gzip or unknown Content-Encoding body is 400 or 415, not 500', async () => {
    const account = await createTestAccount();
    const gzip = await account.request('POST', '/api/v1/webhooks', {
      body: Buffer.from('not gzip at all'),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    expect(gzip.status).to.equal(400);
    expect(gzip.body.error).to.equal('validation_error');
    const unknown = await account.request('POST', '/api/v1/webhooks', {
      body: Buffer.from('{}'),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'x-weird' },
    });
    expect(unknown.status).to.equal(415);
    expect(unknown.body.error).to.equal('unsupported_media_type');
  });

  it('POST /documents with no body is 400 like every other endpoint', async () => {
    const account = await createTestAccount();
    const response = await account.request('POST', '/api/v1/documents');
    expect(response.status).to.equal(400);
    expect(response.body.error).to.equal('validation_error');
  });

  it('a multipart upload with more than 20 fields is 400', async () => {
    const account = await createTestAccount();
    const many = new FormData();
    for (let i = 0; i < 25; i++) many.append(`field${i}`, 'x');
    const tooMany = await account.request('POST', '/api/v1/documents', { body: many });
    expect(tooMany.status).to.equal(400);
    expect(tooMany.body.details).to.deep.equal(['body must have at most 20 form fields']);
  });

  it('TRACE and other methods a path does not have are 405 JSON errors with Allow', async () => {
    const account = await createTestAccount();
    const { port } = new URL(account.system.url!);
    for (const method of ['TRACE', 'PROPFIND']) {
      const { status, type, allow, body } = await new Promise<{ status: number; type: string; allow: string; body: string }>((resolve, reject) => {
        const request = http.request(
          { host: '127.0.0.1', port, method, path: '/api/v1/documents', headers: { Authorization: `Bearer ${account.apiKey}` } },
          (response) => {
            let text = '';
            response
              .on('data', (chunk) => (text += chunk))
              .on('end', () =>
                resolve({ status: response.statusCode!, type: response.headers['content-type'] ?? '', allow: String(response.headers.allow), body: text }),
              );
          },
        );
        request.on('error', reject).end();
      });
      expect(status, method).to.equal(405);
      expect(allow.split(', ').sort(), method).to.deep.equal(['GET', 'HEAD', 'POST']);
      expect(type, method).to.match(/application\/json/);
      expect(JSON.parse(body).error, method).to.be.a('string');
    }
  });
});

describe('hostile neighbours: one account’s stalled uploads do not hold another’s', function () {
  this.timeout(60_000);

  /** Sends the head and the first bytes of an upload (a large JSON one unless told), then stalls. */
  async function stalledUpload(
    port: number,
    apiKey: string,
    request = {
      head: 'POST /api/v1/documents',
      type: 'application/json',
      length: 2 * 1024 * 1024,
      start: `{"fileName":"stalled.pdf","fileSize":10,"content":"${'A'.repeat(64 * 1024)}`,
    },
  ) {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `${request.head} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: ${request.type}\r\nContent-Length: ${request.length}\r\n\r\n`,
    );
    socket.write(request.start);
    let answer = '';
    let closed = false;
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => (closed = true));
    return { answered: () => answer, closed: () => closed, close: () => socket.destroy() };
  }

  it('a body that stops arriving is answered 408 in JSON, its connection closed and its upload slot freed', async () => {
    const api = await startApp({ MAX_CONCURRENT_UPLOADS: '2', BODY_IDLE_TIMEOUT_MS: '400' });
    const account = await createTestAccount();
    const stalled: Awaited<ReturnType<typeof stalledUpload>>[] = [];
    try {
      const boundary = 'stalledboundary';
      stalled.push(
        // Two large uploads of one account: the second waits for the account's one slot, then stalls too.
        await stalledUpload(api.port, account.apiKey),
        await stalledUpload(api.port, account.apiKey),
        await stalledUpload(api.port, account.apiKey, {
          head: 'POST /api/v1/documents',
          type: `multipart/form-data; boundary=${boundary}`,
          length: 2 * 1024 * 1024,
          start: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
        }),
        await stalledUpload(api.port, account.apiKey, { head: 'POST /api/v1/signatures', type: 'application/json', length: 1000, start: '{"documentId":' }),
      );
      await eventually(async () => {
        for (const one of stalled) {
          expect(one.answered()).to.match(/^HTTP\/1\.1 408 /);
          expect(one.answered()).to.include('"error":"request_timeout"');
          expect(one.closed()).to.equal(true);
        }
      }, 15_000);
      // Every slot is free again: the same account uploads at once.
      const pdf = await makeLargePdf(1536 * 1024);
      const upload = await client(`http://127.0.0.1:${api.port}`, account.apiKey)('POST', '/api/v1/documents', {
        json: { fileName: 'after.pdf', fileSize: pdf.length, content: pdf.toString('base64') },
      });
      expect(upload.status, JSON.stringify(upload.body)).to.equal(201);
    } finally {
      for (const one of stalled) one.close();
      await api.close();
    }
  });

  it('two stalled uploads of one account leave an upload slot for another account', async () => {
    const api = await startApp({ MAX_CONCURRENT_UPLOADS: '2' });
    const { port } = api;
    const stalled: Awaited<ReturnType<typeof stalledUpload>>[] = [];
    try {
      const stalling = await createTestAccount();
      const neighbour = await createTestAccount();
      stalled.push(await stalledUpload(port, stalling.apiKey), await stalledUpload(port, stalling.apiKey));
      // Both reached the gate: one holds the account's one slot and waits for its body, the other waits for a slot.
      await eventually(async () => expect([api.uploads.holding, api.uploads.pending]).to.deep.equal([1, 1]));
      const pdf = await makeLargePdf(1536 * 1024);
      const upload = await client(`http://127.0.0.1:${port}`, neighbour.apiKey)('POST', '/api/v1/documents', {
        json: { fileName: 'neighbour.pdf', fileSize: pdf.length, content: pdf.toString('base64') },
      });
      expect(upload.status, JSON.stringify(upload.body)).to.equal(201);
      // Served while the stalled uploads still hold what they hold.
      expect(stalled.map((one) => one.answered())).to.deep.equal(['', '']);
    } finally {
      for (const one of stalled) one.close();
      await api.close();
    }
  });
});
