import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { PDFDocument } from 'pdf-lib';
import { auditActionLabels } from '../../src/domain/auditActions';
import { appendCertificatePage } from '../../src/pdf/certificatePage';

const at = new Date('2026-12-01T23:04:05Z');

type Info = Parameters<typeof appendCertificatePage>[1];

async function certificateText(signers: Info['signers'], seal?: Info['seal'], sentBy?: string) {
  const pdf = await PDFDocument.create();
  await appendCertificatePage(pdf, {
    requestId: 'req_01jabcdefghjkmnpqrstvwxyz0',
    title: 'Engine contract',
    sentBy,
    document: { name: 'contract.pdf', sha256: '0'.repeat(64) },
    documents: [{ name: 'contract.pdf', sha256: '0'.repeat(64) }],
    events: Object.keys(auditActionLabels).map((type) => ({ at, type, actor: 'ada@example.com' })),
    signers,
    seal,
  });
  return execFileSync('pdftotext', ['-layout', '-', '-'], { input: Buffer.from(await pdf.save()) }).toString();
}

describe('the certificate of completion', () => {
  it('names every audit step by its label, not its code', async () => {
    const text = await certificateText([{ name: 'Ada Lovelace', email: 'ada@example.com', viewedAt: at, signedAt: at }]);
    for (const label of Object.values(auditActionLabels)) expect(text).to.match(new RegExp(`2026-12-01 23:04:05 UTC\\s+${label}\\s+ada@example.com`));
    expect(text).to.not.match(/invitation_sent|verification_/);
  });

  it('names who sent the request, when it is known (requests sent before members are not)', async () => {
    const signers = [{ name: 'Ada Lovelace', email: 'ada@example.com' }];
    expect(await certificateText(signers, undefined, 'API key “erp” of dana@example.com')).to.match(/Sent by\s+API key “erp” of dana@example.com/);
    expect(await certificateText(signers)).to.not.contain('Sent by');
  });

  it('says a signer who never opened the documents did not, instead of a dash', async () => {
    const text = await certificateText([{ name: 'Grace Hopper', email: 'grace@example.com' }]);
    expect(text)
      .to.match(/Viewed at\s+Not opened/)
      .and.match(/Signed at\s+Not signed/);
    expect(text)
      .to.not.match(/\s-\s*$/m)
      .and.not.contain('IP address');
  });

  it('says what the seal proves: a B-B signature, whose certificate is self-signed or issued, and times of the server’s clock', async () => {
    const signer = { name: 'Ada Lovelace', email: 'ada@example.com', signedAt: at };
    const own = (
      await certificateText([signer], { subject: 'Signet development seal', issuer: 'Signet development seal', selfSigned: true, level: 'B-B' })
    ).replace(/\s+/g, ' ');
    expect(own)
      .to.contain('Signature PAdES baseline B-B (ETSI.CAdES.detached) over this whole file')
      .and.contain('Certificate Signet development seal, self-signed: no public trust store knows it')
      .and.contain("Times Signet's server clock, in UTC: no trusted timestamp authority vouches for them");
    const issued = (await certificateText([signer], { subject: 'Acme Ltd seal', issuer: 'Example Trust CA', selfSigned: false, level: 'B-B' })).replace(
      /\s+/g,
      ' ',
    );
    expect(issued).to.contain('Certificate Acme Ltd seal, issued by Example Trust CA').and.not.contain('self-signed');
  });

  it('at B-LTA says the seal carries a trusted timestamp and its validation data, and the events keep the server’s clock', async () => {
    const signer = { name: 'Ada Lovelace', email: 'ada@example.com', signedAt: at };
    const text = (await certificateText([signer], { subject: 'Acme Ltd seal', issuer: 'Example Trust CA', selfSigned: false, level: 'B-LTA' })).replace(
      /\s+/g,
      ' ',
    );
    expect(text)
      .to.contain('Signature PAdES baseline B-LTA (ETSI.CAdES.detached) over this whole file')
      .and.contain('the seal: a trusted RFC 3161 timestamp in its signature')
      .and.contain('Validation data the certificates and revocation answers the seal needs, embedded in this file, and a document timestamp over them')
      .and.not.contain('no trusted timestamp authority');
  });
});
