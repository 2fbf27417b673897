import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { expect } from 'chai';
import { checkedRevocationProvider } from '../../src/pdf/revocation';
import { SealServiceError } from '../../src/pdf/sealServices';
import { checkedTimestampAuthority } from '../../src/pdf/timestampAuthority';
import { startTestPki } from '../support/testPki';

// The seal's timestamp and revocation clients against a real test PKI on loopback (certomancer), and
// against a server in between that answers as a hostile or broken one would: each such answer is
// refused with a SealServiceError naming the service's URL, and nothing is returned.

type Pki = Awaited<ReturnType<typeof startTestPki>>;
type Answer = (request: { body: Buffer; headers: http.IncomingHttpHeaders }, response: http.ServerResponse) => unknown;

const TIMEOUT_MS = 1500;
const sha256 = (bytes: Uint8Array | string) => new Uint8Array(crypto.createHash('sha256').update(bytes).digest());

function certificatesIn(pemFile: string): Uint8Array[] {
  const pem = fs.readFileSync(pemFile, 'latin1');
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g)].map(
    ([block]) => new Uint8Array(new crypto.X509Certificate(block).raw),
  );
}

/** The certificate of a PKCS#12 file (its own, not its chain's). */
function p12Certificate({ p12, password }: { p12: string; password: string }): Uint8Array {
  const open = (legacy: string[]) =>
    execFileSync('openssl', ['pkcs12', ...legacy, '-in', p12, '-nokeys', '-clcerts', '-passin', `pass:${password}`], { stdio: 'pipe' });
  let pem: Buffer;
  try {
    pem = open([]);
  } catch {
    pem = open(['-legacy']);
  }
  return new Uint8Array(new crypto.X509Certificate(pem).raw);
}

