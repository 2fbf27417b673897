import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { client } from '../support/http';
import { createSigningRequest, eventually, tokenOf } from '../support/signing';
import { startSplitSystem } from '../support/splitSystem';

// A sealing failure that remains possible (here a broken certificate) is visible in `progress`,
// never a request that stays pending in silence.
describe('a request that cannot be sealed', function () {
  this.timeout(120_000);
  const broken = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signet-broken-seal-')), 'seal.p12');
  let system: Awaited<ReturnType<typeof startSplitSystem>>;

  before(async () => {
    fs.writeFileSync(broken, 'not a PKCS#12 file');
    system = await startSplitSystem('broken-seal', { SEAL_P12_PATH: broken });
  });

  after(() => system?.stop());

  it('shows stage sealing with the failed attempts, the last error and the next attempt, and stays pending', async () => {
    const { api } = system;
    const account = await createAccount(api.database.knex, { email: `broken-seal-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
    const { secret } = await createApiKey(api.database.knex, account.id);
    const request = client(api.url!, secret);
    const { signingRequest } = await createSigningRequest(request, { signers: [{ name: 'Ada', email: 'ada@example.com' }] });
    const link = await request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/link`);
    const signed = await client(api.url!)('POST', `/sign/${tokenOf(link.body.url)}/sign`, {
      json: { consent: true, signature: { type: 'typed', value: 'Ada' } },
    });
    expect(signed.status).to.equal(200);

    const progress = await eventually(async () => {
      const response = await request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(response.body.progress.sealing?.attempts).to.be.at.least(2);
      return response.body;
    }, 60_000);
    expect(progress.status).to.equal('pending');
    expect(progress.progress.stage).to.equal('sealing');
    expect(progress.progress.waitingFor).to.deep.equal([]);
    expect(progress.progress.sealing.lastError).to.be.a('string').and.not.equal('');
    expect(Date.parse(progress.progress.sealing.nextAttemptAt)).to.be.greaterThan(Date.now() - 5000);
    // While sealing, the request is completing: a cancel is refused.
    expect((await request('POST', `/api/v1/signatures/${signingRequest.id}/cancel`, { json: {} })).status).to.equal(409);
  });
});
