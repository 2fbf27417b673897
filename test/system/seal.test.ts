import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { expect } from 'chai';
import { PDFDocument } from 'pdf-lib';
import { PNG } from 'pngjs';
import { sealDocument, sha256Of, type SealDocumentInput } from '../../src/pdf/seal';
import { loadSealCertificate } from '../../src/pdf/sealCertificate';
import type { P12KeySource, SealCertificate } from '../../src/pdf/sealKeySource';
import { sealDocumentOnThread, stopSealThread } from '../../src/pdf/sealThread';
import { type SignatureStamp, stampSignatures } from '../../src/pdf/stamp';
import { makeLargePdf, makePdf } from '../support/pdfs';

/** A real PNG: a dark diagonal stroke on white, width x height pixels, 8-bit greyscale. */
function makePng(width = 40, height = 12): string {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // bit depth 8, greyscale, deflate, no filter, no interlace
  const rows = Array.from({ length: height }, (_, y) =>
    Buffer.from([0, ...Array.from({ length: width }, (_, x) => (Math.abs(x - (y * width) / height) < 2 ? 0 : 255))]),
  );
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return `data:image/png;base64,${png.toString('base64')}`;
}

/** How many dark pixels the first occurrence of a word covers on its page, as poppler draws it (pdftotext -bbox, pdftoppm). */
function inkOfWord(file: string, word: string): number {
  const pages = execFileSync('pdftotext', ['-bbox', file, '-'], { encoding: 'utf8' }).split('<page ').slice(1);
  const page = pages.findIndex((html) => html.includes(`>${word}</word>`));
  const box = new RegExp(`xMin="([\\d.]+)" yMin="([\\d.]+)" xMax="([\\d.]+)" yMax="([\\d.]+)">${word}</word>`).exec(pages[page])!;
  const [xMin, yMin, xMax, yMax] = box.slice(1).map(Number);
  const prefix = path.join(path.dirname(file), `ink-${page}`);
  const crop = ['-x', String(Math.floor(xMin)), '-y', String(Math.floor(yMin)), '-W', String(Math.ceil(xMax - xMin)), '-H', String(Math.ceil(yMax - yMin))];
  execFileSync('pdftoppm', ['-png', '-r', '72', '-f', String(page + 1), '-l', String(page + 1), '-singlefile', ...crop, file, prefix]);
  const { data } = PNG.sync.read(fs.readFileSync(`${prefix}.png`));
  let dark = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i] + data[i + 1] + data[i + 2] < 600) dark++;
  return dark;
}

function pdfsig(file: string) {
  const result = spawnSync('pdfsig', [file], { encoding: 'utf8' });
  return `${result.stdout}${result.stderr}`;
}

function input(original: Buffer, sealCertificate: SealCertificate, overrides: Partial<SealDocumentInput> = {}): SealDocumentInput {
  const signedAt = new Date('2026-03-04T10:20:30Z');
  return {
    original,
    sealCertificate,
    signatures: [
      {
        signerName: 'Ada Lovelace',
        signerEmail: 'ada@example.com',
        signedAt,
        signature: { type: 'typed', value: 'Ada Lovelace' },
        fields: [
          { page: 1, x: 50, y: 100, width: 200, height: 40, type: 'signature' },
          { page: 2, x: 300, y: 100, width: 60, height: 30, type: 'initials' },
          { page: 2, x: 50, y: 60, width: 120, height: 20, type: 'date' },
          { page: 2, x: 50, y: 30, width: 200, height: 20, type: 'text', value: 'Head of Engines' },
        ],
      },
      { signerName: 'Grace Hopper', signerEmail: 'grace@example.com', signedAt, signature: { type: 'drawn', pngDataUrl: makePng() } },
    ],
    certificate: {
      requestId: 'req_01jabcdefghjkmnpqrstvwxyz0',
      title: 'Engine contract',
      document: { name: 'contract.pdf', pageCount: 2 },
      documents: [
        { name: 'contract.pdf', sha256: '0'.repeat(64), pageCount: 2 },
        { name: 'annex.pdf', sha256: 'a'.repeat(64), pageCount: 1 },
      ],
      events: [
        { at: new Date('2026-03-04T09:00:00Z'), type: 'request.sent', actor: 'owner@example.com' },
        { at: signedAt, type: 'request.completed', actor: 'system' },
      ],
      signers: [
        {
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          ipAddress: '203.0.113.7',
          userAgent: `Mozilla/5.0 ${'VeryLongUserAgentToken'.repeat(40)}`,
          viewedAt: new Date('2026-03-04T10:00:00Z'),
          signedAt,
        },
        { name: 'Grace Hopper', email: 'grace@example.com', ipAddress: '2001:db8::1', userAgent: 'curl/8.0', signedAt },
      ],
    },
    ...overrides,
  };
}

