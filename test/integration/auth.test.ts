import { expect } from 'chai';
import { revokeApiKey } from '../../src/apiKeys/service';
import { client } from '../support/http';
import { createTestAccount, sharedSystem } from '../support/system';

describe('Authorization: Bearer <API_KEY>', () => {
  const cases: [string, Record<string, string>][] = [
    ['missing', {}],
    ['not Bearer', { Authorization: 'Basic dXNlcjpwYXNz' }],
    ['Bearer without a key', { Authorization: 'Bearer ' }],
    ['a malformed key', { Authorization: 'Bearer not-a-key' }],
    ['an unknown key of the right shape', { Authorization: `Bearer sk_live_${'x'.repeat(43)}` }],
  ];
  for (const [name, headers] of cases) {
    it(`401 unauthorized for ${name}`, async () => {
      const request = client((await sharedSystem()).url!);
      const response = await request('GET', '/api/v1/documents', { headers });
      expect(response.status).to.equal(401);
      expect(response.body.error).to.equal('unauthorized');
      expect(response.body.message).to.be.a('string').with.length.greaterThan(0);
      expect(response.headers.get('x-request-id')).to.match(/^req_/);
    });
  }

  it('401 for a key whose prefix is right but whose secret part is wrong', async () => {
    const { apiKey, system } = await createTestAccount();
    const forged = apiKey.slice(0, -1) + (apiKey.endsWith('a') ? 'b' : 'a');
    const response = await client(system.url!, forged)('GET', '/api/v1/documents');
    expect(response.status).to.equal(401);
  });

  it('401 once the key is revoked', async () => {
    const { request, db, apiKeyId } = await createTestAccount();
    expect((await request('GET', '/api/v1/documents')).status).to.equal(200);
    await revokeApiKey(db, apiKeyId);
    const response = await request('GET', '/api/v1/documents');
    expect(response.status).to.equal(401);
    expect(response.body.error).to.equal('unauthorized');
  });

  it('stores only a SHA-256 hash of the key and records when it was last used', async () => {
    const { request, db, apiKey, apiKeyId } = await createTestAccount();
    await request('GET', '/api/v1/documents');
    const row = await db('api_keys').where({ id: apiKeyId }).first();
    const { createHash } = await import('node:crypto');
    expect(row.key_hash).to.equal(createHash('sha256').update(apiKey).digest('hex'));
    expect(JSON.stringify(row)).not.to.contain(apiKey);
    expect(row.last_used_at).to.be.instanceOf(Date);
  });
});

describe('GET /api/v1/account', () => {
  it('shows the plan, this month’s usage and the rate limits', async () => {
    const { request, account } = await createTestAccount('pro');
    await request('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: 10 } });
    const response = await request('GET', '/api/v1/account');
    expect(response.status).to.equal(200);
    expect(response.body).to.include({ id: account.id, plan: 'pro' });
    expect(response.body.usage.documents).to.deep.equal({ used: 1, limit: 25 });
    expect(response.body.usage.templates).to.deep.equal({ used: 0, limit: 10 });
    expect(response.body.features).to.deep.equal({ webhooks: false });
    expect(response.body.rateLimits).to.deep.include({ operation: 'POST /documents', limit: 100, window: '1h' });
    expect(response.body.rateLimits).to.deep.include({ operation: 'POST /webhooks', limit: 50, window: '1h' });
  });

  it('shows unlimited quotas as null on business', async () => {
    const { request } = await createTestAccount('business');
    const response = await request('GET', '/api/account');
    expect(response.body.usage.documents.limit).to.equal(null);
    expect(response.body.features.webhooks).to.equal(true);
  });
});

describe('unknown routes and methods', () => {
  it('404 not_found for an unknown path, 405 for a wrong method', async () => {
    const { request } = await createTestAccount();
    const unknown = await request('GET', '/api/v1/nothing-here');
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.equal('not_found');
    const wrong = await request('PUT', '/api/v1/documents');
    expect(wrong.status).to.equal(405);
    expect(wrong.body.error).to.equal('method_not_allowed');
  });
});
