import { expect } from 'chai';
import { makePdf } from '../support/pdfs';
import { client } from '../support/http';
import { createSigningRequest, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';
import { uploadDocument } from '../support/documents';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const ids = (response: { body: { data: { id: string }[] } }) => response.body.data.map((hit) => hit.id);
const search = (account: Account, q: string) => account.request('GET', `/api/v1/search?q=${encodeURIComponent(q)}`);
/** Polls until the search for q returns exactly `expected` (the index follows the API by events). */
const expectHits = (account: Account, q: string, expected: string[]) =>
  eventually(async () => {
    const response = await search(account, q);
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    expect(ids(response)).to.have.members(expected);
  }, 15_000);

describe('search follows the API (the configured backend of the running system)', () => {
  it('finds an uploaded PDF by a word on its third page, then by its new name, and forgets it once deleted', async () => {
    const account = await createTestAccount();
    const created = await uploadDocument(account.request, {
      fileName: 'lease-2026.pdf',
      pages: ['Cover page', 'Table of contents', 'The quokka clause applies'],
    });
    await expectHits(account, 'quokka', [created.id]);

    const renamed = await account.request('PATCH', `/api/v1/documents/${created.id}`, { json: { fileName: 'tenancy-agreement.pdf' } });
    expect(renamed.status).to.equal(200);
    await expectHits(account, 'tenancy', [created.id]);
    await expectHits(account, 'lease', []);

    expect((await account.request('DELETE', `/api/v1/documents/${created.id}`)).status).to.equal(204);
    await expectHits(account, 'quokka', []);
  });

  it('finds a document uploaded in two steps by its text once the file arrives', async () => {
    const account = await createTestAccount();
    const pdf = await makePdf(['Wombat memorandum']);
    const created = await account.request('POST', '/api/v1/documents', { json: { fileName: 'memo.pdf', fileSize: pdf.length } });
    await expectHits(account, 'memo', [created.body.id]);
    await expectHits(account, 'wombat', []);
    const uploaded = await account.request('PUT', `/api/v1/documents/${created.body.id}/file`, { body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    expect(uploaded.status).to.equal(200);
    await expectHits(account, 'wombat', [created.body.id]);
  });

  it('finds a signing request by title, message and signer, and not from another account', async () => {
    const account = await createTestAccount();
    const other = await createTestAccount();
    const { signingRequest } = await createSigningRequest(account.request, { title: 'Pangolin partnership', message: 'Numbat terms inside' });
    await expectHits(account, 'pangolin', [signingRequest.id]);
    await expectHits(account, 'numbat', [signingRequest.id]);
    await expectHits(account, 'lovelace pang', [signingRequest.id]);
    const signerHits = await account.request('GET', '/api/v1/search?type=signing_request&signerEmail=ADA@example.com');
    expect(ids(signerHits)).to.deep.equal([signingRequest.id]);
    const elsewhere = await search(other, 'pangolin');
    expect(elsewhere.status).to.equal(200);
    expect(elsewhere.body.data).to.deep.equal([]);
  });

  it('finds a signing request by what its signer filled in, once signed, and not by a field its condition hid', async () => {
    const account = await createTestAccount();
    const place = (y: number, field: object) => ({ page: 1, x: 50, y, width: 200, height: 20, ...field });
    const fields = [
      place(700, { type: 'signature', height: 40 }),
      place(650, { type: 'text', label: 'Company' }),
      place(600, { type: 'dropdown', label: 'Region', options: ['Wombatshire', 'Elsewhere'] }),
      place(550, { type: 'text', label: 'Reason', required: false, showWhen: { field: 'Region', is: 'equals', values: ['Elsewhere'] } }),
    ];
    const { signingRequest } = await createSigningRequest(account.request, {
      signers: [{ name: 'Grace Hopper', email: 'grace@example.com', fields }],
    });
    await expectHits(account, 'quokka', []);
    const token = tokenOf(await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id));
    const signed = await client(account.system.url!)('POST', `/sign/${token}/sign`, {
      json: { consent: true, signature: { type: 'typed', value: 'Grace Hopper' }, fieldValues: { '1': 'Quokka Holdings', '2': 'Wombatshire', '3': 'Echidna' } },
    });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    await expectHits(account, 'quokka holdings', [signingRequest.id]);
    await expectHits(account, 'wombatshire', [signingRequest.id]);
    await expectHits(account, 'echidna', []);
  });
});
