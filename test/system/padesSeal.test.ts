import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as asn1js from 'asn1js';
import { expect } from 'chai';
import { DEFAULT_ALGORITHM_SUNSETS } from '../../src/config';
import { archiveDue } from '../../src/pdf/archiveDue';
import { archivePolicyOf } from '../../src/signingRequests/sealing';
import { stopSealThread } from '../../src/pdf/sealThread';
import { padesSealer, sealSettingsProblems, type SealConfig, type SealInput } from '../../src/signingRequests/sealing';
import { makePdf } from '../support/pdfs';
import { pyhanko, pyhankoPython as python } from '../support/pyhanko';
import { startTestPki, type TestPki } from '../support/testPki';

// The seal is a PAdES baseline B-B signature (ETSI EN 319 142-1), as judged by tools that are not ours:
// poppler's pdfsig, qpdf, and pyHanko (scripts/provision.sh pyhanko) through test/support/pades_validate.py.
const root = path.resolve(__dirname, '../..');

const signedAt = new Date('2026-03-04T10:20:30Z');
const input = async (): Promise<SealInput> => ({
  original: await makePdf(['A contract', 'Its annex']),
  signatures: [
    {
      signerName: 'Ada Lovelace',
      signerEmail: 'ada@example.com',
      signedAt,
      signature: { type: 'typed', value: 'Ada Lovelace' },
      fields: [{ page: 1, x: 50, y: 100, width: 200, height: 40, type: 'signature' }],
    },
  ],
  certificate: {
    requestId: 'req_01jabcdefghjkmnpqrstvwxyz0',
    title: 'Engine contract',
    document: { name: 'contract.pdf', pageCount: 2 },
    documents: [{ name: 'contract.pdf', sha256: '0'.repeat(64), pageCount: 2 }],
    events: [{ at: signedAt, type: 'request.completed', actor: 'system' }],
    signers: [{ name: 'Ada Lovelace', email: 'ada@example.com', ipAddress: '203.0.113.7', userAgent: 'curl/8.0', signedAt }],
  },
});