describe('sealing a completed signing request', () => {
  let dir: string;
  let sealCertificate: SealCertificate;
  let original: Buffer;
  let sealedFile: string;
  let sealed: Buffer;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-seal-'));
    sealCertificate = await loadSealCertificate({ dataDir: dir });
    original = await makePdf(['Page one', 'Page two']);
    sealed = (await sealDocument(input(original, sealCertificate))).pdf;
    sealedFile = path.join(dir, 'sealed.pdf');
    fs.writeFileSync(sealedFile, sealed);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('pdfsig finds one valid signature covering the whole document', () => {
    const report = pdfsig(sealedFile);
    expect(report).to.include('Signature Validation: Signature is Valid.');
    expect(report).to.include('Total document signed');
    expect(report).to.include('Signer Certificate Common Name: Signet document seal');
  });

  it('qpdf --check accepts the sealed file', () => {
    expect(spawnSync('qpdf', ['--check', sealedFile]).status).to.equal(0);
  });

  it('changing one byte inside the signed range makes the signature invalid', () => {
    const byteRange = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(sealed.toString('latin1'));
    expect(byteRange).to.not.equal(null);
    const firstRangeLength = Number(byteRange![2]);
    const tampered = Buffer.from(sealed);
    const offset = Math.floor(firstRangeLength / 2);
    tampered[offset] = tampered[offset] === 0x41 ? 0x42 : 0x41;
    const tamperedFile = path.join(dir, 'tampered.pdf');
    fs.writeFileSync(tamperedFile, tampered);
    const report = pdfsig(tamperedFile);
    expect(report).to.not.include('Signature is Valid.');
    expect(report).to.match(/Signature Validation: (Digest Mismatch|Signature is Invalid)/);
  });

  it('keeps the original pages and adds a signatures page and a certificate page', async () => {
    expect((await PDFDocument.load(sealed)).getPageCount()).to.equal(2 + 1 + 1);
  });

  it('prints the signers and the original SHA-256 on the certificate page', () => {
    const text = execFileSync('pdftotext', ['-f', '4', '-l', '4', '-layout', sealedFile, '-'], { encoding: 'utf8' });
    expect(text).to.include('Certificate of completion');
    expect(text).to.include(sha256Of(original));
    expect(text).to.include('grace@example.com');
    expect(text).to.include('203.0.113.7');
  });

  it('lists every document of the request, with its SHA-256 and pages, on the certificate', () => {
    const text = execFileSync('pdftotext', ['-f', '4', '-l', '4', '-layout', sealedFile, '-'], { encoding: 'utf8' });
    expect(text).to.include('Documents of this request (2)');
    expect(text).to.match(/1\.\s+contract\.pdf \(2 pages\)/);
    expect(text).to.match(/2\.\s+annex\.pdf \(1 page\)/);
    expect(text).to.include('a'.repeat(64));
  });

  it('stamps typed signatures into their fields and lists signers without fields on the signatures page', () => {
    const all = execFileSync('pdftotext', ['-layout', sealedFile, '-'], { encoding: 'utf8' }).split('\f');
    expect(all[0]).to.include('Ada Lovelace');
    expect(all[1]).to.include('2026-03-04');
    expect(all[1]).to.include('Head of Engines');
    expect(all[1]).to.include('AL');
    expect(all[2]).to.include('Signatures');
    expect(all[2]).to.include('Grace Hopper');
    expect(all[2]).to.include('2026-03-04 10:20:30 UTC');
    expect(all[2]).to.not.include('ada@example.com');
  });

  it('flows many signers onto further certificate pages', async () => {
    const base = input(original, sealCertificate);
    const signers = Array.from({ length: 30 }, (_, i) => ({ ...base.certificate.signers[0], name: `Signer ${i}`, email: `s${i}@example.com` }));
    const { pdf } = await sealDocument({ ...base, certificate: { ...base.certificate, signers } });
    expect((await PDFDocument.load(pdf)).getPageCount()).to.be.greaterThan(4 + 1);
  });

  it('draws Latin, Greek, Cyrillic, Chinese and Japanese exactly as given, in embedded subsets (issue #24: they were sealed as ?)', async () => {
    const base = input(original, sealCertificate);
    const name = 'Zoë Straße ẞ Ωμέγα Ёлка 李小龙';
    const prefill = '😀 署名 Ω ẞ こんにちは Привет';
    const title = 'Договор 合同 Σύμβαση';
    const [ada] = base.signatures;
    const fields = ada.fields!.map((field) => (field.type === 'text' ? { ...field, width: 400, value: prefill } : field));
    const { pdf } = await sealDocument({
      ...base,
      signatures: [{ ...ada, signerName: name, signature: { type: 'typed', value: name }, fields }, base.signatures[1]],
      certificate: { ...base.certificate, title, signers: [{ ...base.certificate.signers[0], name }, base.certificate.signers[1]] },
    });
    const file = path.join(dir, 'unicode.pdf');
    fs.writeFileSync(file, pdf);
    const pages = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }).split('\f');
    expect(pages[0]).to.include(name); // the typed signature in its field
    expect(pages[1]).to.include(prefill);
    expect(pages[3]).to.include(title);
    expect(pages[3]).to.include(name);
    expect(pages.join('')).to.not.include('?');
    expect(spawnSync('qpdf', ['--check', file]).status).to.equal(0);
    expect(pdfsig(file)).to.include('Signature is Valid.');
    // The glyphs are really there, not only their text: the WOFF2 slices of the CJK font once drew nothing.
    for (const word of ['署名', 'こんにちは', 'Ωμέγα']) expect(inkOfWord(file, word), word).to.be.greaterThan(20);
    expect(execFileSync('pdffonts', [file], { encoding: 'utf8' }))
      .to.match(/DejaVuSans.*yes/)
      .and.match(/NotoSansSC.*yes/);
  });

  it('draws each form field type’s value as stored, a selection’s options listed, and no hidden field (issue #55)', async () => {
    const base = input(original, sealCertificate);
    const [ada] = base.signatures;
    const at = (y: number) => ({ page: 1, x: 72, y, width: 300, height: 18 });
    const fields: SignatureStamp['fields'] = [
      { ...at(700), type: 'number', value: '1250.75' },
      { ...at(680), type: 'email', value: 'ada@example.com' },
      { ...at(660), type: 'phone', value: '+4930123456' },
      { ...at(640), type: 'dropdown', value: 'Premium plan' },
      { ...at(620), type: 'radio', value: 'Yearly' },
      { ...at(600), type: 'multiSelect', value: JSON.stringify(['Parking', 'Storage']) },
      { ...at(580), type: 'checkboxGroup', value: JSON.stringify(['Pets']) },
      { ...at(560), type: 'calculated', value: '15009' },
      { ...at(540), type: 'signerName', value: 'Ada Lovelace' },
      { ...at(520), type: 'signerEmail', value: 'ada@lovelace.example' },
      { ...at(500), type: 'staticText', text: 'Section 4: Deposit' },
      { ...at(480), type: 'text', value: 'Never drawn', hidden: true },
      { ...at(460), type: 'signature' },
    ];
    const { pdf } = await sealDocument({ ...base, signatures: [{ ...ada, fields }, base.signatures[1]] });
    const file = path.join(dir, 'form-fields.pdf');
    fs.writeFileSync(file, pdf);
    const [page] = execFileSync('pdftotext', ['-f', '1', '-l', '1', file, '-'], { encoding: 'utf8' }).split('\f');
    const drawn = [
      ...['1250.75', 'ada@example.com', '+4930123456', 'Premium plan', 'Yearly', 'Parking, Storage', 'Pets'],
      ...['15009', 'Ada Lovelace', 'ada@lovelace.example', 'Section 4: Deposit'],
    ];
    for (const value of drawn) expect(page, value).to.include(value);
    expect(page).not.to.include('Never drawn');
    expect(spawnSync('qpdf', ['--check', file]).status).to.equal(0);
    expect(pdfsig(file)).to.include('Signature is Valid.');
  });

  it('a plain English request embeds no font, so its file does not grow', () => {
    const fonts = execFileSync('pdffonts', [sealedFile], { encoding: 'utf8' }).split('\n').slice(2).filter(Boolean);
    expect(fonts.length).to.be.greaterThan(0);
    for (const font of fonts) expect(font, font).to.match(/^(Helvetica|Helvetica-Bold|Times-Italic)\s.*\sno\s+no\s+no\s/);
  });

  it('writes out a character no font can show (in data no schema checked, a browser’s user agent) as [U+XXXX], never ?', async () => {
    const base = input(original, sealCertificate);
    const { pdf } = await sealDocument({
      ...base,
      certificate: { ...base.certificate, title: 'Legacy 🦄 title', signers: [{ ...base.certificate.signers[0], userAgent: 'Agent\u0085X' }] },
    });
    const file = path.join(dir, 'undrawable.pdf');
    fs.writeFileSync(file, pdf);
    const text = execFileSync('pdftotext', ['-f', '4', '-l', '4', file, '-'], { encoding: 'utf8' });
    expect(text).to.include('Legacy [U+1F984] title');
    expect(text).to.include('Agent[U+0085]X');
    expect(text).to.not.include('?');
  });

  it('stampSignatures alone returns a loadable PDF', async () => {
    const stamped = await stampSignatures(original, input(original, sealCertificate).signatures);
    expect((await PDFDocument.load(stamped)).getPageCount()).to.equal(3);
  });
});