/** A server on loopback whose every answer is `answer`'s; `port` to take over a stopped service's. */
async function answeringServer(port = 0) {
  let answer: Answer = (_request, response) => response.writeHead(500).end();
  const headers: http.IncomingHttpHeaders[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      headers.push(request.headers);
      Promise.resolve(answer({ body: Buffer.concat(chunks), headers: request.headers }, response)).catch(() => response.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`,
    headers,
    answerWith: (next: Answer) => (answer = next),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function post(url: string, body: Buffer, contentType: string): Promise<Buffer> {
  const response = await fetch(url, {
    method: 'POST',
    body: new Uint8Array(body),
    headers: { 'content-type': contentType },
    signal: AbortSignal.timeout(10_000),
  });
  return Buffer.from(await response.arrayBuffer());
}

/** A port nothing listens on (taken, then given back). */
async function closedPortUrl(): Promise<string> {
  const server = await answeringServer();
  await server.close();
  return server.url;
}

/** The rejection from `promise`, which must be a SealServiceError. */
async function refusal(promise: Promise<unknown>): Promise<SealServiceError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  expect(outcome, 'it should have been refused').to.have.property('error');
  const { error } = outcome as { error: unknown };
  expect(error).to.be.instanceOf(SealServiceError);
  return error as SealServiceError;
}

function drainedOrClosed(response: http.ServerResponse) {
  return new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done).off('close', done);
      resolve();
    };
    response.on('drain', done).on('close', done);
  });
}

/** The bytes with one byte flipped inside `part` (found in them). */
function flippedWithin(bytes: Uint8Array, part: Uint8Array): Buffer {
  const copy = Buffer.from(bytes);
  const at = copy.indexOf(Buffer.from(part));
  expect(at, 'the part to flip').to.be.greaterThan(-1);
  copy[at + Math.floor(part.length / 2)] ^= 0x01;
  return copy;
}

describe('seal services: timestamp authority and revocation data, checked', function () {
  this.timeout(60_000);
  let pki: Pki;
  let roots: Uint8Array[];
  let known: Uint8Array[];
  let seal: Uint8Array;
  let revokedSeal: Uint8Array;
  let issuer: Uint8Array;

  before(async () => {
    pki = await startTestPki();
    roots = certificatesIn(pki.rootPem);
    known = [...roots, ...certificatesIn(pki.chainPem)];
    seal = p12Certificate(pki.seal);
    revokedSeal = p12Certificate(pki.revokedSeal);
    const sealX509 = new crypto.X509Certificate(seal);
    issuer = known.find((candidate) => sealX509.checkIssued(new crypto.X509Certificate(candidate)))!;
    expect(issuer, 'the seal certificate issuer in the test PKI').to.not.equal(undefined);
  });

  after(async () => {
    await pki?.stop();
    if (pki) fs.rmSync(pki.dir, { recursive: true, force: true });
  });

  describe('the timestamp authority', () => {
    const authority = (urls: string[], maxBytes?: number) => checkedTimestampAuthority({ urls, timeoutMs: TIMEOUT_MS, trustAnchors: roots, maxBytes });

    it('gives a token for the digest, stamped now, that openssl ts -verify accepts', async () => {
      const digest = sha256(crypto.randomBytes(32));
      const tsa = authority([pki.tsaUrl]);
      const token = await tsa.timestamp(digest, 'SHA-256');
      const signedData = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(new Uint8Array(token)).content });
      const tstInfo = pkijs.TSTInfo.fromBER(new Uint8Array(signedData.encapContentInfo.eContent!.getValue()));
      expect(Buffer.from(tstInfo.messageImprint.hashedMessage.valueBlock.valueHexView).equals(digest)).to.equal(true);
      expect(Math.abs(tstInfo.genTime.getTime() - Date.now())).to.be.lessThan(60_000);
      expect(tsa.lastAuthority).to.deep.include({ url: pki.tsaUrl });
      expect(tsa.lastAuthority!.genTime.getTime()).to.equal(tstInfo.genTime.getTime());

      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsa-'));
      try {
        fs.writeFileSync(path.join(dir, 'token.der'), token);
        const verify = ['ts', '-verify', '-digest', Buffer.from(digest).toString('hex'), '-in', path.join(dir, 'token.der'), '-token_in'];
        const output = execFileSync('openssl', [...verify, '-CAfile', pki.rootPem, '-untrusted', pki.chainPem], { stdio: 'pipe' }).toString();
        expect(output).to.match(/Verification: OK/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('goes on to the next authority when one refuses the connection, and says which one answered', async () => {
      const down = await closedPortUrl();
      const tsa = authority([down, pki.tsaUrl]);
      const token = await tsa.timestamp(sha256('fallback'), 'SHA-256');
      expect(token.byteLength).to.be.greaterThan(0);
      expect(tsa.lastAuthority?.url).to.equal(pki.tsaUrl);
    });

    it('throws a SealServiceError naming each authority when none answers', async () => {
      const [first, second] = [await closedPortUrl(), await closedPortUrl()];
      const error = await refusal(authority([first, second]).timestamp(sha256('none'), 'SHA-256'));
      expect(error.service).to.equal('timestamp authority');
      expect(error.url).to.equal(second);
      expect(error.message).to.include(first).and.include(second);
    });

    it('refuses an authority whose chain reaches no trusted root, and one whose certificate has expired', async () => {
      for (const url of [pki.untrustedTsaUrl, pki.expiredTsaUrl]) {
        const tsa = authority([url]);
        const error = await refusal(tsa.timestamp(sha256('trust'), 'SHA-256'));
        expect(error.url, url).to.equal(url);
        expect(tsa.lastAuthority, url).to.equal(undefined);
      }
      const untrusted = await refusal(authority([pki.untrustedTsaUrl]).timestamp(sha256('trust'), 'SHA-256'));
      expect(untrusted.message).to.match(/trusted root/);
      const expired = await refusal(authority([pki.expiredTsaUrl]).timestamp(sha256('trust'), 'SHA-256'));
      expect(expired.message).to.match(/not valid|validity/);
    });

    describe('hostile answers, through a server in front of the real authority', () => {
      let server: Awaited<ReturnType<typeof answeringServer>>;
      const forward = (body: Buffer) => post(pki.tsaUrl, body, 'application/timestamp-query');
      const reply = (response: http.ServerResponse, bytes: Uint8Array) =>
        response.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(Buffer.from(bytes));

      beforeEach(async () => (server = await answeringServer()));
      afterEach(() => server.close());

      /** Refused, naming the server's URL, and nothing kept as the authority that answered. */
      async function refused(digest = sha256(crypto.randomBytes(8))) {
        const tsa = authority([server.url]);
        const error = await refusal(tsa.timestamp(digest, 'SHA-256'));
        expect(error.url).to.equal(server.url);
        expect(error.message).to.include(server.url);
        expect(tsa.lastAuthority).to.equal(undefined);
        return error;
      }

      it('a token for another digest than the one asked', async () => {
        const digest = sha256('asked');
        server.answerWith(async ({ body }, response) => {
          const at = body.indexOf(Buffer.from(digest));
          reply(response, await forward(Buffer.concat([body.subarray(0, at), Buffer.from(sha256('other')), body.subarray(at + digest.length)])));
        });
        expect((await refused(digest)).message).to.match(/another digest/);
      });

      it('an earlier answer replayed (its nonce is not this request’s)', async () => {
        const digest = sha256('replayed');
        let earlier: Buffer | undefined;
        server.answerWith(async ({ body }, response) => {
          earlier ??= await forward(body);
          reply(response, earlier);
        });
        await authority([server.url]).timestamp(digest, 'SHA-256');
        expect((await refused(digest)).message).to.match(/nonce/);
      });

      it('a 50 MB answer: refused at maxBytes, quickly, without reading the rest', async () => {
        let sent = 0;
        server.answerWith(async (_request, response) => {
          response.writeHead(200, { 'content-type': 'application/timestamp-reply' });
          const chunk = Buffer.alloc(64 * 1024, 0x30);
          while (sent < 50 * 1024 * 1024 && !response.destroyed) {
            sent += chunk.length;
            if (!response.write(chunk)) await drainedOrClosed(response);
          }
          response.end();
        });
        const started = Date.now();
        expect((await refused()).message).to.match(/larger than 1048576 bytes/);
        expect(Date.now() - started).to.be.lessThan(TIMEOUT_MS);
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(sent).to.be.lessThan(16 * 1024 * 1024);
      });

      it('an answer that trickles a byte every 200 ms: refused at the timeout', async () => {
        server.answerWith((_request, response) => {
          response.writeHead(200, { 'content-type': 'application/timestamp-reply' });
          let left = 100;
          const timer = setInterval(() => (left-- > 0 && !response.destroyed ? response.write('0') : clearInterval(timer)), 200);
          response.once('close', () => clearInterval(timer));
        });
        const started = Date.now();
        expect((await refused()).message).to.match(/within 1500 ms/);
        expect(Date.now() - started).to.be.within(TIMEOUT_MS - 50, TIMEOUT_MS + 1000);
      });

      it('an answer that never comes: refused at the timeout', async () => {
        server.answerWith(() => undefined);
        const started = Date.now();
        expect((await refused()).message).to.match(/within 1500 ms/);
        expect(Date.now() - started).to.be.within(TIMEOUT_MS - 50, TIMEOUT_MS + 1000);
      });

      it('an HTTP status other than 200, garbage bytes, and a rejection (PKIStatus 2)', async () => {
        server.answerWith((_request, response) => response.writeHead(503).end());
        expect((await refused()).message).to.match(/HTTP 503/);
        server.answerWith((_request, response) => reply(response, crypto.randomBytes(2000)));
        await refused();
        const rejection = new pkijs.TimeStampResp({ status: new pkijs.PKIStatusInfo({ status: 2 }) }).toSchema().toBER(false);
        server.answerWith((_request, response) => reply(response, new Uint8Array(rejection)));
        expect((await refused()).message).to.match(/PKIStatus 2/);
      });

      it('a token whose signature was tampered with', async () => {
        server.answerWith(async ({ body }, response) => {
          const answer = await forward(body);
          const token = new pkijs.TimeStampResp({ schema: pkijs.TimeStampResp.fromBER(new Uint8Array(answer)).toSchema() }).timeStampToken!;
          const signature = new pkijs.SignedData({ schema: token.content }).signerInfos[0].signature.valueBlock.valueHexView;
          reply(response, flippedWithin(answer, signature));
        });
        expect((await refused()).message).to.match(/signature does not check/);
      });

      it('a token, signed by the authority, that names another certificate or none in its ESS signing-certificate attribute', async () => {
        const tsaKey = crypto.createPrivateKey(fs.readFileSync(path.join(pki.dir, 'keys/tsa.key.pem')));
        /** The authority's answer, its signed attributes changed by `change` and signed again with its own key. */
        const resigned = (answer: Buffer, change: (attributes: pkijs.Attribute[]) => pkijs.Attribute[]) => {
          const response = pkijs.TimeStampResp.fromBER(new Uint8Array(answer));
          const signedData = new pkijs.SignedData({ schema: response.timeStampToken!.content });
          const signerInfo = signedData.signerInfos[0];
          signerInfo.signedAttrs!.attributes = change(signerInfo.signedAttrs!.attributes);
          const signedBytes = new asn1js.Set({ value: signerInfo.signedAttrs!.attributes.map((attribute) => attribute.toSchema()) }).toBER(false);
          signerInfo.signature = new asn1js.OctetString({ valueHex: crypto.sign('sha256', Buffer.from(signedBytes), tsaKey) });
          response.timeStampToken = new pkijs.ContentInfo({ contentType: pkijs.ContentInfo.SIGNED_DATA, content: signedData.toSchema(true) });
          return new Uint8Array(response.toSchema().toBER(false));
        };
        const ess = ['1.2.840.113549.1.9.16.2.47', '1.2.840.113549.1.9.16.2.12'];
        const otherHash = (attribute: pkijs.Attribute) => {
          const hash = (attribute.values[0] as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence;
          const id = (hash.valueBlock.value[0] as asn1js.Sequence).valueBlock.value;
          const octets = id.find((part): part is asn1js.OctetString => part instanceof asn1js.OctetString)!;
          octets.valueBlock.valueHexView = new Uint8Array(octets.valueBlock.valueHexView.length).fill(7);
          return attribute;
        };
        const cases: [(attributes: pkijs.Attribute[]) => pkijs.Attribute[], RegExp][] = [
          [(attributes) => attributes.map((attribute) => (ess.includes(attribute.type) ? otherHash(attribute) : attribute)), /names another certificate/],
          [(attributes) => attributes.filter((attribute) => !ess.includes(attribute.type)), /does not name its authority certificate/],
        ];
        // The test's own re-signing is sound: unchanged, the token re-signed is accepted.
        server.answerWith(async ({ body }, response) =>
          reply(
            response,
            resigned(await forward(body), (attributes) => attributes),
          ),
        );
        await authority([server.url]).timestamp(sha256('resigned'), 'SHA-256');
        for (const [change, why] of cases) {
          server.answerWith(async ({ body }, response) => reply(response, resigned(await forward(body), change)));
          expect((await refused()).message).to.match(why);
        }
      });

      it('credentials in the URL go as HTTP Basic auth, and the password is in no message', async () => {
        server.answerWith((_request, response) => response.writeHead(401).end());
        const withCredentials = server.url.replace('http://', 'http://sealer:s3cret-Pa55@');
        const error = await refusal(authority([withCredentials]).timestamp(sha256('credentials'), 'SHA-256'));
        expect(server.headers[0].authorization).to.equal(`Basic ${Buffer.from('sealer:s3cret-Pa55').toString('base64')}`);
        expect(server.headers[0].host).to.not.include('s3cret');
        expect(error.message).to.include(server.url).and.not.include('s3cret');
        expect(error.url).to.equal(server.url);
        expect(String(error.stack)).to.not.include('s3cret');
      });
    });
  });

  describe('revocation data', () => {
    const provider = () => checkedRevocationProvider({ timeoutMs: TIMEOUT_MS, knownCertificates: known });

    /** While the test PKI is stopped, a server in its place (same port) answers 200 with what `run` says. */
    async function inPlaceOf(url: string, run: (answerWith: (bytes: Buffer) => void) => Promise<void>) {
      await pki.stop();
      const server = await answeringServer(Number(new URL(url).port));
      try {
        await run((bytes) => server.answerWith((_request, response) => response.writeHead(200).end(bytes)));
      } finally {
        await server.close();
        await pki.start();
      }
    }

    it('OCSP: good for the seal certificate, the whole OCSPResponse returned', async () => {
      const revocation = provider();
      const answer = await revocation.getOCSP!(seal, issuer);
      const response = pkijs.OCSPResponse.fromBER(new Uint8Array(answer!));
      expect(response.responseStatus.valueBlock.valueDec).to.equal(0);
      const basic = pkijs.BasicOCSPResponse.fromBER(new Uint8Array(response.responseBytes!.response.valueBlock.valueHexView));
      expect(basic.tbsResponseData.responses[0].certStatus.idBlock.tagNumber).to.equal(0);
      expect(revocation.problems).to.deep.equal([]);
    });

    it('OCSP: the revoked seal certificate throws, and the refusal is kept in problems', async () => {
      const revocation = provider();
      const error = await refusal(revocation.getOCSP!(revokedSeal, issuer));
      expect(error.service).to.equal('revocation data');
      expect(error.message).to.match(/^the certificate .* \(serial [0-9a-f]+\) was revoked on \d{4}-/);
      expect(revocation.problems).to.deep.equal([error]);
    });

    it('OCSP: an answer with a byte of its signature flipped, one about another certificate, one replayed', async () => {
      const answerFor = async (cert: Uint8Array) => Buffer.from((await provider().getOCSP!(cert, issuer))!);
      const good = await answerFor(seal);
      const basic = pkijs.BasicOCSPResponse.fromBER(
        new Uint8Array(pkijs.OCSPResponse.fromBER(new Uint8Array(good)).responseBytes!.response.valueBlock.valueHexView),
      );
      const echoesNonce = basic.tbsResponseData.responseExtensions?.some((extension) => extension.extnID === '1.3.6.1.5.5.7.48.1.2') ?? false;
      // The other certificate's answer: fetched directly (the provider refuses a revoked one).
      const other = await ocspAnswerDirect(revokedSeal);
      const cases: [Buffer, RegExp][] = [
        [flippedWithin(good, basic.signature.valueBlock.valueHexView), /not signed by the issuer/],
        [other, /not about/],
        ...(echoesNonce ? ([[good, /another nonce/]] as [Buffer, RegExp][]) : []),
      ];
      await inPlaceOf(ocspUrlOf(seal), async (answerWith) => {
        for (const [answer, why] of cases) {
          answerWith(answer);
          const revocation = provider();
          const error = await refusal(revocation.getOCSP!(seal, issuer));
          expect(error.message).to.match(why);
          expect(error.url).to.equal(ocspUrlOf(seal));
          expect(revocation.problems).to.deep.equal([error]);
        }
      });
    });

    it('OCSP: the responder down throws, and is kept in problems', async () => {
      await pki.stop();
      try {
        const revocation = provider();
        const error = await refusal(revocation.getOCSP!(seal, issuer));
        expect(error.url).to.equal(ocspUrlOf(seal));
        expect(revocation.problems).to.have.length(1);
      } finally {
        await pki.start();
      }
    });

    it('CRL: a valid CRL for the good certificate; the revoked one, listed, throws', async () => {
      const revocation = provider();
      const crl = pkijs.CertificateRevocationList.fromBER(new Uint8Array((await revocation.getCRL!(seal))!));
      expect(crl.revokedCertificates?.length ?? 0).to.be.greaterThan(0);
      expect(revocation.problems).to.deep.equal([]);
      const error = await refusal(revocation.getCRL!(revokedSeal));
      expect(error.message).to.match(/was revoked on/);
      expect(revocation.problems).to.deep.equal([error]);
    });

    it('CRL: one with a byte of its signature flipped is refused', async () => {
      const good = Buffer.from((await provider().getCRL!(seal))!);
      const signature = pkijs.CertificateRevocationList.fromBER(new Uint8Array(good)).signatureValue.valueBlock.valueHexView;
      await inPlaceOf(crlUrlOf(seal), async (answerWith) => {
        answerWith(flippedWithin(good, signature));
        const revocation = provider();
        expect((await refusal(revocation.getCRL!(seal))).message).to.match(/CRL signature does not check/);
        expect(revocation.problems).to.have.length(1);
      });
    });

    /** The responder's answer about `cert`, asked for without the provider's checks. */
    async function ocspAnswerDirect(cert: Uint8Array): Promise<Buffer> {
      const certID = new pkijs.CertID();
      await certID.createForCertificate(pkijs.Certificate.fromBER(new Uint8Array(cert)), {
        hashAlgorithm: 'SHA-1',
        issuerCertificate: pkijs.Certificate.fromBER(new Uint8Array(issuer)),
      });
      const request = new pkijs.OCSPRequest();
      request.tbsRequest.requestList = [new pkijs.Request({ reqCert: certID })];
      return post(ocspUrlOf(cert), Buffer.from(request.toSchema(true).toBER(false)), 'application/ocsp-request');
    }
  });
});

/** The OCSP URL (authority information access) of a certificate, as the provider reads it. */
function ocspUrlOf(cert: Uint8Array): string {
  return /OCSP - URI:(\S+)/.exec(new crypto.X509Certificate(cert).infoAccess ?? '')![1];
}

/** The first CRL distribution point of a certificate. */
function crlUrlOf(cert: Uint8Array): string {
  const text = execFileSync('openssl', ['x509', '-inform', 'DER', '-noout', '-ext', 'crlDistributionPoints'], { input: cert }).toString();
  return /URI:(\S+)/.exec(text)![1];
}
