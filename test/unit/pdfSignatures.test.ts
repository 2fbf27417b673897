import crypto from 'node:crypto';
import fs from 'node:fs';
import { expect } from 'chai';
import { sealPdf } from '../../src/pdf/seal';
import { generateSelfSignedP12 } from '../../src/pdf/sealCertificate';
import { sealCertificateFingerprint } from '../../src/pdf/sealSigner';
import { makePdf } from '../support/pdfs';
import { startTestPki } from '../support/testPki';

// The signatures of a PDF as the inspector's children read them (src/pdf/pdfSignatures.mjs), on bytes
// made here: what the verification endpoint's answers are built from.
type ReadSignatures = typeof import('../../src/pdf/pdfSignatures.mjs').readSignatures;

/** The last /ByteRange of a file: [start, length, start, length]. */
const lastByteRange = (pdf: Buffer) => [...pdf.toString('latin1').matchAll(/\/ByteRange\s*\[([\d\s]+)\]/g)].at(-1)![1].trim().split(/\s+/).map(Number);

describe('readSignatures', function () {
  this.timeout(20_000);
  let readSignatures: ReadSignatures;
  let sealed: Buffer;
  let fingerprint: string;

  before(async () => {
    ({ readSignatures } = await import('../../src/pdf/pdfSignatures.mjs'));
    const certificate = { p12: await generateSelfSignedP12(), password: '' };
    sealed = await sealPdf(await makePdf(['Sealed']), certificate);
    fingerprint = await sealCertificateFingerprint(certificate);
  });

  it('reads a sealed PDF (B-B): a signature, who, when, the certificate’s fingerprint, intact over the whole file, no timestamp, no validation data', () => {
    const { signatures, validationData } = readSignatures(sealed);
    expect(signatures).to.have.length(1);
    expect(signatures![0]).to.include({
      kind: 'signature',
      signer: 'Signet document seal',
      certificateFingerprint: fingerprint,
      intact: true,
      coversWholeFile: true,
      timestamp: null,
    });
    expect(Date.now() - new Date(signatures![0].signedAt!).getTime()).to.be.within(0, 60_000);
    expect(new Date(signatures![0].certificateNotAfter!).getTime()).to.be.above(Date.now());
    expect(validationData).to.equal(false);
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
    expect(readSignatures(garbled)).to.deep.equal({
      signatures: [
        {
          kind: 'signature',
          signer: null,
          signedAt: null,
          certificateFingerprint: null,
          certificateNotAfter: null,
          intact: false,
          coversWholeFile: true,
          timestamp: null,
        },
      ],
      validationData: false,
    });
  });

  it('validationData: the catalog the last trailer names, or an object of /Type /Catalog, names a /DSS; a /DSS elsewhere is none', () => {
    const root = [...sealed.toString('latin1').matchAll(/\/Root (\d+ \d+) R/g)].at(-1)![1];
    const appended = (text: string) => readSignatures(Buffer.concat([sealed, Buffer.from(text, 'latin1')])).validationData;
    expect(appended(`\n${root} obj\n<< /Type /Catalog /Pages 1 0 R /DSS 99 0 R >>\nendobj\n`)).to.equal(true);
    expect(appended(`\n${root} obj\n<< /Pages 1 0 R /DSS << /Certs [] >> >>\nendobj\n`)).to.equal(true);
    expect(appended(`\n98 0 obj\n<< /Type /Catalog /DSS 99 0 R >>\nendobj\n`)).to.equal(true);
    expect(appended(`\n98 0 obj\n<< /Type /Annot /DSS 99 0 R >>\nendobj\n`)).to.equal(false);
    expect(appended(`\n98 0 obj\n<< /Type /CatalogX >>\nendobj\n99 0 obj\n<< /DSS 99 0 R >>\nendobj\n`)).to.equal(false);
  });

  it('ignores a byte range that does not frame a hex string inside the file, and refuses more than 16 of them', async () => {
    const plain = await makePdf();
    const ranges = (count: number) => Array.from({ length: count }, (_, i) => `/ByteRange [0 ${i + 1} 99999999 10]`).join('\n');
    expect(readSignatures(Buffer.concat([plain, Buffer.from(`\n% ${ranges(3)}\n`)]))).to.deep.equal({ signatures: [], validationData: false });
    expect(readSignatures(Buffer.concat([plain, Buffer.from(`\n% ${ranges(17)}\n`)]))).to.deep.equal({ problem: 'content holds more than 16 signatures' });
  });
});

