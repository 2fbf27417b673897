import { expect } from 'chai';
import { client } from '../support/http';
import { signedUp, uploadPdf } from '../support/consoleClient';
import { makePdf } from '../support/pdfs';
import { signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount, useSharedSystem } from '../support/system';
import { templateField, uploadLease } from '../support/templates';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2)}@example.com`;

async function leaseTemplate(account: Account) {
  const documentId = await uploadLease(account.request);
  const template = await account.request('POST', '/api/v1/templates', {
    json: {
      name: 'Lease',
      documentId,
      roles: [
        { name: 'landlord', verification: { method: 'access_code' } },
        { name: 'tenant', verification: { method: 'email_code' } },
        { name: 'agent', recipientType: 'approver' },
      ],
      fields: [templateField('landlord', 'signature'), templateField('tenant', 'signature', { y: 200 })],
    },
  });
  expect(template.status, JSON.stringify(template.body)).to.equal(201);
  return template.body;
}

const fromTemplate = (account: Account, templateId: string, signers: Record<string, unknown>[]) =>
  account.request('POST', '/api/v1/signatures', { json: { template_id: templateId, title: 'Lease', signers } });

describe('template roles with signer verification', function () {
  this.timeout(120_000);
  useSharedSystem();

  describe('POST /api/v1/templates', () => {
    it('keeps each role’s method and shows it; no role holds a code, and a cc’s role takes none', async () => {
      const account = await createTestAccount();
      const template = await leaseTemplate(account);
      expect(template.roles.map((role: { name: string; verification?: unknown }) => [role.name, role.verification])).to.deep.equal([
        ['landlord', { method: 'access_code' }],
        ['tenant', { method: 'email_code' }],
        ['agent', undefined],
      ]);
      const documentId = await uploadLease(account.request);
      const withCode = await account.request('POST', '/api/v1/templates', {
        json: {
          name: 'Lease',
          documentId,
          roles: [{ name: 'landlord', verification: { method: 'access_code', code: 'Zq7!kite' } }],
          fields: [templateField('landlord', 'signature')],
        },
      });
      expect(withCode.status).to.equal(400);
      expect(withCode.body.details.join(' ')).to.include('roles.0.verification.code cannot be given to a template');
      const cc = await account.request('POST', '/api/v1/templates', {
        json: {
          name: 'Lease',
          documentId,
          roles: [{ name: 'landlord' }, { name: 'copy', recipientType: 'cc', verification: { method: 'email_code' } }],
          fields: [templateField('landlord', 'signature')],
        },
      });
      expect(cc.status).to.equal(400);
      expect(cc.body.details).to.include("roles.1.verification cannot be given to a cc's role: a cc never opens a signing page");
    });
  });

  describe('POST /api/v1/signatures with template_id', () => {
    it('refuses a request without the access code an access-code role needs, or with another method than the role’s', async () => {
      const account = await createTestAccount();
      const template = await leaseTemplate(account);
      const missing = await fromTemplate(account, template.id, [
        { name: 'Larry Landlord', email: unique('larry'), role: 'landlord' },
        { name: 'Tina Tenant', email: unique('tina'), role: 'tenant' },
        { name: 'Alice Agent', email: unique('alice'), role: 'agent' },
      ]);
      expect(missing.status).to.equal(400);
      expect(missing.body.details.join(' ')).to.include('signers.0.verification.code is required: the role "landlord" asks for an access code');
      const other = await fromTemplate(account, template.id, [
        { name: 'Larry Landlord', email: unique('larry'), role: 'landlord', verification: { method: 'access_code', code: 'Zq7!kite' } },
        { name: 'Tina Tenant', email: unique('tina'), role: 'tenant', verification: { method: 'access_code', code: 'Zq7!kite' } },
        { name: 'Alice Agent', email: unique('alice'), role: 'agent' },
      ]);
      expect(other.status).to.equal(400);
      expect(other.body.details).to.include(`signers.1.verification.method must be left out or be the role's: "tenant" asks for email_code`);
    });

    it('the signer of an e-mail-code role must give the code e-mailed to them; the access-code role’s signer the code given', async () => {
      const account = await createTestAccount();
      const template = await leaseTemplate(account);
      const tinaEmail = unique('tina');
      const created = await fromTemplate(account, template.id, [
        { name: 'Larry Landlord', email: unique('larry'), role: 'landlord', verification: { method: 'access_code', code: 'Zq7!kite' } },
        { name: 'Tina Tenant', email: tinaEmail, role: 'tenant' },
        { name: 'Alice Agent', email: unique('alice'), role: 'agent' },
      ]);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const byRole = (email: string) => created.body.signers.find((signer: { email: string }) => signer.email === email);
      const tina = byRole(tinaEmail);
      expect(tina.verification).to.include({ method: 'email_code' });
      expect(created.body.signers.map((signer: { verification: { method: string } | null }) => signer.verification?.method ?? null)).to.deep.equal([
        'access_code',
        'email_code',
        null,
      ]);

      const token = tokenOf(await signingLinkOf(account.request, created.body.id, tina.id));
      const browser = client(account.system.url!);
      const before = await browser('GET', `/sign/${token}/request`);
      expect(before.status).to.equal(401);
      expect(before.body.error).to.equal('verification_required');
      expect((await browser('POST', `/sign/${token}/verification/code`)).status).to.equal(200);
      const mail = await account
        .db('mail_outbox')
        .where('to_address', 'like', `%${tinaEmail}%`)
        .andWhere('idempotency_key', 'like', 'verification-code:%')
        .first('subject');
      const code = /(\d{6})/.exec(mail.subject)![1];
      const verified = await browser('POST', `/sign/${token}/verification`, { json: { code } });
      expect(verified.status, JSON.stringify(verified.body)).to.equal(200);
      const cookie = verified.headers.getSetCookie()[0].split(';')[0];
      const view = await browser('GET', `/sign/${token}/request`, { headers: { Cookie: cookie } });
      expect(view.status).to.equal(200);
      expect(view.body.request.title).to.equal('Lease');
    });
  });

  describe('the console', () => {
    it('shows each role’s verification on the template’s page', async () => {
      const { browser } = await signedUp((await createTestAccount()).system.url!);
      const document = await uploadPdf(browser, await makePdf(['Lease']), 'lease.pdf');
      const created = await browser.postJson('/app/templates', {
        name: 'Lease',
        documentId: document.id,
        roles: [
          { name: 'landlord', verification: { method: 'access_code' } },
          { name: 'tenant', verification: { method: 'email_code' } },
        ],
        fields: [templateField('landlord', 'signature'), templateField('tenant', 'signature', { y: 200 })],
      });
      expect(created.status, created.text).to.equal(201);
      const page = await browser.request('GET', `/app/templates/${created.json.id}`);
      expect(page.text).to.include('1 field; an access code, given with each request').and.include('1 field; an e-mailed code');
    });
  });
});
