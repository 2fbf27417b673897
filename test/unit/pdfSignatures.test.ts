import { expect } from 'chai';
import { sealPdf } from '../../src/pdf/seal';
import { generateSelfSignedP12 } from '../../src/pdf/sealCertificate';
import { sealCertificateFingerprint } from '../../src/pdf/sealSigner';
import { makePdf } from '../support/pdfs';

// The signatures of a PDF as the inspector's children read them (src/pdf/pdfSignatures.mjs), on bytes
// made here: what the verification endpoint's answers are built from.
type ReadSignatures = typeof import('../../src/pdf/pdfSignatures.mjs').readSignatures;

describe('readSignatures', function () {
  this.timeout(20_000);
  let readSignatures: ReadSignatures;
  let sealed: Buffer;
  let fingerprint: string;

  before(async () => {
    ({ readSignatures } = await import('../../src/pdf/pdfSignatures.mjs'));
    const certificate = { p12: await generateSelfSignedP12(), password: '' };
    sealed = await sealPdf(await makePdf(['Sealed']), certificate);
    fingerprint = sealCertificateFingerprint(certificate);
  });

  it('reads a sealed PDF: who, when, the certificate’s fingerprint, intact over the whole file', () => {
    const { signatures } = readSignatures(sealed);
    expect(signatures).to.have.length(1);
    expect(signatures![0]).to.include({ signer: 'Signet document seal', certificateFingerprint: fingerprint, intact: true, coversWholeFile: true });
    expect(Date.now() - new Date(signatures![0].signedAt!).getTime()).to.be.within(0, 60_000);
  });

  it('no longer intact once a signed byte changed; not the whole file once bytes are appended', () => {
    const changed = Buffer.from(sealed);
    changed[20] ^= 1;
    expect(readSignatures(changed).signatures![0]).to.include({ intact: false, coversWholeFile: true });
    expect(readSignatures(Buffer.concat([sealed, Buffer.from('\n% appended\n')])).signatures![0]).to.include({ intact: true, coversWholeFile: false });
  });

  it('an unreadable signature (not CMS) is a signature that names no one and is not intact', () => {
    const contents = sealed.indexOf('/Contents <', 0, 'latin1') + '/Contents <'.length;
    const garbled = Buffer.from(sealed);
    garbled.write('DEADBEEF', contents, 'latin1');
    expect(readSignatures(garbled).signatures).to.deep.equal([
      { signer: null, signedAt: null, certificateFingerprint: null, intact: false, coversWholeFile: true },
    ]);
  });

  it('ignores a byte range that does not frame a hex string inside the file, and refuses more than 16 of them', async () => {
    const plain = await makePdf();
    const ranges = (count: number) => Array.from({ length: count }, (_, i) => `/ByteRange [0 ${i + 1} 99999999 10]`).join('\n');
    expect(readSignatures(Buffer.concat([plain, Buffer.from(`\n% ${ranges(3)}\n`)]))).to.deep.equal({ signatures: [] });
    expect(readSignatures(Buffer.concat([plain, Buffer.from(`\n% ${ranges(17)}\n`)]))).to.deep.equal({ problem: 'content holds more than 16 signatures' });
  });
});
