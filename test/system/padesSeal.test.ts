import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { stopSealThread } from '../../src/pdf/sealThread';
import { padesSealer, type SealInput } from '../../src/signingRequests/sealing';
import { makePdf } from '../support/pdfs';

// The seal is a PAdES baseline B-B signature (ETSI EN 319 142-1), as judged by tools that are not ours:
// poppler's pdfsig, qpdf, and pyHanko (scripts/provision.sh pyhanko) through test/support/pades_validate.py.
const root = path.resolve(__dirname, '../..');
const python = path.join(root, '.cache/pyhanko/bin/python');
const validator = path.join(root, 'test/support/pades_validate.py');

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

/** pyHanko's findings on a sealed file, `name: value` a line, trusting only `trustedRoot` (a PEM file) if given. */
function pyhanko(file: string, trustedRoot?: string): Record<string, string> {
  const result = spawnSync(python, [validator, file, ...(trustedRoot ? [trustedRoot] : [])], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`pades_validate.py failed: ${result.stderr}`);
  return Object.fromEntries(
    result.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/: (.*)/s, 2)),
  );
}

describe('the seal is a PAdES baseline B-B signature, by pdfsig, qpdf and pyHanko', function () {
  this.timeout(60_000);
  let dir: string;
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: path.join(dir, 'authority'), stdio: ['ignore', 'ignore', 'pipe'] });

  before(function () {
    if (!fs.existsSync(python)) throw new Error(`no ${python}: run bash scripts/provision.sh pyhanko (npm test does)`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-pades-'));
    fs.mkdirSync(path.join(dir, 'authority'));
  });
  after(async () => {
    await stopSealThread();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function seal(name: string, config: { SEAL_P12_PATH?: string; SEAL_P12_PASSWORD: string } = { SEAL_P12_PASSWORD: '' }) {
    const { pdf } = await padesSealer({ dataDir: dir, ...config }).seal(await input());
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