describe('the seal certificate', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-seal-cert-'));
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is generated once, private to its owner, and the same on later and concurrent calls', async () => {
    const p12Of = async (loading: Promise<SealCertificate>) => Buffer.from(((await loading) as P12KeySource).p12);
    const [first, racing] = await Promise.all([p12Of(loadSealCertificate({ dataDir: dir })), p12Of(loadSealCertificate({ dataDir: dir }))]);
    const later = await p12Of(loadSealCertificate({ dataDir: dir }));
    expect(racing.equals(first)).to.equal(true);
    expect(later.equals(first)).to.equal(true);
    expect(fs.statSync(path.join(dir, 'seal.p12')).mode & 0o777).to.equal(0o600);
    expect(fs.readdirSync(dir)).to.deep.equal(['seal.p12']);
  });

  it('uses an explicit p12Path as given, with its password', async () => {
    const elsewhere = path.join(dir, 'elsewhere');
    const generated = await loadSealCertificate({ dataDir: elsewhere });
    const explicit = await loadSealCertificate({ dataDir: dir, p12Path: path.join(elsewhere, 'seal.p12'), p12Password: 'secret' });
    expect(explicit).to.deep.equal({ p12: (generated as P12KeySource).p12, password: 'secret', chain: [] });
    expect(fs.existsSync(path.join(dir, 'seal.p12'))).to.equal(false);
  });
});

