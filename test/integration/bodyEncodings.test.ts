import zlib from 'node:zlib';
import { expect } from 'chai';
import fc from 'fast-check';
import { signedUp } from '../support/consoleClient';
import { client } from '../support/http';
import { createSigningRequest, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

// Every Content-Encoding on every endpoint that reads a body: what we decode (gzip, deflate, br on JSON
// and forms) is a 400 when it does not decode; anything else is a 415. Never a 500.

const encodings = ['gzip', 'deflate', 'br', 'x-weird', 'compress', 'gzip, br', 'br, gzip', 'gzip,gzip', 'identity, gzip', 'GZIP', 'Br', '*'];
// What inflation (co-body's decoder) does with each encoding it knows.
const decoders: Record<string, (bytes: Buffer) => Buffer> = { gzip: zlib.unzipSync, deflate: zlib.unzipSync, br: zlib.brotliDecompressSync };
const encoders: Record<string, (bytes: Buffer) => Buffer> = { gzip: zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync };
const decodes = (encoding: string, bytes: Buffer) => {
  try {
    decoders[encoding](bytes);
    return true;
  } catch {
    return false;
  }
};
// Decodes, and no endpoint accepts it: a bit flipped in it (brotli has no checksum) may still decode.
const validBody = Buffer.from(JSON.stringify({ unknown: 'x'.repeat(300) }));

/** Random bytes; or, for an encoding we decode, a valid body in it cut short or with a bit flipped. */
function garbageFor(encoding: string) {
  const random = fc.uint8Array({ minLength: 1, maxLength: 4096 }).map((bytes) => Buffer.from(bytes));
  if (!(encoding in encoders)) return random;
  const encoded = encoders[encoding](validBody);
  const truncated = fc.integer({ min: 1, max: encoded.length - 1 }).map((length) => encoded.subarray(0, length));
  const flipped = fc.tuple(fc.nat({ max: encoded.length - 1 }), fc.integer({ min: 0, max: 7 })).map(([at, bit]) => {
    const copy = Buffer.from(encoded);
    copy[at] ^= 1 << bit;
    return copy;
  });
  return fc.oneof(random, truncated, flipped);
}

interface Endpoint {
  name: string;
  method: string;
  path: string;
  contentType: string;
  headers?: Record<string, string>;
  /** Whether a garbage body in a decoded encoding reaches a decoder (JSON, forms) or is refused unread. */
  decodes: boolean;
}

async function endpoints(): Promise<{ list: Endpoint[]; baseUrl: string; apiKey: string }> {
  const account = await createTestAccount();
  const baseUrl = account.system.url!;
  const bearer = { Authorization: `Bearer ${account.apiKey}` };
  const document = await account.request('POST', '/api/v1/documents', { json: { fileName: 'later.pdf', fileSize: 1000 } });
  const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] });
  const link = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/link`);
  const token = tokenOf(link.body.url);
  const { browser } = await signedUp(baseUrl);
  await browser.request('GET', '/app/settings/api-keys');
  const session = {
    Cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    'X-CSRF-Token': browser.csrf,
    Accept: 'application/json',
  };
  const list: Endpoint[] = [
    { name: 'API JSON', method: 'POST', path: '/api/v1/webhooks', contentType: 'application/json', headers: bearer, decodes: true },
    { name: 'API multipart', method: 'POST', path: '/api/v1/documents', contentType: 'multipart/form-data; boundary=x', headers: bearer, decodes: false },
    { name: 'API raw PDF', method: 'PUT', path: `/api/v1/documents/${document.body.id}/file`, contentType: 'application/pdf', headers: bearer, decodes: false },
    { name: 'console form', method: 'POST', path: '/app/settings/api-keys', contentType: 'application/x-www-form-urlencoded', headers: session, decodes: true },
    { name: 'console upload', method: 'POST', path: '/app/documents', contentType: 'multipart/form-data; boundary=x', headers: session, decodes: false },
    { name: 'signer JSON', method: 'POST', path: `/sign/${token}/sign`, contentType: 'application/json', decodes: true },
  ];
  return { list, baseUrl, apiKey: account.apiKey };
}

describe('request bodies in any Content-Encoding', () => {
  let setup: Awaited<ReturnType<typeof endpoints>>;
  before(async function () {
    this.timeout(60_000);
    setup = await endpoints();
  });

  it('Content-Encoding: br with a garbage body is 400, not 500', async () => {
    const request = client(setup.baseUrl, setup.apiKey);
    const response = await request('POST', '/api/v1/webhooks', {
      body: Buffer.from('definitely not brotli'),
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'br' },
    });
    expect(response.status).to.equal(400);
    expect(response.body).to.include({ error: 'validation_error' });
    expect(response.body.details).to.deep.equal(['body could not be decoded as its Content-Encoding says']);
  });

  it('garbage in every encoding, on every kind of endpoint, is a 400 or a 415 in the error body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...setup.list),
        fc.constantFrom(...encodings).chain((encoding) => fc.tuple(fc.constant(encoding), garbageFor(encoding))),
        async (endpoint, [encoding, garbage]) => {
          const request = client(setup.baseUrl);
          const response = await request(endpoint.method, endpoint.path, {
            body: garbage,
            headers: { ...endpoint.headers, 'Content-Type': endpoint.contentType, 'Content-Encoding': encoding },
          });
          const label = `${endpoint.name} ${encoding}: ${response.status} ${JSON.stringify(response.body)}`;
          if (!endpoint.decodes || !(encoding in decoders)) {
            expect([response.status, response.body.error], label).to.deep.equal([415, 'unsupported_media_type']);
            expect(response.body.message, label).to.be.a('string');
          } else if (!decodes(encoding, garbage)) {
            expect([response.status, response.body.error, response.body.details], label).to.deep.equal([
              400,
              'validation_error',
              ['body could not be decoded as its Content-Encoding says'],
            ]);
          } else {
            // Bytes that happen to decode are a body like any other, refused for what they say (the console
            // answers its own forms with their page).
            expect(response.status, label).to.be.within(400, 499);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a JSON body that does decode is read as usual, in each encoding we decode', async () => {
    const request = client(setup.baseUrl, setup.apiKey);
    const json = Buffer.from(JSON.stringify({ url: 'https://example.com/hooks', events: ['document.created'] }));
    for (const [encoding, encode] of Object.entries(encoders)) {
      const response = await request('POST', '/api/v1/webhooks', {
        body: encode(json),
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding },
      });
      expect(response.status, `${encoding}: ${JSON.stringify(response.body)}`).to.equal(201);
    }
  });
});
