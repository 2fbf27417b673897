import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { verifyWebhook } from 'signet/webhooks';
import { isAllowListed, isPublicAddress, parseAllowList, refusedAddress } from '../../src/webhooks/addressPolicy';
import { webhookLookup } from '../../src/webhooks/dnsLookup';
import { createWebhookPoster, parseRetryAfter } from '../../src/webhooks/http';
import { decryptSecret, encryptSecret, generateWebhookSecret } from '../../src/webhooks/secrets';
import { hexSignature, signatureHeaders } from '../../src/webhooks/signature';
import { startEndlessReceiver } from '../support/receiver';

describe('webhook signatures', () => {
  const secret = generateWebhookSecret();
  const body = '{"id":"evt_1","type":"document.created","timestamp":"2026-11-21T10:00:00.000Z","data":{"fileName":"é.pdf"}}';

  it('Standard Webhooks headers verify with the standardwebhooks library', () => {
    const headers = signatureHeaders([secret], 'evt_1', body);
    expect(() => new StandardWebhook(secret).verify(body, headers)).not.to.throw();
    expect(() => new StandardWebhook(generateWebhookSecret()).verify(body, headers)).to.throw();
    expect(() => new StandardWebhook(secret).verify(`${body} `, headers)).to.throw();
  });

  // A known answer, made by OpenSSL rather than by our signer (in bash, with $body the `body` above, é in UTF-8):
  //   printf '%s' "$body" | openssl dgst -sha256 -hmac 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
  const knownSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const knownSignature = '09438daf603d1f21436aeac9a2f73d3475e0567c8748cb2655e7e83a9fcc66b0';

  it('X-Service-Signature is the HMAC-SHA256 that OpenSSL computes, and verifyWebhook accepts it', () => {
    expect(hexSignature(knownSecret, body)).to.equal(knownSignature);
    expect(verifyWebhook(knownSecret, body, knownSignature)).to.equal(true);
    expect(verifyWebhook(knownSecret, body, knownSignature.toUpperCase())).to.equal(true); // hex in either case
    expect(verifyWebhook(knownSecret, body, `${knownSignature.slice(0, 63)}1`)).to.equal(false);
  });

  it('the known answer is what the openssl on this machine computes (where there is one)', function () {
    const openssl = spawnSync('openssl', ['dgst', '-sha256', '-hmac', knownSecret], { input: body, encoding: 'utf8' });
    if (openssl.error) this.skip(); // no openssl on PATH
    expect(openssl.stdout.trim()).to.match(new RegExp(`= ${knownSignature}$`));
  });

  it('verifyWebhook checks the length before comparing, and accepts either signature of a rotation', () => {
    const signature = hexSignature(secret, body);
    expect(verifyWebhook(secret, body, signature)).to.equal(true);
    expect(verifyWebhook(secret, Buffer.from(body), signature)).to.equal(true);
    expect(verifyWebhook(secret, body, signature.slice(0, 62))).to.equal(false);
    expect(verifyWebhook(secret, body, `${signature}00`)).to.equal(false);
    expect(verifyWebhook(secret, body, '')).to.equal(false);
    expect(verifyWebhook(secret, body, undefined)).to.equal(false);
    expect(verifyWebhook(secret, body, ['a', 'b'])).to.equal(false);
    expect(verifyWebhook('', body, signature)).to.equal(false);
    expect(verifyWebhook(secret, body, `${hexSignature('whsec_old', body)},${signature}`)).to.equal(true);
    expect(verifyWebhook(secret, `${body} `, signature)).to.equal(false);
  });
});

describe('webhook secrets at rest', () => {
  const key = Buffer.alloc(32, 7);
  it('round-trips with AES-256-GCM and refuses a tampered or wrongly keyed ciphertext', () => {
    const secret = generateWebhookSecret();
    const sealed = encryptSecret(key, secret);
    expect(sealed).not.to.contain(secret.slice(6));
    expect(encryptSecret(key, secret)).not.to.equal(sealed); // a fresh IV every time
    expect(decryptSecret(key, sealed)).to.equal(secret);
    const [iv, tag, ciphertext] = sealed.split('.');
    const flipped = Buffer.from(ciphertext, 'base64url');
    flipped[0] ^= 1;
    expect(() => decryptSecret(key, [iv, tag, flipped.toString('base64url')].join('.'))).to.throw();
    expect(() => decryptSecret(Buffer.alloc(32, 8), sealed)).to.throw();
  });
});

describe('webhook address policy', () => {
  const none = parseAllowList([]);
  it('refuses literal non-public addresses and localhost names, and allows public ones', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://10.0.0.1/',
      'https://172.16.0.1/',
      'https://192.168.0.1/',
      'https://169.254.169.254/',
      'https://[::1]/',
      'https://[fe80::1]/',
      'https://[fd00::1]/',
      'https://[::ffff:10.0.0.1]/',
      'https://0.0.0.0/',
      'https://100.64.0.1/',
      'https://localhost/',
      'https://a.localhost/',
      'https://2130706433/',
      // Forms that embed an IPv4 address, and names with a trailing dot.
      'https://[::a9fe:a9fe]/',
      'https://[::7f00:1]/',
      'https://[::ffff:7f00:1]/',
      'https://[64:ff9b::a00:1]/',
      'https://[2002:a00:1::]/',
      'https://[2001:0:a00:1::]/',
      'https://[::]/',
      'https://localhost./',
      'https://a.localhost../',
      'https://LOCALHOST./',
    ]) {
      expect(refusedAddress(new URL(url), none), url).to.match(/^url must not point to/);
    }
    for (const address of ['::a9fe:a9fe', '::ffff:169.254.169.254', 'fc00::1', '10.1.2.3', 'not an address', ''])
      expect(isPublicAddress(address), address).to.equal(false);
    for (const address of ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']) expect(isPublicAddress(address), address).to.equal(true);
    for (const url of ['https://93.184.215.14/', 'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/', 'https://example.com/']) {
      expect(refusedAddress(new URL(url), none), url).to.equal(undefined);
    }
  });

  it('lets the operator allow hosts by name, address or range', () => {
    const allowList = parseAllowList(['127.0.0.1', 'receiver.internal', '10.1.0.0/16', '::1']);
    for (const url of ['http://127.0.0.1:8080/', 'http://receiver.internal/', 'http://10.1.2.3/', 'http://[::1]/'])
      expect(isAllowListed(new URL(url), allowList), url).to.equal(true);
    for (const url of ['http://127.0.0.2/', 'http://localhost/', 'http://10.2.0.1/', 'http://other.internal/'])
      expect(isAllowListed(new URL(url), allowList), url).to.equal(false);
  });
});