describe('the seal is a PAdES baseline B-B signature, by pdfsig, qpdf and pyHanko', function () {
  this.timeout(60_000);
  let dir: string;
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: path.join(dir, 'authority'), stdio: ['ignore', 'ignore', 'pipe'] });

  before(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-pades-'));
    fs.mkdirSync(path.join(dir, 'authority'));
  });
  after(async () => {
    await stopSealThread();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function seal(name: string, config: Partial<SealConfig> = {}) {
    const { pdf } = await padesSealer({
      dataDir: dir,
      SEAL_P12_PASSWORD: '',
      SEAL_TSA_URLS: '',
      SEAL_TSA_TIMEOUT_MS: 10_000,
      SEAL_ARCHIVE_RENEWAL_DAYS: 90,
      SEAL_ALGORITHM_SUNSETS: DEFAULT_ALGORITHM_SUNSETS,
      ...config,
    }).seal(await input());
    const file = path.join(dir, name);
    fs.writeFileSync(file, pdf);
    return file;
  }

  it('the development seal (self-signed): ETSI.CAdES.detached, valid and intact, B-B, and not trusted', async () => {
    const file = await seal('development.pdf');
    const report = execFileSync('pdfsig', [file], { encoding: 'utf8' });
    expect(report).to.contain('Signature Type: ETSI.CAdES.detached');
    expect(report).to.contain('Signature Validation: Signature is Valid.');
    expect(execFileSync('qpdf', ['--check', file], { encoding: 'utf8' })).to.contain('No syntax or stream encoding errors');

    const found = pyhanko(file);
    expect(found).to.include({
      SubFilter: '/ETSI.CAdES.detached',
      // no signing-time: PAdES keeps the claimed time in the signature dictionary's /M
      'signed attributes': 'content_type, message_digest, signing_certificate_v2',
      'PAdES baseline level': 'B-B',
      intact: 'True',
      valid: 'True',
      trusted: 'False',
      summary: 'INTACT:UNTRUSTED,UNTOUCHED',
      'AdES indication': 'INDETERMINATE',
      'AdES subindication': 'CHAIN_CONSTRAINTS_FAILURE',
    });
    expect(fs.readFileSync(file, 'latin1')).to.match(/\/M \(D:\d{14}Z\)/);
  });

  it('a certificate an authority issued, that authority trusted: B-B, trusted, and PASSED in AdES mode', async () => {
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=Example Authority', '-days', '2');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'seal.key', '-out', 'seal.csr', '-subj', '/O=Example Ltd/CN=Example Ltd document seal');
    // pyHanko trusts a signing certificate only for the key usage a seal states (non-repudiation).
    fs.writeFileSync(path.join(dir, 'authority/seal.ext'), 'keyUsage = critical, digitalSignature, nonRepudiation\n');
    openssl(
      'x509',
      '-req',
      '-in',
      'seal.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'seal.crt',
      '-days',
      '2',
      '-extfile',
      'seal.ext',
    );
    openssl('pkcs12', '-export', '-inkey', 'seal.key', '-in', 'seal.crt', '-certfile', 'ca.crt', '-out', 'seal.p12', '-passout', 'pass:secret');
    const file = await seal('issued.pdf', { SEAL_P12_PATH: path.join(dir, 'authority/seal.p12'), SEAL_P12_PASSWORD: 'secret' });
    expect(execFileSync('pdfsig', [file], { encoding: 'utf8' })).to.contain('Signature Type: ETSI.CAdES.detached');

    expect(pyhanko(file, path.join(dir, 'authority/ca.crt'))).to.include({
      'PAdES baseline level': 'B-B',
      summary: 'INTACT:TRUSTED,UNTOUCHED',
      'AdES indication': 'PASSED',
      'AdES subindication': 'OK',
    });
  });

  it('a sealed file changed afterwards: pyHanko finds it not intact', async () => {
    const file = await seal('changed.pdf');
    const bytes = fs.readFileSync(file);
    bytes.write('%PDF-1.6', 0, 'latin1'); // the header, which the signature covers and a reader still reads
    fs.writeFileSync(file, bytes);
    expect(pyhanko(file)).to.include({ intact: 'False', summary: 'INVALID' });
  });
});

