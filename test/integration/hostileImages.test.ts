import { expect } from 'chai';
import { client } from '../support/http';
import { createSigningRequest, drawnSignature, eventually, tokenOf } from '../support/signing';
import { createTestAccount } from '../support/system';

// Issue #24, item 1: a PNG cut inside its image data made pdf-lib's decoder loop forever on the api's
// thread (the api stopped answering, /healthz included). Drawn signatures and drawn initials are read
// completely, with bounded work, before pdf-lib ever sees them.
const TRUNCATED_PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAGQAAABkCAAAAABVicqIAAAAIUlEQVR4nO3BgQAAAADDIH/qXeEAVQEA';

describe('POST /sign/:token/sign with a PNG that cannot be decoded', function () {
  this.timeout(60_000);

  it('400 naming the field, as a drawn signature and as drawn initials; the api goes on answering; a valid drawing still seals', async () => {
    const account = await createTestAccount();
    const fields = [
      { page: 1, x: 50, y: 50, width: 200, height: 50, type: 'signature' },
      { page: 1, x: 300, y: 50, width: 80, height: 40, type: 'initials' },
    ];
    const { signingRequest } = await createSigningRequest(account.request, { signers: [{ name: 'Ada Lovelace', email: 'ada@example.com', fields }] });
    const link = await account.request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/link`);
    const api = client(account.system.url!);
    const sign = (body: object) => api('POST', `/sign/${tokenOf(link.body.url)}/sign`, { json: { consent: true, ...body } });

    const asSignature = await sign({ signature: { type: 'drawn', value: TRUNCATED_PNG }, fieldValues: { '1': drawnSignature } });
    expect(asSignature.status).to.equal(400);
    expect(asSignature.body).to.include({ error: 'validation_error' });
    expect(asSignature.body.details).to.deep.equal(['signature.value must be a PNG image that can be decoded']);

    const asInitials = await sign({ signature: { type: 'typed', value: 'Ada Lovelace' }, fieldValues: { '1': TRUNCATED_PNG } });
    expect(asInitials.status).to.equal(400);
    expect(asInitials.body.details).to.deep.equal(['fieldValues.1 must be a PNG image that can be decoded: the initials field on page 1']);

    expect((await api('GET', '/healthz')).status).to.equal(200);

    const signed = await sign({ signature: { type: 'drawn', value: drawnSignature }, fieldValues: { '1': drawnSignature } });
    expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    await eventually(async () => expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);
  });
});