describe('the seal thread', () => {
  let dir: string;
  let sealCertificate: SealCertificate;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-seal-thread-'));
    sealCertificate = await loadSealCertificate({ dataDir: dir });
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('seals a 25 MB PDF off the process’s event loop, which goes on running throughout, and pdfsig finds the seal valid', async () => {
    const original = await makeLargePdf(25 * 1024 * 1024);
    let turns = 0;
    let sealing = true;
    const turn = () => {
      if (!sealing) return;
      turns++;
      setImmediate(turn);
    };
    turn();
    const { pdf, sha256 } = await sealDocumentOnThread(input(original, sealCertificate, { signatures: [] }));
    sealing = false;
    // Sealed on this thread instead, pdf-lib holds the loop for about half a second: one turn (measured).
    expect(turns).to.be.greaterThan(20);
    expect(sha256).to.equal(sha256Of(pdf));
    const file = path.join(dir, 'large-sealed.pdf');
    fs.writeFileSync(file, pdf);
    expect(pdfsig(file)).to.include('Signature Validation: Signature is Valid.');
  });

  it('fails a seal with its reason, and goes on sealing', async () => {
    const original = await makePdf(['Page one', 'Page two']);
    const broken = { p12: Buffer.from('not a PKCS#12 file'), password: '' };
    const reason = await sealDocument(input(original, broken)).then(
      () => 'sealed',
      (error: Error) => error.message,
    );
    expect(reason).to.not.equal('sealed');
    let failure: Error | undefined;
    await sealDocumentOnThread(input(original, broken)).catch((error: Error) => (failure = error));
    expect(failure?.message).to.equal(reason);
    const { pdf } = await sealDocumentOnThread(input(original, sealCertificate));
    expect(pdf.subarray(0, 5).toString('latin1')).to.equal('%PDF-');
  });

  it('a thread stopped under a seal fails that seal; the next seal starts a new thread', async () => {
    const original = await makePdf(['Page one', 'Page two']);
    const underWay = sealDocumentOnThread(input(original, sealCertificate));
    await stopSealThread();
    let failure: Error | undefined;
    await underWay.catch((error: Error) => (failure = error));
    expect(failure?.message).to.match(/seal thread stopped/);
    const file = path.join(dir, 'after-restart.pdf');
    fs.writeFileSync(file, (await sealDocumentOnThread(input(original, sealCertificate))).pdf);
    expect(pdfsig(file)).to.include('Signature Validation: Signature is Valid.');
  });
});