// B-T, B-LT and B-LTA against a real PKI on loopback (certomancer: CA, TSA, OCSP, CRL). Each file is
// validated with the PKI's services switched off, so that it must carry what its validation needs.
describe('the seal with a timestamp authority: B-T, B-LT and B-LTA by pyHanko, pdfsig, qpdf and openssl, the PKI switched off', function () {
  this.timeout(120_000);
  let pki: TestPki;
  let dir: string;
  const sealed: Record<string, string> = {};

  before(async function () {
    pki = await startTestPki();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-pades-levels-'));
    for (const level of ['B-T', 'B-LT', 'B-LTA'] as const) {
      const { pdf } = await padesSealer(levelConfig(level)).seal(await input());
      sealed[level] = path.join(dir, `${level}.pdf`);
      fs.writeFileSync(sealed[level], pdf);
    }
    await pki.stop();
  });
  after(async () => {
    await stopSealThread();
    await pki?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const levelConfig = (level: SealConfig['SEAL_LEVEL'], overrides: Partial<SealConfig> = {}): SealConfig => ({
    dataDir: dir,
    SEAL_P12_PATH: pki.seal.p12,
    SEAL_P12_PASSWORD: pki.seal.password,
    SEAL_TSA_URLS: pki.tsaUrl,
    SEAL_TSA_TIMEOUT_MS: 10_000,
    SEAL_LEVEL: level,
    SEAL_TRUST_ANCHORS_PATH: pki.rootPem,
    SEAL_ARCHIVE_RENEWAL_DAYS: 90,
    SEAL_ALGORITHM_SUNSETS: DEFAULT_ALGORITHM_SUNSETS,
    ...overrides,
  });

  for (const level of ['B-T', 'B-LT', 'B-LTA'] as const) {
    it(`${level}: the level it claims, valid and trusted, validated from the file alone`, () => {
      const found = pyhanko(sealed[level], pki.rootPem);
      expect(found).to.include({
        SubFilter: '/ETSI.CAdES.detached',
        'signed attributes': 'content_type, message_digest, signing_certificate_v2',
        'PAdES baseline level': level,
        'document security store': String(level !== 'B-T').replace(/^./, (c) => c.toUpperCase()),
        'document timestamps': level === 'B-LTA' ? '1' : '0',
        intact: 'True',
        valid: 'True',
        trusted: 'True',
        'AdES indication': 'PASSED',
      });
      // Revocation data is required for every certificate, and nothing is fetched: B-T embeds none, B-LT and
      // B-LTA all of it; the archival process (EN 319 102-1 § 5.6) also needs the proof of existence that
      // only B-LTA's document timestamp gives the validation data.
      const offline = 'INTACT:TRUSTED,TIMESTAMP_TOKEN<INTACT:TRUSTED>';
      if (level === 'B-T') expect(found).not.to.have.property('offline with embedded revocation');
      else expect(found['offline with embedded revocation']).to.contain(offline);
      if (level === 'B-LTA') expect(found, found['AdES LTA failure']).to.include({ 'AdES LTA indication': 'PASSED' });
      else expect(found['AdES LTA indication']).to.equal('INDETERMINATE');
      const best = Date.parse(found['best signature time']);
      expect(Math.abs(best - Date.now())).to.be.below(10 * 60_000);
    });
  }

  it('pdfsig finds the seal valid beside the document timestamp, qpdf finds no damage, and openssl verifies the signature timestamp against the root', () => {
    // Debian 12's poppler (22.12) reads the document timestamp (ETSI.RFC3161) as a second signature it
    // cannot check ("unknown"); pyHanko above checks it.
    const report = spawnSync('pdfsig', [sealed['B-LTA']], { encoding: 'utf8' }).stdout;
    const [seal, timestamp] = report.split(/Signature #\d+:/).slice(1);
    expect(seal).to.contain('Signature Type: ETSI.CAdES.detached').and.contain('Signature Validation: Signature is Valid.');
    expect(timestamp).to.contain('Signer Certificate Common Name: Signet Test TSA');
    expect(execFileSync('qpdf', ['--check', sealed['B-LTA']], { encoding: 'utf8' })).to.contain('No syntax or stream encoding errors');

    const extracted = spawnSync(python, [path.join(root, 'test/support/pades_token.py'), sealed['B-LTA'], dir], { encoding: 'utf8' });
    expect(extracted.status, extracted.stderr).to.equal(0);
    const verified = spawnSync(
      'openssl',
      [
        'ts',
        '-verify',
        '-in',
        path.join(dir, 'token.der'),
        '-token_in',
        '-data',
        path.join(dir, 'signature.bin'),
        '-CAfile',
        pki.rootPem,
        '-untrusted',
        path.join(dir, 'tsa-certs.pem'),
      ],
      { encoding: 'utf8' },
    );
    expect(`${verified.stdout}${verified.stderr}`).to.contain('Verification: OK');
  });

  it('the bytes the seal signed never change: each level only appends to the one before', () => {
    const text = fs.readFileSync(sealed['B-LTA'], 'latin1');
    expect(text.match(/%%EOF/g)!.length).to.be.at.least(3); // the sealed file, its validation data, the document timestamp (and its own data)
    const [first] = [...text.matchAll(/\/ByteRange\s*\[\s*0\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)];
    const signedLength = Number(first[2]) + Number(first[3]);
    expect(signedLength).to.be.below(text.length);
  });

  it("B-LTA notes when its archive is due: the document timestamp's certificate end or its algorithms' weakening, less the margin, whatever its DER's last byte", () => {
    const bytes = fs.readFileSync(sealed['B-LTA']);
    const text = bytes.toString('latin1');
    const ranges = [...text.matchAll(/\/ByteRange\s*\[\s*0\s+(\d+)\s+(\d+)\s+\d+\s*\]/g)];
    const [, end] = ranges[ranges.length - 1].slice(1).map(Number);
    const tsaEnd = Date.parse(new crypto.X509Certificate(fs.readFileSync(path.join(pki.dir, 'out/interm/tsa.cert.pem'))).validTo);
    const byCertificate = archiveDue(bytes, { renewalMarginDays: 90, algorithmSunsets: {} });
    expect(Date.parse(byCertificate.renewAfter)).to.equal(tsaEnd - 90 * 86_400_000);
    expect(byCertificate.algorithms).to.have.members(['sha256', 'rsa-2048']);
    expect(byCertificate.because).to.equal(`its authority certificate ends ${new Date(tsaEnd).toISOString().slice(0, 10)}`);
    // The test TSA's certificate lasts until 2040; its RSA 2048 key, by NIST's table, until 2031.
    const byAlgorithm = archiveDue(bytes, archivePolicyOf({ SEAL_ARCHIVE_RENEWAL_DAYS: 90, SEAL_ALGORITHM_SUNSETS: DEFAULT_ALGORITHM_SUNSETS }));
    expect(byAlgorithm).to.include({
      renewAfter: new Date(Date.parse('2031-01-01') - 90 * 86_400_000).toISOString(),
      because: 'rsa-2048 is trusted until 2031-01-01',
    });
    // A token whose DER ends in a zero byte, as one in 256 does: the zero is the DER's, not the padding's.
    const length = asn1js.fromBER(Buffer.from(text.slice(end + 1, text.indexOf('>', end)), 'hex')).result.valueBeforeDecodeView.byteLength;
    bytes.write('00', end + 1 + 2 * (length - 1), 'latin1');
    expect(Date.parse(archiveDue(bytes, { renewalMarginDays: 0, algorithmSunsets: {} }).renewAfter)).to.equal(tsaEnd);
  });

  it('never seals with a revoked certificate, nor below its level: the seal fails, saying why, to be retried', async () => {
    await pki.start();
    try {
      const sealing = padesSealer(levelConfig('B-LTA', { SEAL_P12_PATH: pki.revokedSeal.p12, SEAL_P12_PASSWORD: pki.revokedSeal.password })).seal(
        await input(),
      );
      const error: Error = await sealing.then(
        () => expect.fail('sealed with a revoked certificate'),
        (failure: Error) => failure,
      );
      expect(error.name).to.equal('SealServiceError');
      expect(error.message).to.match(/revoked/);
      expect((error as Error & { service?: string }).service).to.equal('revocation data');
    } finally {
      await pki.stop();
    }
  });

  it('start-up refuses a level its configuration cannot reach, saying what is missing', async () => {
    expect(await sealSettingsProblems(levelConfig('B-LTA'))).to.deep.equal([]);
    const [noTsa] = await sealSettingsProblems(levelConfig('B-T', { SEAL_TSA_URLS: '' }));
    expect(noTsa).to.contain('SEAL_LEVEL=B-T needs a timestamp authority').and.contain('SEAL_TSA_URLS');
    const noRevocation = await sealSettingsProblems(
      levelConfig('B-LT', { SEAL_P12_PATH: pki.sealNoRevocation.p12, SEAL_P12_PASSWORD: pki.sealNoRevocation.password }),
    );
    expect(noRevocation.join('\n')).to.contain('names no OCSP responder and no CRL');
    const broken = path.join(dir, 'broken.p12');
    fs.writeFileSync(broken, 'not a PKCS#12 file');
    const [unopened] = await sealSettingsProblems(levelConfig('B-B', { SEAL_P12_PATH: broken }));
    expect(unopened).to.contain('the seal key does not open');
  });
});
