import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { startTestPki, type TestPki } from '../support/testPki';

// The test PKI the PAdES B-LTA tests lean on (test/support/testPki.ts), as openssl judges it: its TSAs,
// OCSP responder and CRL answer on loopback, and the certificates say what the tests rely on.
describe('the test PKI: certomancer on loopback, its TSA, OCSP and CRL as openssl judges them', function () {
  this.timeout(60_000);
  let pki: TestPki;
  let work: string;
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  /** openssl that may fail: its exit status and everything it printed. */
  const tryOpenssl = (...args: string[]) => {
    const result = spawnSync('openssl', args, { cwd: work, encoding: 'utf8' });
    return { status: result.status, output: result.stdout + result.stderr };
  };
  const pems = (text: string) => text.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n/g) ?? [];
  /** The certificate a .p12 holds for its key, into a PEM file. */
  const leafOf = (p12: { p12: string; password: string }, name: string) => {
    openssl('pkcs12', '-in', p12.p12, '-passin', `pass:${p12.password}`, '-nokeys', '-clcerts', '-out', name);
    return name;
  };

  before(async function () {
    pki = await startTestPki();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-pki-test-'));
    fs.writeFileSync(path.join(work, 'data.txt'), 'A contract');
    fs.writeFileSync(path.join(work, 'interm.pem'), pems(fs.readFileSync(pki.chainPem, 'utf8'))[0]!); // the issuing CA, first
  });
  after(async () => {
    await pki?.stop();
    for (const dir of [pki?.dir, work]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** An RFC 3161 query for data.txt (asking for the TSA's certificate) sent to `url`; `name`.tsq and `name`.tsr are left in `work`. */
  async function timestamp(url: string, name: string) {
    openssl('ts', '-query', '-data', 'data.txt', '-sha256', '-cert', '-out', `${name}.tsq`);
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: fs.readFileSync(path.join(work, `${name}.tsq`)),
      signal: AbortSignal.timeout(10_000),
    });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('application/timestamp-reply');
    fs.writeFileSync(path.join(work, `${name}.tsr`), Buffer.from(await response.arrayBuffer()));
  }
  const verifyTimestamp = (name: string) =>
    tryOpenssl('ts', '-verify', '-in', `${name}.tsr`, '-queryfile', `${name}.tsq`, '-CAfile', pki.rootPem, '-untrusted', pki.chainPem);
  /** The TSA's own certificate, from the token, into `name`-tsa.pem. */
  function tsaCertificate(name: string) {
    openssl('ts', '-reply', '-in', `${name}.tsr`, '-token_out', '-out', `${name}.token`);
    const certs = pems(openssl('pkcs7', '-inform', 'DER', '-in', `${name}.token`, '-print_certs'));
    fs.writeFileSync(
      path.join(work, `${name}-tsa.pem`),
      certs.find((pem) => !new crypto.X509Certificate(pem).ca)!,
    );
    return `${name}-tsa.pem`;
  }

  it('the TSA stamps at the current time, verified up to the root; its certificate: critical timeStamping, OCSP and CRL named', async () => {
    await timestamp(pki.tsaUrl, 'good');
    const verified = verifyTimestamp('good');
    expect(verified.output).to.contain('Verification: OK');
    expect(verified.status).to.equal(0);
    const at = openssl('ts', '-reply', '-in', 'good.tsr', '-text').match(/^Time stamp: (.*)$/m)![1];
    expect(Math.abs(Date.parse(at) - Date.now())).to.be.below(60_000);

    const extensions = openssl('x509', '-in', tsaCertificate('good'), '-noout', '-ext', 'extendedKeyUsage,authorityInfoAccess,crlDistributionPoints');
    expect(extensions).to.match(/X509v3 Extended Key Usage: critical\n\s+Time Stamping\n/);
    expect(extensions).to.contain(`OCSP - URI:${pki.ocspUrl}`);
    expect(extensions).to.contain(`URI:${pki.crlUrl}`);
  });

  it('the seal: its .p12 holds an RSA 2048 key, the certificate naming OCSP and the CRL, and its chain; the PEM key is that key', () => {
    const leaf = leafOf(pki.seal, 'seal.pem');
    expect(new crypto.X509Certificate(fs.readFileSync(path.join(work, leaf))).raw).to.deep.equal(
      new crypto.X509Certificate(fs.readFileSync(pki.sealCertPem)).raw,
    );
    const inP12 = openssl('pkcs12', '-in', pki.seal.p12, '-passin', `pass:${pki.seal.password}`, '-nokeys');
    expect(pems(inP12)).to.have.length(3);
    expect(openssl('verify', '-CAfile', pki.rootPem, '-untrusted', pki.chainPem, pki.sealCertPem)).to.contain(': OK');

    expect(openssl('x509', '-in', pki.sealCertPem, '-noout', '-ocsp_uri').trim()).to.equal(pki.ocspUrl);
    expect(openssl('x509', '-in', pki.sealCertPem, '-noout', '-ext', 'crlDistributionPoints')).to.contain(`URI:${pki.crlUrl}`);

    const key = fs.readFileSync(pki.sealKeyPem, 'utf8');
    expect(key).to.match(/^-----BEGIN PRIVATE KEY-----/); // PKCS#8
    expect(crypto.createPrivateKey(key).asymmetricKeyDetails).to.include({ modulusLength: 2048 });
    expect(openssl('pkey', '-in', pki.sealKeyPem, '-pubout')).to.equal(openssl('x509', '-in', pki.sealCertPem, '-noout', '-pubkey'));
  });

  it('OCSP: good for the seal, revoked for the revoked seal, in responses that verify up to the root', () => {
    const ocsp = (cert: string) => tryOpenssl('ocsp', '-issuer', 'interm.pem', '-cert', cert, '-url', pki.ocspUrl, '-CAfile', pki.rootPem);
    const good = ocsp(pki.sealCertPem);
    expect(good.output).to.contain('Response verify OK').and.contain(`${pki.sealCertPem}: good`);
    const revoked = ocsp(leafOf(pki.revokedSeal, 'revoked.pem'));
    expect(revoked.output).to.contain('Response verify OK').and.contain('revoked.pem: revoked');
  });

  it('the CRL, signed by the issuing CA, lists the revoked seal and not the seal', async () => {
    const response = await fetch(pki.crlUrl, { signal: AbortSignal.timeout(10_000) });
    expect(response.status).to.equal(200);
    fs.writeFileSync(path.join(work, 'interm.crl'), Buffer.from(await response.arrayBuffer()));
    expect(tryOpenssl('crl', '-inform', 'DER', '-in', 'interm.crl', '-CAfile', pki.chainPem, '-noout').output).to.contain('verify OK');
    const crl = openssl('crl', '-inform', 'DER', '-in', 'interm.crl', '-noout', '-text');
    const serial = (cert: string) => openssl('x509', '-in', cert, '-noout', '-serial').trim().replace('serial=', '');
    expect(crl).to.contain(`Serial Number: ${serial(leafOf(pki.revokedSeal, 'revoked.pem'))}\n`);
    expect(crl).not.to.contain(`Serial Number: ${serial(pki.sealCertPem)}\n`);

    // The issuing CA's own status, for a validator that checks the whole chain: the root's CRL, which it names.
    const rootCrlUrl = openssl('x509', '-in', 'interm.pem', '-noout', '-ext', 'crlDistributionPoints').match(/URI:(\S+)/)![1];
    const rootCrl = await fetch(rootCrlUrl, { signal: AbortSignal.timeout(10_000) });
    fs.writeFileSync(path.join(work, 'root.crl'), Buffer.from(await rootCrl.arrayBuffer()));
    expect(tryOpenssl('crl', '-inform', 'DER', '-in', 'root.crl', '-CAfile', pki.rootPem, '-noout').output).to.contain('verify OK');
  });

  it('the seal without revocation data names no OCSP responder and no CRL, under the same CA', () => {
    const leaf = leafOf(pki.sealNoRevocation, 'no-revocation.pem');
    expect(openssl('verify', '-CAfile', pki.rootPem, '-untrusted', pki.chainPem, leaf)).to.contain(': OK');
    const text = openssl('x509', '-in', leaf, '-noout', '-text');
    expect(text).not.to.contain('Authority Information Access');
    expect(text).not.to.contain('CRL Distribution Points');
  });

  it('the expired TSA: its certificate ended in the past; the untrusted TSA: its token does not verify against the root', async () => {
    await timestamp(pki.expiredTsaUrl, 'expired');
    const notAfter = openssl('x509', '-in', tsaCertificate('expired'), '-noout', '-enddate').trim().replace('notAfter=', '');
    expect(Date.parse(notAfter)).to.be.below(Date.now());
    expect(verifyTimestamp('expired')).to.include({ status: 1 }).and.have.property('output').that.contains('certificate has expired');

    await timestamp(pki.untrustedTsaUrl, 'untrusted');
    expect(verifyTimestamp('untrusted')).to.include({ status: 1 }).and.have.property('output').that.contains('unable to get local issuer certificate');
  });

  it('stop() closes it (connections refused), twice as well as once; start() opens it again, the same PKI', async () => {
    await pki.stop();
    await pki.stop();
    const refused = await fetch(pki.tsaUrl, { method: 'POST', signal: AbortSignal.timeout(5000) }).then(
      () => 'answered',
      (error: Error & { cause?: { code?: string } }) => error.cause?.code,
    );
    expect(refused).to.equal('ECONNREFUSED');

    await pki.start();
    await timestamp(pki.tsaUrl, 'again');
    expect(verifyTimestamp('again')).to.include({ status: 0 });
  });
});
