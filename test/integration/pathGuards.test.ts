import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import { createMailTransport, mailSender } from '../../src/mail';
import { testApp } from '../support/app';
import { signedUp } from '../support/consoleClient';
import { createSigningRequest, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

// One path matcher decides what a request reaches and what guards it: every spelling of a guarded path
// (case, trailing slash, `//`, dot segments, encoded slashes, backslashes) gets the guarded answer or a
// 404 in the usual error body, never what the guard protects.

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A raw request: fetch would resolve dot segments and backslashes before sending them. */
function send(port: number, path: string, { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, path, method, headers: { ...headers, ...(body ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * The app on a port of its own. With `remote`, every connection looks as if it came from that address:
 * the loopback check reads the connection's own address, which a client cannot choose in a header.
 */
async function startApp(remote?: string) {
  const { app } = await testApp();
  const server = http.createServer(app.callback());
  if (remote) server.on('connection', (socket) => Object.defineProperty(socket, 'remoteAddress', { value: remote }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(resolve)) };
}

const errorCode = (answer: Answer) => {
  if (!String(answer.headers['content-type']).includes('application/json')) return undefined;
  return (JSON.parse(answer.body.toString()) as { error?: string }).error;
};
/** What identifies an answer: its status, where it redirects, its error code, and its bytes. */
const fingerprint = (answer: Answer) => ({
  status: answer.status,
  location: answer.headers.location,
  error: errorCode(answer),
  sha256: crypto.createHash('sha256').update(answer.body).digest('hex'),
});

const flipCase = (text: string, flips: boolean[]) =>
  [...text].map((char, i) => (flips[i] ? (char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase()) : char)).join('');
const percentEncode = (char: string) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** Ways to spell one path otherwise, at the boundary before segment `at` or inside segment `at`. */
const decorations: Record<string, (segments: string[], at: number) => string> = {
  'as is': (segments) => `/${segments.join('/')}`,
  'trailing slash': (segments) => `/${segments.join('/')}/`,
  '//': (segments, at) => `/${[...segments.slice(0, at), '', ...segments.slice(at)].join('/')}`,
  '%2F': (segments, at) => joinAt(segments, at, '%2F'),
  '%2f': (segments, at) => joinAt(segments, at, '%2f'),
  '%5C': (segments, at) => joinAt(segments, at, '%5C'),
  backslash: (segments, at) => joinAt(segments, at, '\\'),
  '/./': (segments, at) => `/${[...segments.slice(0, at), '.', ...segments.slice(at)].join('/')}`,
  '/../x/..': (segments, at) => `/${[...segments.slice(0, at), 'x', '..', ...segments.slice(at)].join('/')}`,
  '%2e%2e': (segments, at) => `/${[...segments.slice(0, at), 'x', '%2e%2e', ...segments.slice(at)].join('/')}`,
  '%2E': (segments, at) => `/${[...segments.slice(0, at), '%2E', ...segments.slice(at)].join('/')}`,
  'encoded letter': (segments, at) => `/${segments.map((segment, i) => (i === at ? percentEncode(segment[0]) + segment.slice(1) : segment)).join('/')}`,
  ';param': (segments, at) => `/${segments.map((segment, i) => (i === at ? `${segment};x` : segment)).join('/')}`,
};
// Segments `at - 1` and `at` joined by `separator` instead of a slash (or the path led by it).
const joinAt = (segments: string[], at: number, separator: string) =>
  at === 0 ? `/${separator}${segments.join('/')}` : `/${segments.slice(0, at).join('/')}${separator}${segments.slice(at).join('/')}`;

/** Spellings of `path`: each segment in any case (but those in `keepCase`), with one decoration. */
function variantsOf(path: string, keepCase: string[] = []) {
  const segments = path.slice(1).split('/');
  return fc
    .tuple(
      fc.tuple(...segments.map((segment) => fc.array(fc.boolean(), { minLength: segment.length, maxLength: segment.length }))),
      fc.constantFrom(...Object.keys(decorations)),
      fc.nat({ max: segments.length - 1 }),
    )
    .map(([flips, decoration, at]) => {
      const spelled = segments.map((segment, i) => (keepCase.includes(segment) ? segment : flipCase(segment, flips[i])));
      return { decoration, path: decorations[decoration](spelled, at) };
    });
}

interface Guarded {
  /** The canonical path. */
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Segments whose case is theirs (a token). */
  keepCase?: string[];
  /** Whether the bytes must match too (not for an answer that changes between requests). */
  sameBytes?: boolean;
  /** The canonical answer: the guard's, or the public content. */
  expected: (answer: Answer) => void;
}

/** Every spelling of the path: the canonical answer exactly, or 404 in the usual error body. */
async function checkVariants(port: number, guarded: Guarded) {
  const options = { method: guarded.method, headers: guarded.headers, body: guarded.body };
  const canonical = await send(port, guarded.path, options);
  guarded.expected(canonical);
  await fc.assert(
    fc.asyncProperty(variantsOf(guarded.path, guarded.keepCase), async ({ decoration, path }) => {
      const answer = await send(port, path, options);
      const label = `${guarded.method ?? 'GET'} ${path} (${decoration})`;
      // Nothing reached: the error body's 404, or the signing page's own "link not valid" page (an HTML
      // 404), which is what /sign/<token>;x gets: that token is no token.
      if (answer.status === 404 && (errorCode(answer) === 'not_found' || String(answer.headers['content-type']).startsWith('text/html'))) return;
      const { sha256, ...rest } = fingerprint(answer);
      const { sha256: expectedSha256, ...expected } = fingerprint(canonical);
      expect(rest, label).to.deep.equal(expected);
      if (guarded.sameBytes !== false) expect(sha256, label).to.equal(expectedSha256);
    }),
    { numRuns: 40 },
  );
}

describe('path guards: every spelling of a guarded path gets the guarded answer or 404', () => {
  let remote: Awaited<ReturnType<typeof startApp>>;
  let local: Awaited<ReturnType<typeof startApp>>;
  before(async () => {
    remote = await startApp('203.0.113.9');
    local = await startApp();
  });
  after(async () => {
    await remote?.close();
    await local?.close();
  });

  const notFound = (answer: Answer) => {
    expect(answer.status).to.equal(404);
    expect(errorCode(answer)).to.equal('not_found');
  };
  const ok = (answer: Answer) => expect(answer.status, answer.body.toString().slice(0, 200)).to.equal(200);

  it('/DEV/MAIL, /Dev/Mail and /dev/Mail from another machine are 404, as /dev/mail is', async () => {
    for (const path of ['/dev/mail', '/DEV/MAIL', '/Dev/Mail', '/dev/Mail', '/dev/mail/', '/DEV/MAIL/1']) {
      const answer = await send(remote.port, path);
      expect(answer.status, path).to.equal(404);
      expect(errorCode(answer), path).to.equal('not_found');
    }
  });

  it('/dev/mail from another machine, in every spelling, is 404; from this one it is the outbox', async () => {
    const { db } = await createTestAccount();
    const { messageId } = await createMailTransport({}, db).send({
      idempotencyKey: `path-guards-${crypto.randomUUID()}`,
      to: 'ada@example.com',
      ...mailSender({ MAIL_FROM: 'Signet <no-reply@signet.local>' }),
      subject: 'A reset link',
      text: 'http://localhost:3000/app/password/reset/secret',
      html: '<p>secret</p>',
      attachments: [{ filename: 'a.pdf', contentType: 'application/pdf', content: Buffer.from('%PDF-1.7') }],
    });
    const id = messageId.replace('outbox-', '');
    for (const path of ['/dev/mail', `/dev/mail/${id}`, `/dev/mail/${id}/attachments/0`]) {
      ok(await send(local.port, path));
      await checkVariants(remote.port, { path, expected: notFound });
    }
  });

  it('/dev/mail through a proxy on this machine (X-Forwarded-For or Forwarded) is 404', async () => {
    notFound(await send(local.port, '/dev/mail', { headers: { 'X-Forwarded-For': '203.0.113.9' } }));
    notFound(await send(local.port, '/dev/mail', { headers: { Forwarded: 'for=203.0.113.9' } }));
  });

  it('/api/v1 without a key: 401 in every spelling that reaches it', async () => {
    const unauthorized = (answer: Answer) => expect([answer.status, errorCode(answer)]).to.deep.equal([401, 'unauthorized']);
    await checkVariants(remote.port, { path: '/api/v1/documents', expected: unauthorized });
    await checkVariants(remote.port, { path: '/api/documents', expected: unauthorized });
    await checkVariants(remote.port, {
      path: '/api/v1/webhooks',
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"url":"https://example.com"}',
      expected: unauthorized,
    });
  });

  it('console pages without a session redirect to the login in every spelling that reaches them', async () => {
    const toLogin = (answer: Answer) => expect([answer.status, answer.headers.location]).to.deep.equal([302, '/app/login']);
    await checkVariants(remote.port, { path: '/app/settings/api-keys', expected: toLogin });
    await checkVariants(remote.port, { path: '/app/documents', expected: toLogin });
  });

  it('a console form posted with a session but no CSRF token is 403 in every spelling', async () => {
    const { browser } = await signedUp(`http://127.0.0.1:${remote.port}`);
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    await checkVariants(remote.port, {
      path: '/app/settings/api-keys',
      method: 'POST',
      headers: { Cookie: cookie, Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'name=stolen',
      expected: (answer) => expect([answer.status, errorCode(answer)]).to.deep.equal([403, 'forbidden']),
    });
  });

  it('a signing link: its view in the spellings that reach it, and nothing for the token in another case', async () => {
    const account = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] });
    const link = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/link`);
    const token = tokenOf(link.body.url);
    // The view says whether the signer has viewed it, which the first request changes.
    await checkVariants(remote.port, { path: `/sign/${token}/request`, keepCase: [token], sameBytes: false, expected: ok });
    await checkVariants(remote.port, { path: `/sign/${token}`, keepCase: [token], expected: ok });
    const otherCase = flipCase(
      token,
      [...token].map(() => true),
    );
    for (const path of [`/sign/${otherCase}/request`, `/sign/${otherCase}/document`]) notFound(await send(remote.port, path));
  });

  it('public paths (docs, assets, health) answer the same or 404, and /metrics is not on the api port', async () => {
    for (const path of ['/docs', '/docs/swagger-ui.css', '/app/assets/console.css', '/sign-assets/signing.js', '/healthz']) {
      await checkVariants(remote.port, { path, expected: ok });
    }
    await checkVariants(remote.port, { path: '/metrics', expected: notFound });
  });
});
