import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { sealPdf } from '../../src/pdf/seal';
import { loadSealCertificate } from '../../src/pdf/sealCertificate';
import { makePdf } from '../support/pdfs';

// What the README tells a newcomer pdfsig says of the seal: of the development seal (self-signed,
// generated in DATA_DIR), that its issuer is unknown; of a configured certificate issued by an
// authority (SEAL_P12_PATH), the organisation's name, and that the issuer is not trusted until the
// reader's trust store holds that authority.
const root = path.resolve(__dirname, '../..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

describe('what pdfsig reports of the seal', function () {
  this.timeout(60_000);
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-seal-report-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function pdfsigOfSealed(certificate: { p12Path?: string; p12Password?: string }) {
    const file = path.join(dir, `sealed-${Date.now()}.pdf`);
    fs.writeFileSync(file, await sealPdf(await makePdf(['A contract']), await loadSealCertificate({ dataDir: dir, ...certificate })));
    return execFileSync('pdfsig', [file], { encoding: 'utf8' });
  }

  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

  it('the development seal: a valid signature whose issuer is unknown, as the README says', async () => {
    const report = await pdfsigOfSealed({});
    expect(report).to.contain('Signer Certificate Common Name: Signet document seal');
    expect(report).to.contain('Signature Validation: Signature is Valid.');
    expect(report).to.contain('Certificate Validation: Certificate issuer is unknown.');
    expect(readme).to.contain('`Certificate Validation: Certificate issuer is unknown.`');
  });

  it('a certificate an authority issued: the organisation’s name, an issuer not trusted until the reader trusts it, as the README says', async () => {
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=Example Authority', '-days', '2');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'seal.key', '-out', 'seal.csr', '-subj', '/O=Example Ltd/CN=Example Ltd document seal');
    openssl('x509', '-req', '-in', 'seal.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'seal.crt', '-days', '2');
    openssl('pkcs12', '-export', '-inkey', 'seal.key', '-in', 'seal.crt', '-certfile', 'ca.crt', '-out', 'seal.p12', '-passout', 'pass:secret');
    const report = await pdfsigOfSealed({ p12Path: path.join(dir, 'seal.p12'), p12Password: 'secret' });
    expect(report).to.contain('Signer Certificate Common Name: Example Ltd document seal');
    expect(report).to.contain('Signature Validation: Signature is Valid.');
    expect(report).to.contain("Certificate Validation: Certificate issuer isn't Trusted.");
    expect(readme).to.contain("`Certificate issuer isn't Trusted.`");
    expect(readme).to.contain('`Certificate is Trusted.`');
  });
});
