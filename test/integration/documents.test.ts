import { expect } from 'chai';
import { makeEncryptedPdf, makePdf } from '../support/pdfs';
import { client } from '../support/http';
import { createTestAccount, sharedSystem } from '../support/system';

const jsonDocument = (pdf: Buffer, fileName = 'contract.pdf') => ({ fileName, fileSize: pdf.length, content: pdf.toString('base64') });

function multipart(pdf: Buffer, fields: Record<string, string> = {}, fileName = 'upload.pdf') {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), fileName);
  return form;
}

describe('POST /api/v1/documents', () => {
  it('401 without an API key', async () => {
    const request = client((await sharedSystem()).url!);
    const response = await request('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: 1 } });
    expect(response.status).to.equal(401);
    expect(response.body.error).to.equal('unauthorized');
  });

  it('400 with every violated rule at once', async () => {
    const { request } = await createTestAccount();
    const response = await request('POST', '/api/v1/documents', { json: {} });
    expect(response.status).to.equal(400);
    expect(response.body).to.include({ error: 'validation_error' });
    expect(response.body.details).to.deep.equal(['fileName is required', 'fileSize must be a positive number']);
  });

  for (const fileSize of [0, -5, 'abc', '12', null, 1.5, true]) {
    it(`400 for fileSize ${JSON.stringify(fileSize)}`, async () => {
      const { request } = await createTestAccount();
      const response = await request('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize } });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.equal('validation_error');
      expect(response.body.details).to.have.length(1);
      expect(response.body.details[0]).to.match(/^fileSize must be a (positive number|whole number of bytes)$/);
    });
  }

  for (const fileName of ['', '   ', 42]) {
    it(`400 for fileName ${JSON.stringify(fileName)}`, async () => {
      const { request } = await createTestAccount();
      const response = await request('POST', '/api/v1/documents', { json: { fileName, fileSize: 10 } });
      expect(response.status).to.equal(400);
      expect(response.body.details).to.have.length(1);
      expect(response.body.details[0]).to.match(/^fileName (is required|must be a string)$/);
    });
  }

  it('201 metadata only: the document waits for its file', async () => {
    const { request } = await createTestAccount();
    const response = await request('POST', '/api/v1/documents', { json: { fileName: 'nda.pdf', fileSize: 1234 } });
    expect(response.status).to.equal(201);
    expect(response.body).to.include({ fileName: 'nda.pdf', fileSize: 1234, status: 'awaiting_file', pageCount: null, sha256: null });
    expect(response.body.id).to.match(/^doc_[0-9a-z]{26}$/);
    expect(new Date(response.body.createdAt).toISOString()).to.equal(response.body.createdAt);
  });

  it('201 with base64 content: page count and SHA-256 of the PDF', async () => {
    const { request } = await createTestAccount();
    const pdf = await makePdf(['one', 'two', 'three']);
    const response = await request('POST', '/api/v1/documents', { json: jsonDocument(pdf) });
    expect(response.status).to.equal(201);
    expect(response.body).to.include({ status: 'ready', pageCount: 3, fileSize: pdf.length });
    const { createHash } = await import('node:crypto');
    expect(response.body.sha256).to.equal(createHash('sha256').update(pdf).digest('hex'));
  });

  it('201 with a multipart upload, fileName from the part or the field', async () => {
    const { request } = await createTestAccount();
    const pdf = await makePdf();
    const fromPart = await request('POST', '/api/v1/documents', { body: multipart(pdf, {}, 'lease.pdf') });
    expect(fromPart.status).to.equal(201);
    expect(fromPart.body).to.include({ fileName: 'lease.pdf', fileSize: pdf.length, status: 'ready', pageCount: 1 });
    const fromField = await request('POST', '/api/v1/documents', { body: multipart(pdf, { fileName: 'Renamed.pdf' }) });
    expect(fromField.body.fileName).to.equal('Renamed.pdf');
  });

  it('201 for a multipart file part without its own Content-Type: the part with a filename, or named file, is the file', async () => {
    const { request } = await createTestAccount();
    const pdf = await makePdf(['no content type']);
    const boundary = 'signet-test-boundary';
    const part = (disposition: string, value: Buffer | string) => [
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; ${disposition}\r\n\r\n`),
      Buffer.from(value),
      Buffer.from('\r\n'),
    ];
    const send = (...parts: Buffer[][]) =>
      request('POST', '/api/v1/documents', {
        body: Buffer.concat([...parts.flat(), Buffer.from(`--${boundary}--\r\n`)]),
        headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      });
    const { createHash } = await import('node:crypto');
    const sha256 = createHash('sha256').update(pdf).digest('hex');
    const withFilename = await send(part('name="file"; filename="bare.pdf"', pdf));
    expect(withFilename.status, JSON.stringify(withFilename.body)).to.equal(201);
    expect(withFilename.body).to.include({ fileName: 'bare.pdf', fileSize: pdf.length, pageCount: 1, sha256 });
    const byName = await send(part('name="fileName"', 'named.pdf'), part('name="file"', pdf));
    expect(byName.status, JSON.stringify(byName.body)).to.equal(201);
    expect(byName.body).to.include({ fileName: 'named.pdf', fileSize: pdf.length, sha256 });
  });

  it('400 for a multipart request without a file part', async () => {
    const { request } = await createTestAccount();
    const form = new FormData();
    form.append('fileName', 'x.pdf');
    const response = await request('POST', '/api/v1/documents', { body: form });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal(['file is required']);
  });

  it('writes a document.created event in the same transaction', async () => {
    const { request, db, account } = await createTestAccount();
    const response = await request('POST', '/api/v1/documents', { json: { fileName: 'e.pdf', fileSize: 5 } });
    const events = await db('events').where({ account_id: account.id });
    expect(events).to.have.length(1);
    expect(events[0].type).to.equal('document.created');
    expect(events[0].id).to.match(/^evt_/);
    expect(events[0].data).to.include({ documentId: response.body.id, fileName: 'e.pdf' });
    // The event's xid is the transaction that wrote it; the document row's xmin is the one that inserted it.
    const { rows } = await db.raw(
      'select (select xmin::text from documents where id = ?) as document, (select (xid::text::bigint % 4294967296)::text from events where id = ?) as event',
      [response.body.id, events[0].id],
    );
    expect(rows[0].event, 'the transaction that wrote the event').to.equal(rows[0].document);
  });

  describe('broken content is a validation error, never a 500', () => {
    const cases: [string, () => Promise<Buffer>, RegExp][] = [
      ['random bytes', async () => Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919) % 256)), /content must be a PDF file/],
      ['a truncated PDF', async () => (await makePdf(['a', 'b'])).subarray(0, 600), /truncated/],
      ['an encrypted PDF (made by qpdf)', makeEncryptedPdf, /encrypted/],
      ['a PDF header with garbage after it', async () => Buffer.from('%PDF-1.7\n' + 'garbage '.repeat(100) + '\n%%EOF\n'), /not a parsable PDF/],
      ['empty content', async () => Buffer.alloc(0), /content must be a PDF file/],
    ];
    for (const [name, make, message] of cases) {
      it(`400 for ${name}`, async () => {
        const { request } = await createTestAccount();
        const bytes = await make();
        const response = await request('POST', '/api/v1/documents', {
          json: { fileName: 'bad.pdf', fileSize: bytes.length || 1, content: bytes.toString('base64') },
        });
        expect(response.status).to.equal(400);
        expect(response.body.error).to.equal('validation_error');
        expect(response.body.details.join('; ')).to.match(message);
      });
    }

    it('400 when fileSize differs from the content length', async () => {
      const { request } = await createTestAccount();
      const pdf = await makePdf();
      const response = await request('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: pdf.length + 1, content: pdf.toString('base64') } });
      expect(response.status).to.equal(400);
      expect(response.body.details).to.deep.equal([`fileSize must equal the size of the content (${pdf.length} bytes)`]);
    });

    it('400 when content is not base64', async () => {
      const { request } = await createTestAccount();
      const response = await request('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: 3, content: 'not base64!' } });
      expect(response.status).to.equal(400);
      expect(response.body.details).to.deep.equal(['content must be base64']);
    });
  });

  describe('malformed requests', () => {
    it('400 for malformed JSON', async () => {
      const { request } = await createTestAccount();
      const response = await request('POST', '/api/v1/documents', { body: '{"fileName": "a.pdf", ', headers: { 'Content-Type': 'application/json' } });
      expect(response.status).to.equal(400);
      expect(response.body).to.include({ error: 'validation_error' });
      expect(response.body.details).to.deep.equal(['body must be valid JSON']);
    });

    it('400 for a JSON body that is not an object', async () => {
      const { request } = await createTestAccount();
      const response = await request('POST', '/api/v1/documents', { json: ['fileName'] });
      expect(response.status).to.equal(400);
      expect(response.body.error).to.equal('validation_error');
    });

    it('415 for a text/plain body', async () => {
      const { request } = await createTestAccount();
      const response = await request('POST', '/api/v1/documents', { body: 'fileName=a.pdf', headers: { 'Content-Type': 'text/plain' } });
      expect(response.status).to.equal(415);
      expect(response.body.error).to.equal('unsupported_media_type');
    });

    it('413 for a body over the configured limit', async () => {
      const { request, system } = await createTestAccount();
      const limit = Math.ceil((25 * 1024 * 1024 * 4) / 3) + 64 * 1024;
      const huge = JSON.stringify({ fileName: 'big.pdf', fileSize: 10, content: 'A'.repeat(limit + 10) });
      const response = await request('POST', '/api/v1/documents', { body: huge, headers: { 'Content-Type': 'application/json' } });
      expect(response.status).to.equal(413);
      expect(response.body.error).to.equal('payload_too_large');
      expect(system.url).to.be.a('string');
    });

    it('413 for a multipart file over the limit', async () => {
      const { request } = await createTestAccount();
      const response = await request('POST', '/api/v1/documents', { body: multipart(Buffer.alloc(25 * 1024 * 1024 + 1, 0x20)) });
      expect(response.status).to.equal(413);
      expect(response.body.error).to.equal('payload_too_large');
    });
  });

  describe('monthly quota', () => {
    it('403 quota_exceeded on the 6th document of the month on free, naming limit and reset', async () => {
      const { request } = await createTestAccount('free');
      for (let i = 0; i < 5; i++) {
        const created = await request('POST', '/api/v1/documents', { json: { fileName: `d${i}.pdf`, fileSize: 10 } });
        expect(created.status).to.equal(201);
      }
      const sixth = await request('POST', '/api/v1/documents', { json: { fileName: 'd6.pdf', fileSize: 10 } });
      expect(sixth.status).to.equal(403);
      expect(sixth.body).to.include({ error: 'quota_exceeded', limit: 5, used: 5 });
      expect(sixth.body.resetsAt).to.match(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
      expect(sixth.body.message).to.contain('5 documents per month');
    });

    it('deleting a document does not give the quota back', async () => {
      const { request } = await createTestAccount('free');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await request('POST', '/api/v1/documents', { json: { fileName: `d${i}.pdf`, fileSize: 10 } })).body.id);
      expect((await request('DELETE', `/api/v1/documents/${ids[0]}`)).status).to.equal(204);
      expect((await request('POST', '/api/v1/documents', { json: { fileName: 'again.pdf', fileSize: 10 } })).status).to.equal(403);
    });

    it('concurrent creations never exceed the quota', async () => {
      const { request } = await createTestAccount('pro');
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => request('POST', '/api/v1/documents', { json: { fileName: `c${i}.pdf`, fileSize: 10 } })),
      );
      expect(results.filter((r) => r.status === 201)).to.have.length(25);
      expect(results.filter((r) => r.status === 403)).to.have.length(5);
    });
  });

  describe('rate limit', () => {
    it('carries X-RateLimit-* headers and answers the 11th request of the hour on free with 429', async () => {
      const { request } = await createTestAccount('free');
      let last;
      for (let i = 1; i <= 10; i++) {
        last = await request('POST', '/api/v1/documents', { json: {} });
        expect(last.status).to.equal(400);
        expect(last.headers.get('x-ratelimit-limit')).to.equal('10');
        expect(last.headers.get('x-ratelimit-remaining')).to.equal(String(10 - i));
      }
      const limited = await request('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: 1 } });
      expect(limited.status).to.equal(429);
      expect(limited.body.error).to.equal('rate_limit_exceeded');
      expect(limited.headers.get('x-ratelimit-remaining')).to.equal('0');
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 3600);
      const reset = Number(limited.headers.get('x-ratelimit-reset'));
      expect(reset).to.be.within(Math.floor(Date.now() / 1000), Math.ceil(Date.now() / 1000) + 3601);
    });
  });
});

describe('PUT /api/v1/documents/:id/file', () => {
  it('uploads the PDF of a metadata-only document, then refuses a second upload with 409', async () => {
    const { request } = await createTestAccount();
    const pdf = await makePdf(['x', 'y']);
    const created = await request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: pdf.length } });
    const uploaded = await request('PUT', `/api/v1/documents/${created.body.id}/file`, { body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    expect(uploaded.status).to.equal(200);
    expect(uploaded.body).to.include({ status: 'ready', pageCount: 2 });
    const again = await request('PUT', `/api/v1/documents/${created.body.id}/file`, { body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    expect(again.status).to.equal(409);
    expect(again.body.error).to.equal('conflict');
  });

  it('400 when the bytes do not match the declared size, 415 for another content type, 413 over the limit', async () => {
    const { request } = await createTestAccount();
    const pdf = await makePdf();
    const created = await request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: pdf.length + 10 } });
    const path = `/api/v1/documents/${created.body.id}/file`;
    const mismatch = await request('PUT', path, { body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    expect(mismatch.status).to.equal(400);
    expect(mismatch.body.details[0]).to.contain('fileSize must equal the size of the content');
    const wrongType = await request('PUT', path, { body: pdf, headers: { 'Content-Type': 'text/plain' } });
    expect(wrongType.status).to.equal(415);
    const tooBig = await request('PUT', path, { body: Buffer.alloc(25 * 1024 * 1024 + 1), headers: { 'Content-Type': 'application/pdf' } });
    expect(tooBig.status).to.equal(413);
    expect(tooBig.body.error).to.equal('payload_too_large');
  });
});

describe('GET /api/v1/documents', () => {
  it('pages newest first without duplicates or gaps', async () => {
    const { request } = await createTestAccount();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await request('POST', '/api/v1/documents', { json: { fileName: `p${i}.pdf`, fileSize: 10 } })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await request('GET', `/api/v1/documents?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).to.equal(200);
      seen.push(...page.body.data.map((d: { id: string }) => d.id));
      cursor = page.body.pagination.nextCursor;
      expect(page.body.pagination.hasMore).to.equal(cursor !== null);
    } while (cursor);
    expect(seen).to.deep.equal([...ids].reverse());
  });

  it('filters by status and creation time', async () => {
    const { request } = await createTestAccount();
    const pdf = await makePdf();
    await request('POST', '/api/v1/documents', { json: { fileName: 'waiting.pdf', fileSize: 10 } });
    const ready = await request('POST', '/api/v1/documents', { json: jsonDocument(pdf) });
    const byStatus = await request('GET', '/api/v1/documents?status=ready');
    expect(byStatus.body.data.map((d: { id: string }) => d.id)).to.deep.equal([ready.body.id]);
    const future = await request('GET', `/api/v1/documents?createdAfter=${new Date(Date.now() + 60_000).toISOString()}`);
    expect(future.body.data).to.deep.equal([]);
    const past = await request('GET', `/api/v1/documents?createdBefore=${new Date(Date.now() + 60_000).toISOString()}`);
    expect(past.body.data).to.have.length(2);
  });

  for (const query of ['limit=0', 'limit=1000', 'limit=abc', 'status=signed', 'createdAfter=yesterday', 'cursor=garbage']) {
    it(`400 for ?${query}`, async () => {
      const { request } = await createTestAccount();
      const response = await request('GET', `/api/v1/documents?${query}`);
      expect(response.status).to.equal(400);
      expect(response.body.error).to.equal('validation_error');
      expect(response.body.details).to.have.length(1);
    });
  }

  it('is also served at /api/documents', async () => {
    const { request } = await createTestAccount();
    await request('POST', '/api/documents', { json: { fileName: 'legacy.pdf', fileSize: 10 } });
    const legacy = await request('GET', '/api/documents');
    const v1 = await request('GET', '/api/v1/documents');
    expect(legacy.status).to.equal(200);
    expect(legacy.body).to.deep.equal(v1.body);
  });
});

describe('GET, PATCH, DELETE /api/v1/documents/:id and GET /:id/file', () => {
  it('retrieves, renames, downloads and deletes', async () => {
    const { request } = await createTestAccount();
    const pdf = await makePdf();
    const { body: created } = await request('POST', '/api/v1/documents', { json: jsonDocument(pdf, 'Q3 contract.pdf') });
    expect((await request('GET', `/api/v1/documents/${created.id}`)).body).to.deep.equal(created);
    const renamed = await request('PATCH', `/api/v1/documents/${created.id}`, { json: { fileName: 'Final.pdf' } });
    expect(renamed.body.fileName).to.equal('Final.pdf');
    const file = await request('GET', `/api/v1/documents/${created.id}/file`);
    expect(file.status).to.equal(200);
    expect(file.headers.get('content-type')).to.equal('application/pdf');
    expect(file.bytes.equals(pdf)).to.equal(true);
    expect((await request('DELETE', `/api/v1/documents/${created.id}`)).status).to.equal(204);
    expect((await request('GET', `/api/v1/documents/${created.id}`)).status).to.equal(404);
    expect((await request('DELETE', `/api/v1/documents/${created.id}`)).status).to.equal(404);
  });

  it('400 for a rename without a fileName', async () => {
    const { request } = await createTestAccount();
    const { body: created } = await request('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: 10 } });
    const response = await request('PATCH', `/api/v1/documents/${created.id}`, { json: { fileName: '' } });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal(['fileName is required']);
  });

  it('409 when downloading the file of a document that has none yet', async () => {
    const { request } = await createTestAccount();
    const { body: created } = await request('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: 10 } });
    expect((await request('GET', `/api/v1/documents/${created.id}/file`)).status).to.equal(409);
  });

  it('404 for an unknown id', async () => {
    const { request } = await createTestAccount();
    const response = await request('GET', '/api/v1/documents/doc_01jd8x3c6hf1z8k3q2v5n7m9pt');
    expect(response.status).to.equal(404);
    expect(response.body.error).to.equal('not_found');
  });

  it('404 for an id that is not a document id, for every method, even with an invalid body', async () => {
    const { request } = await createTestAccount();
    for (const id of ['garbage', 'wh_01jd8x3c6hf1z8k3q2v5n7m9pt', `doc_${'x'.repeat(300)}`]) {
      const path = `/api/v1/documents/${id}`;
      const attempts = [
        await request('GET', path),
        await request('PATCH', path, { json: {} }),
        await request('DELETE', path),
        await request('GET', `${path}/file`),
        await request('PUT', `${path}/file`, { body: Buffer.from('%PDF'), headers: { 'Content-Type': 'application/pdf' } }),
      ];
      for (const attempt of attempts) {
        expect(attempt.status, id).to.equal(404);
        expect(attempt.body).to.include({ error: 'not_found', message: 'Document not found.' });
      }
    }
  });

  it('another account’s document is 404 for every method', async () => {
    const owner = await createTestAccount();
    const stranger = await createTestAccount();
    const pdf = await makePdf();
    const { body: created } = await owner.request('POST', '/api/v1/documents', { json: { fileName: 'mine.pdf', fileSize: pdf.length } });
    const path = `/api/v1/documents/${created.id}`;
    const attempts = [
      await stranger.request('GET', path),
      await stranger.request('PATCH', path, { json: { fileName: 'stolen.pdf' } }),
      await stranger.request('DELETE', path),
      await stranger.request('GET', `${path}/file`),
      await stranger.request('PUT', `${path}/file`, { body: pdf, headers: { 'Content-Type': 'application/pdf' } }),
    ];
    for (const attempt of attempts) {
      expect(attempt.status).to.equal(404);
      expect(attempt.body.error).to.equal('not_found');
    }
    expect((await stranger.request('GET', '/api/v1/documents')).body.data).to.deep.equal([]);
    const still = await owner.request('GET', path);
    expect(still.body).to.include({ fileName: 'mine.pdf', status: 'awaiting_file' });
  });
});
