import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { pngOf } from '../support/branding';
import { client } from '../support/http';
import { makeEncryptedPdf, makeObjectStreamBomb, makePdf } from '../support/pdfs';
import { createSigningRequest, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';
import { jpegOf, uploadAs } from '../support/uploads';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const signature = { type: 'typed', value: 'Grace Hopper' };
const grace = { name: 'Grace Hopper', email: 'grace@example.com' };
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
const place = (y: number, extra: Record<string, unknown>) => ({ page: 1, x: 50, y, width: 300, height: 40, ...extra });

const fields = [
  place(760, { type: 'signature' }),
  place(700, { type: 'image', label: 'Company stamp' }),
  place(640, { type: 'attachment', label: 'Passport' }),
  place(580, { type: 'attachment', label: 'Photo', required: false }),
  place(540, { type: 'checkbox', label: 'Pets', width: 20, height: 20, required: false }),
  place(480, { type: 'attachment', label: 'Pet record', showWhen: { field: 'Pets', is: 'equals', values: ['true'] } }),
];

async function signerWith(account: Account, signerFields: unknown[] = fields, signers: unknown[] = [{ ...grace, fields: signerFields }]) {
  const { signingRequest } = await createSigningRequest(account.request, { signers });
  const token = tokenOf(await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
  const api = client(account.system.url!);
  return {
    signingRequest,
    token,
    upload: (bytes: Buffer, name: string, type?: string) => uploadAs(account.system.url!, token, bytes, name, type),
    sign: (fieldValues: unknown) => api('POST', `/sign/${token}/sign`, { json: { consent: true, signature, fieldValues } }),
  };
}

/** The sealed PDF as poppler and qpdf read it: its words, signatures, embedded files (and the first one's bytes) and images. */
function readBack(pdf: Buffer) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-uploads-'));
  try {
    const file = path.join(dir, 'sealed.pdf');
    fs.writeFileSync(file, pdf);
    execFileSync('qpdf', ['--check', file]);
    const run = (tool: string, ...args: string[]) => execFileSync(tool, [...args, file]).toString();
    execFileSync('pdfdetach', ['-save', '1', '-o', path.join(dir, 'first'), file]);
    return {
      words: execFileSync('pdftotext', [file, '-']).toString(),
      signatures: run('pdfsig'),
      attached: run('pdfdetach', '-list'),
      firstAttached: fs.readFileSync(path.join(dir, 'first')),
      images: run('pdfimages', '-list'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('image and attachment fields', function () {
  this.timeout(120_000);

  it('uploads each, seals the image drawn and the files attached and listed by SHA-256, and the owner downloads them', async () => {
    const account = await createTestAccount();
    const signer = await signerWith(account);
    const stamp = jpegOf(64, 32);
    const passport = await makePdf(['Passport scan']);
    const photo = pngOf(40, 30);

    const uploadedStamp = await signer.upload(stamp, 'stamp.jpg', 'image/jpeg');
    expect(uploadedStamp.status, JSON.stringify(uploadedStamp.body)).to.equal(201);
    expect(uploadedStamp.body).to.deep.include({ fileName: 'stamp.jpg', contentType: 'image/jpeg', size: stamp.length, sha256: sha256(stamp) });
    expect(uploadedStamp.body.id).to.match(/^upl_/);
    // The type is read from the bytes: a PDF sent as image/png is a PDF.
    const uploadedPassport = await signer.upload(passport, '../../etc/passport.pdf', 'image/png');
    expect(uploadedPassport.body).to.deep.include({ fileName: 'passport.pdf', contentType: 'application/pdf', sha256: sha256(passport) });
    const uploadedPhoto = await signer.upload(photo, 'photo.png');
    expect(uploadedPhoto.body.contentType).to.equal('image/png');
    // Chosen and then replaced: never the signer's answer, never downloadable.
    const replaced = await signer.upload(photo, 'first-try.png');

    const signed = await signer.sign({ '1': uploadedStamp.body.id, '2': uploadedPassport.body.id, '3': uploadedPhoto.body.id, '4': false });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    const get = () => account.request('GET', `/api/v1/signatures/${signer.signingRequest.id}`);
    await eventually(async () => expect((await get()).body.status).to.equal('completed'), 60_000);

    const filled = (await get()).body.signers[0].fields.map((field: { filled?: unknown }) => field.filled);
    expect(filled.slice(1)).to.deep.equal([
      { value: uploadedStamp.body, hidden: false },
      { value: uploadedPassport.body, hidden: false },
      { value: uploadedPhoto.body, hidden: false },
      { value: false, hidden: false },
      { value: null, hidden: true },
    ]);
    const [event] = await account.db('events').where({ account_id: account.account.id, type: 'signer.signed' });
    expect(event.data.fields.find((field: { label: string }) => field.label === 'Passport').value).to.deep.equal(uploadedPassport.body);

    const sealed = readBack((await account.request('GET', `/api/v1/signatures/${signer.signingRequest.id}/document`)).bytes);
    expect(sealed.signatures).to.contain('Signature is Valid');
    expect(sealed.attached).to.match(/2 embedded files/);
    expect(sealed.attached).to.contain('passport.pdf').and.to.contain('photo.png');
    expect(sha256(sealed.firstAttached)).to.be.oneOf([sha256(passport), sha256(photo)]);
    expect(sealed.images).to.match(/\n\s*\d+\s+\d+\s+image\s+64\s+32\s+gray\s+1\s+8\s+jpeg/);
    expect(sealed.words).to.contain('Attached: passport.pdf').and.to.contain('Files uploaded by signers (3)');
    for (const bytes of [stamp, passport, photo]) expect(sealed.words.replace(/\s+/g, '')).to.contain(sha256(bytes));

    const download = (id: string, as = account) => as.request('GET', `/api/v1/signatures/${signer.signingRequest.id}/uploads/${id}`);
    const passportDownload = await download(uploadedPassport.body.id);
    expect(passportDownload.status).to.equal(200);
    expect(passportDownload.headers.get('content-type')).to.equal('application/pdf');
    expect(passportDownload.headers.get('content-disposition')).to.equal("attachment; filename*=UTF-8''passport.pdf");
    expect(passportDownload.bytes.equals(passport)).to.equal(true);
    expect((await download(replaced.body.id)).status).to.equal(404);
    expect((await download(uploadedPassport.body.id, await createTestAccount())).status).to.equal(404);
  });

  it('refuses with a 400 naming the field what does not fit it: a PDF as an image, an unknown or another signer’s file, none', async () => {
    const account = await createTestAccount();
    const signer = await signerWith(account);
    const other = await signerWith(account);
    const pdf = (await signer.upload(await makePdf(), 'scan.pdf')).body.id;
    const png = (await signer.upload(pngOf(10, 10), 'a.png')).body.id;
    const theirs = (await other.upload(pngOf(10, 10), 'b.png')).body.id;

    const response = await signer.sign({ '1': pdf, '2': theirs, '3': 'upl_01h455vb4pex5vsknk084sn02q', '4': true, '5': 'not an id' });
    expect(response.status).to.equal(400);
    expect(response.body.details).to.deep.equal([
      'fieldValues.1 must be a PNG or JPEG image, not a PDF (the image field "Company stamp" on page 1)',
      'fieldValues.2 must be the id of a file you uploaded for this request (the attachment field "Passport" on page 1)',
      'fieldValues.3 must be the id of a file you uploaded for this request (the attachment field "Photo" on page 1)',
      'fieldValues.5 must be the id of a file you uploaded (upl_…): it is an attachment field (the attachment field "Pet record" on page 1)',
    ]);
    const missing = await signer.sign({ '1': png });
    expect(missing.body.details).to.deep.equal(['fieldValues.2 is required (the attachment field "Passport" on page 1)']);

    // A signer with no image or attachment field has nothing to upload for.
    const plain = await signerWith(account, [place(700, { type: 'signature' })]);
    const refused = await plain.upload(pngOf(10, 10), 'a.png');
    expect(refused.status).to.equal(409);
    expect(refused.body.message).to.match(/no image or attachment field/);
  });

  it('refuses hostile files within their bounds while /healthz answers, and counts uploads per signer under races', async () => {
    const account = await createTestAccount();
    const signer = await signerWith(account);
    const health = client(account.system.url!);
    const cases: [Buffer, string][] = [
      [Buffer.from('just some text'), 'file must be a PDF, PNG or JPEG file'],
      [pngOf(10, 10, { width: 50_000, height: 50_000 }), 'file must be at most 8000000 pixels'],
      [jpegOf(16, 16, { claim: { width: 60_000, height: 60_000 } }), 'file must be at most 10000 pixels a side and 50 megapixels (this one is 60000×60000)'],
      [jpegOf(16, 16, { truncate: true }), 'file must be a JPEG image that can be decoded'],
      [jpegOf(16, 16, { frame: 0xc3 }), 'file must be a baseline or progressive JPEG'],
      [await makeEncryptedPdf(), 'file must not be an encrypted PDF'],
      [makeObjectStreamBomb(), 'file '],
      [Buffer.alloc(0), 'file must not be empty'],
    ];
    for (const [bytes, problem] of cases) {
      const [response, healthz] = await Promise.all([signer.upload(bytes, 'hostile'), health('GET', '/healthz')]);
      expect(response.status, problem).to.equal(400);
      expect(response.body.details[0], problem).to.contain(problem);
      expect(healthz.status).to.equal(200);
    }
    const tooLarge = await signer.upload(Buffer.alloc(10 * 1024 * 1024 + 1, 0x20), 'big.pdf');
    expect(tooLarge.status).to.equal(413);

    // 25 at once against a limit of 20: exactly 20 stored, the rest 409.
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => signer.upload(pngOf(4, 4 + i), `${i}.png`)));
    expect(results.filter((result) => result.status === 201)).to.have.length(20);
    expect(results.filter((result) => result.status === 409)).to.have.length(5);
    const [{ count }] = await account.db('signer_uploads').where({ signing_request_id: signer.signingRequest.id }).count();
    expect(Number(count)).to.equal(20);
  });
});
