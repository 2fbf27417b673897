import crypto from 'node:crypto';
import { expect } from 'chai';
import { createSigningRequest, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

// The README's promise: a signing link's token is stored only as its SHA-256 hash.
describe('signing tokens at rest', function () {
  this.timeout(60_000);

  it('are stored only as hashes: the signer_tokens row holds the SHA-256 of the link token, and no row holds the token', async () => {
    const { request, db } = await createTestAccount();
    const { signingRequest } = await createSigningRequest(request);
    const signer = signingRequest.signers[0];
    const link = await request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signer.id}/link`);
    expect(link.status, JSON.stringify(link.body)).to.equal(200);
    const token = tokenOf(link.body.url);

    const rows = await db('signer_tokens').where({ signer_id: signer.id });
    expect(rows.map((row) => row.token_hash)).to.include(crypto.createHash('sha256').update(token).digest('hex'));
    const stored = JSON.stringify([
      rows,
      await db('signers').where({ id: signer.id }),
      await db('signing_requests').where({ id: signingRequest.id }),
      await db('events').whereRaw('data::text like ?', [`%${signingRequest.id}%`]),
    ]);
    expect(stored).not.to.include(token);
  });
});