describe('the webhook poster', () => {
  let server: http.Server;
  let hits = 0;
  before(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  it('never connects to loopback, private or link-local addresses unless allow-listed, literal or resolved', async () => {
    const { port } = server.address() as AddressInfo;
    const poster = await createWebhookPoster(parseAllowList([]), 2000);
    try {
      // Literal addresses are refused before any connection is attempted, so no packet leaves for 10.0.0.1.
      for (const url of [
        `http://127.0.0.1:${port}/`,
        `http://localhost:${port}/`,
        `http://[::1]:${port}/`,
        'http://10.0.0.1/',
        'http://169.254.169.254/latest/meta-data',
      ]) {
        const result = await poster.post(url, '{}', {});
        expect(result.statusCode, url).to.equal(null);
        expect(result.error, url).to.match(/^blocked: the address is not public/);
      }
      for (const url of [`http://[::7f00:1]:${port}/`, `http://[::ffff:7f00:1]:${port}/`, `http://localhost.:${port}/`]) {
        expect((await poster.post(url, '{}', {})).statusCode, url).to.equal(null);
      }
      expect(hits).to.equal(0);
    } finally {
      poster.close();
    }
    const allowed = await createWebhookPoster(parseAllowList(['127.0.0.1']), 2000);
    try {
      const result = await allowed.post(`http://127.0.0.1:${port}/`, '{}', {});
      expect(result).to.include({ statusCode: 200, responseBody: 'ok', error: null });
      expect(hits).to.equal(1);
    } finally {
      allowed.close();
    }
  });

  it('reads no more of a response than the delivery log keeps (1 KB), and closes its connection', async () => {
    const endless = await startEndlessReceiver();
    const poster = await createWebhookPoster(parseAllowList(['127.0.0.1']), 60_000);
    try {
      const result = await poster.post(endless.url, '{}', {});
      expect(result).to.include({ statusCode: 200, error: null, responseBody: endless.pattern.subarray(0, 1024).toString() });
      await endless.closed; // by the poster: the receiver never ends its body
      // What the receiver wrote before the close is what the connection's buffers held, not the body's length.
      expect(endless.state.written).to.be.below(64 * 1024 * 1024);
    } finally {
      poster.close();
      await endless.stop();
    }
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('120')).to.equal(120_000);
    expect(parseRetryAfter(undefined)).to.equal(null);
    expect(parseRetryAfter('soon')).to.equal(null);
    const inAMinute = parseRetryAfter(new Date(Date.now() + 60_000).toUTCString())!;
    expect(inAMinute).to.be.within(58_000, 60_000);
  });
});

describe('webhook host lookups', () => {
  it('a host whose name server never answers holds no other lookup of the process (not on the thread pool)', async function () {
    this.timeout(20_000);
    // A name server on loopback that reads every query and answers none.
    const blackhole = dgram.createSocket('udp4');
    let queries = 0;
    blackhole.on('message', () => queries++);
    await new Promise<void>((resolve) => blackhole.bind(0, '127.0.0.1', resolve));
    const resolver = new dns.Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([`127.0.0.1:${(blackhole.address() as AddressInfo).port}`]);
    const poster = await createWebhookPoster(parseAllowList([]), 10_000, webhookLookup(resolver));
    const order: string[] = [];
    try {
      // More hanging hosts than libuv lets DNS hold of its thread pool (2 of 4 threads).
      const posts = Array.from({ length: 8 }, (_, i) =>
        poster.post(`https://hook-${i}.unanswered.test/`, '{}', {}).then((result) => (order.push('post'), result)),
      );
      while (queries < 8) await new Promise((resolve) => setImmediate(resolve));
      const local = new Promise<void>((resolve) => dns.lookup('localhost', () => (order.push('localhost'), resolve())));
      const results = await Promise.all(posts);
      await local;
      expect(order[0]).to.equal('localhost');
      for (const result of results) expect(result.statusCode).to.equal(null);
      expect(results[0].error).to.match(/ENOTFOUND/);
    } finally {
      poster.close();
      blackhole.close();
    }
  });

  it('localhost and its subdomains are loopback without asking a name server, and refused', async () => {
    const resolver = new dns.Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers(['127.0.0.1:9']); // nothing listens: a query would fail, not answer loopback
    const poster = await createWebhookPoster(parseAllowList([]), 5000, webhookLookup(resolver));
    try {
      for (const host of ['localhost', 'LOCALHOST', 'a.b.localhost', 'localhost.']) {
        const result = await poster.post(`http://${host}:9/`, '{}', {});
        expect(result.error, host).to.match(/^blocked: the address is not public/);
      }
    } finally {
      poster.close();
    }
  });
});
