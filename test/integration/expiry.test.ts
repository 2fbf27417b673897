import { expect } from 'chai';
import { client } from '../support/http';
import { createSigningRequest, eventually, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

// Expiry for real: a request whose expiresAt passes while the test waits, its workflow's timer firing on
// the Temporal server and the worker expiring it, as it does in production (no back-dated token).
describe('a signing request whose expiresAt passes', function () {
  this.timeout(120_000);

  it('is expired in the database, with its signing_request.expired event and audit step, and its link answers 410 link_expired', async () => {
    const account = await createTestAccount();
    const expiresAt = new Date(Date.now() + 5_000).toISOString();
    const { signingRequest } = await createSigningRequest(account.request, { expiresAt });
    const signer = signingRequest.signers[0];
    const link = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signer.id}/link`);
    expect(link.status, JSON.stringify(link.body)).to.equal(200);

    const row = await eventually(async () => {
      const found = await account.db('signing_requests').where({ id: signingRequest.id }).first('status', 'completed_at');
      expect(found.status).to.equal('expired');
      return found;
    }, 60_000);
    expect(row.completed_at, 'the moment it ended').to.be.an.instanceOf(Date);
    expect(row.completed_at.getTime()).to.be.at.least(Date.parse(expiresAt));

    const events = await eventually(async () => {
      const types = await account
        .db('events')
        .where({ account_id: account.account.id })
        .whereRaw(`data->>'signingRequestId' = ?`, [signingRequest.id])
        .pluck('type');
      expect(types).to.include('signing_request.expired');
      return types;
    });
    expect(events.filter((type) => type === 'signing_request.expired')).to.have.length(1);

    const audit = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`);
    expect(audit.body.data.map((step: { action: string }) => step.action)).to.include('expired');

    const signing = client(account.system.url!);
    const token = tokenOf(link.body.url);
    const sign = await signing('POST', `/sign/${token}/sign`, { json: { consent: true, signature: { type: 'typed', value: 'Ada' } } });
    const decline = await signing('POST', `/sign/${token}/decline`, { json: { reason: 'Too late' } });
    for (const response of [sign, decline]) {
      expect(response.status).to.equal(410);
      expect(response.body).to.include({ error: 'link_expired', message: 'This signing link has expired. Ask the sender for a new one.' });
    }
  });
});