// B-T and above need a real timestamp authority and OCSP responder: the test PKI (certomancer, on loopback).
describe('readSignatures: a seal at B-LTA (the test PKI)', function () {
  this.timeout(120_000);
  let readSignatures: ReadSignatures;
  let pki: Awaited<ReturnType<typeof startTestPki>>;
  let sealed: Buffer;
  /** The test PKI's seal, and its TSA at `level`, the seal's root the one anchor. */
  const sealSettings = (level: 'B-T' | 'B-LTA') => ({
    certificate: { p12: fs.readFileSync(pki.seal.p12), password: pki.seal.password },
    timestamping: {
      level,
      tsaUrls: [pki.tsaUrl],
      timeoutMs: 10_000,
      trustAnchors: [new crypto.X509Certificate(fs.readFileSync(pki.rootPem)).raw],
      renewalMarginDays: 90,
      algorithmSunsets: {},
    },
  });

  before(async function () {
    this.timeout(180_000);
    ({ readSignatures } = await import('../../src/pdf/pdfSignatures.mjs'));
    pki = await startTestPki();
    const { certificate, timestamping } = sealSettings('B-LTA');
    sealed = await sealPdf(await makePdf(['Sealed']), certificate, timestamping);
  });
  after(async () => {
    await pki?.stop();
    if (pki) fs.rmSync(pki.dir, { recursive: true, force: true });
  });

  it('the signature with an intact signature timestamp by the TSA, then an intact document timestamp, and validation data', () => {
    const { signatures, validationData } = readSignatures(sealed);
    expect(validationData).to.equal(true);
    expect(signatures).to.have.length(2);
    const [signature, archive] = signatures!;
    expect(signature).to.include({ kind: 'signature', signer: 'Example Ltd document seal', intact: true, coversWholeFile: false });
    expect(signature.timestamp).to.include({ authority: 'Signet Test TSA', intact: true });
    expect(new Date(signature.timestamp!.time).getTime()).to.be.closeTo(Date.now(), 120_000);
    expect(archive).to.include({ kind: 'document_timestamp', signer: 'Signet Test TSA', intact: true, timestamp: null });
    expect(new Date(archive.signedAt!).getTime()).to.be.at.least(new Date(signature.timestamp!.time).getTime());
  });

  it('the document timestamp covers the whole file but the DSS update @libpdf/core appends after it (its own chain’s validation data)', () => {
    const [, firstLength, second, secondLength] = lastByteRange(sealed);
    const after = sealed.subarray(second + secondLength).toString('latin1');
    expect(readSignatures(sealed).signatures![1].coversWholeFile).to.equal(false);
    expect(after).to.match(/\/DSS \d+ 0 R/);
    expect(after).not.to.contain('/ByteRange');
    expect(firstLength).to.be.below(second);
  });

  it('a byte flipped inside the document timestamp’s signed range, past the signature’s: the document timestamp is no longer intact, the signature still is', () => {
    const [, firstLength] = lastByteRange(sealed);
    const [, signatureFirst, signatureSecond, signatureSecondLength] = [...sealed.toString('latin1').matchAll(/\/ByteRange\s*\[([\d\s]+)\]/g)][0][1]
      .trim()
      .split(/\s+/)
      .map(Number);
    expect(signatureFirst).to.be.below(firstLength);
    // A byte of a stream in the first DSS update: between the signature's end and the document timestamp's /Contents.
    const stream = sealed.indexOf('stream', signatureSecond + signatureSecondLength, 'latin1');
    expect(stream).to.be.within(signatureSecond + signatureSecondLength, firstLength - 100);
    const changed = Buffer.from(sealed);
    changed[stream + 20] ^= 1;
    const [signature, archive] = readSignatures(changed).signatures!;
    expect(signature).to.include({ kind: 'signature', intact: true });
    expect(signature.timestamp).to.include({ intact: true });
    expect(archive).to.include({ kind: 'document_timestamp', intact: false });
  });

  describe('a signature timestamp (B-T)', () => {
    let bt: Buffer;
    let hexAt: number;
    before(async () => {
      const { certificate, timestamping } = sealSettings('B-T');
      bt = await sealPdf(await makePdf(['Sealed']), certificate, timestamping);
      hexAt = lastByteRange(bt)[1] + 1; // the /Contents hex string, after its <
    });
    /** The file with one hex digit of its /Contents changed, `at` characters into the hex. */
    const withDigitChanged = (at: number) => {
      const changed = Buffer.from(bt);
      changed[hexAt + at] = changed[hexAt + at] === 0x30 ? 0x31 : 0x30;
      return changed;
    };
    // In the DER: … signature OCTET STRING, then [1] unsignedAttrs { SEQUENCE { OID id-aa-signatureTimeStampToken, … } }.
    const tokenAttribute = () => bt.toString('latin1', hexAt).toLowerCase().indexOf('060b2a864886f70d010910020e');

    it('intact, by the TSA, and no validation data', () => {
      const { signatures, validationData } = readSignatures(bt);
      expect(signatures![0]).to.include({ kind: 'signature', intact: true, coversWholeFile: true });
      expect(signatures![0].timestamp).to.include({ authority: 'Signet Test TSA', intact: true });
      expect(validationData).to.equal(false);
    });

    it('vouches for this signature value only: with the value changed, neither checks out', () => {
      // The value's last byte, before `a1 82 LL LL 30 82 LL LL` (16 hex digits) and the OID.
      const [signature] = readSignatures(withDigitChanged(tokenAttribute() - 17)).signatures!;
      expect(signature).to.include({ intact: false });
      expect(signature.timestamp).to.include({ authority: 'Signet Test TSA', intact: false });
    });

    it('its own signature must check out: a changed TSTInfo (its genTime) fails the token, not the seal’s signature it is unsigned beside', () => {
      const tail = bt.toString('latin1', hexAt + tokenAttribute()).toLowerCase();
      const genTime = tail.search(/18(0f|1[0-9a-f])3230/); // GeneralizedTime "20…", the first in the token: its TSTInfo's
      expect(genTime).to.be.above(0);
      const [signature] = readSignatures(withDigitChanged(tokenAttribute() + genTime + 4 + 2 * 13)).signatures!; // a digit of its seconds
      expect(signature).to.include({ intact: true });
      expect(signature.timestamp).to.include({ intact: false });
    });
  });
});
