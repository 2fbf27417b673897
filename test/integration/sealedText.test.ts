import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { client, type Request } from '../support/http';
import { eventually, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';
import { uploadDocument } from '../support/documents';

// Issue #24, item 11: the sealed PDF shows exactly what was entered. Text in Latin, Greek, Cyrillic,
// Chinese and Japanese is sealed as given; what no font can show is refused where it enters, with a
// 400 naming the field and the characters, at every input the sealed PDF draws.

const CANNOT = 'contains characters that cannot be shown in the signed PDF:';
const UNICORN = `${CANNOT} 🦄 (U+1F984)`;

/** A one-page template for the role "signer": a signature, a prefilled text "note", a text "comment" and initials. */
async function createTemplate(request: Request, name = 'Form') {
  const document = await uploadDocument(request, { fileName: 'form.pdf', pages: ['Form'] });
  const field = (type: string, label: string | null, y: number, width = 400) => ({ role: 'signer', type, label, page: 1, x: 50, y, width, height: 30 });
  return request('POST', '/api/v1/templates', {
    json: {
      name,
      documentId: document.id,
      roles: [{ name: 'signer' }],
      fields: [field('signature', null, 600), field('text', 'note', 500), field('text', 'comment', 400), field('initials', 'initials', 300, 200)],
    },
  });
}

describe('text the sealed PDF cannot show is refused where it enters', function () {
  this.timeout(60_000);

  it('400 naming the field and the characters: document and template names, title, signer names, prefill values', async () => {
    const { request } = await createTestAccount();
    const document = await request('POST', '/api/v1/documents', { json: { fileName: 'contract 🦄.pdf', fileSize: 10 } });
    expect(document.status).to.equal(400);
    expect(document.body).to.deep.include({ error: 'validation_error', details: [`fileName ${UNICORN}`] });
    const renamed = await request('POST', '/api/v1/documents', { json: { fileName: 'tab\there.pdf', fileSize: 10 } });
    expect(renamed.body.details).to.deep.equal([`fileName ${CANNOT} U+0009`]);

    expect((await createTemplate(request, 'Form 🦄')).body.details).to.deep.equal([`name ${UNICORN}`]);
    const template = await createTemplate(request);
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    const created = await request('POST', '/api/v1/signatures', {
      json: {
        template_id: template.body.id,
        title: 'Bell\u0007',
        signers: [{ name: 'Ada 🦄', email: 'ada@example.com', role: 'signer' }],
        prefill: { note: 'שלום' },
      },
    });
    expect(created.status).to.equal(400);
    expect(created.body.details).to.deep.equal([
      `prefill.note ${CANNOT} ש (U+05E9), ל (U+05DC), ו (U+05D5), ם (U+05DD)`,
      `title ${CANNOT} U+0007`,
      `signers.0.name ${UNICORN}`,
    ]);
  });

  it('400 naming the field and the characters: typed signature, text values and typed initials', async () => {
    const { request, system } = await createTestAccount();
    const template = await createTemplate(request);
    const created = await request('POST', '/api/v1/signatures', {
      json: { template_id: template.body.id, title: 'Form', signers: [{ name: 'Ada', email: 'ada@example.com', role: 'signer' }] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const link = await request('POST', `/api/v1/signatures/${created.body.id}/signers/${created.body.signers[0].id}/link`);
    const sign = (body: object) => client(system.url!)('POST', `/sign/${tokenOf(link.body.url)}/sign`, { json: { consent: true, ...body } });

    expect((await sign({ signature: { type: 'typed', value: 'Ada 🦄' }, fieldValues: { '2': 'ok', '3': 'AL' } })).body.details).to.deep.equal([
      `signature.value ${UNICORN}`,
    ]);
    const values = await sign({ signature: { type: 'typed', value: 'Ada' }, fieldValues: { '1': 'Ω ok', '2': 'line\none', '3': '🦄' } });
    expect(values.status).to.equal(400);
    expect(values.body.details).to.deep.equal([
      `fieldValues.2 ${CANNOT} U+000A (the text field "comment" on page 1)`,
      `fieldValues.3 ${UNICORN} (the initials field "initials" on page 1)`,
    ]);
  });
});

describe('text in five scripts is sealed exactly as given', function () {
  this.timeout(120_000);

  it('prefill, signer name, title, typed signature, a text value and typed initials: pdftotext reads each back; qpdf and pdfsig accept the file', async () => {
    const { request, system } = await createTestAccount();
    const template = await createTemplate(request);
    const texts = {
      title: 'Договор 合同 Σύμβαση',
      name: 'Zoë Ёлка Ωμέγα 李小龙',
      note: '😀 署名 Ω ẞ こんにちは',
      comment: 'Straße Привет Γειά 你好',
      initials: 'ЁΩ李',
    };
    const created = await request('POST', '/api/v1/signatures', {
      json: {
        template_id: template.body.id,
        title: texts.title,
        signers: [{ name: texts.name, email: 'zoe@example.com', role: 'signer' }],
        prefill: { note: texts.note },
      },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const link = await request('POST', `/api/v1/signatures/${created.body.id}/signers/${created.body.signers[0].id}/link`);
    const signed = await client(system.url!)('POST', `/sign/${tokenOf(link.body.url)}/sign`, {
      json: { consent: true, signature: { type: 'typed', value: texts.name }, fieldValues: { '2': texts.comment, '3': texts.initials } },
    });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    await eventually(async () => expect((await request('GET', `/api/v1/signatures/${created.body.id}`)).body.status).to.equal('completed'), 60_000);

    const sealed = await request('GET', `/api/v1/signatures/${created.body.id}/document`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-sealed-text-'));
    try {
      const file = path.join(dir, 'sealed.pdf');
      fs.writeFileSync(file, sealed.bytes);
      const [page, certificate] = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' }).split('\f');
      for (const text of [texts.name, texts.note, texts.comment, texts.initials]) expect(page).to.include(text);
      for (const text of [texts.title, texts.name]) expect(certificate).to.include(text);
      expect(page + certificate).to.not.include('?');
      expect(execFileSync('qpdf', ['--check', file], { encoding: 'utf8' })).to.include('No syntax or stream encoding errors');
      expect(execFileSync('pdfsig', [file], { encoding: 'utf8' })).to.include('Signature is Valid');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
