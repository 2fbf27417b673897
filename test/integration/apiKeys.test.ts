import { expect } from 'chai';
import { authChanged } from '../../src/accounts/authChanges';
import { createApiKey } from '../../src/apiKeys/service';
import { scopes, type Scope } from '../../src/domain/scopes';
import { client } from '../support/http';
import { createTestAccount } from '../support/system';

type Operation = { security?: Record<string, string[]>[] };

describe('POST /api/v1/api-keys', () => {
  it('201 with the secret, shown once; the key works, within its scopes', async () => {
    const { request, system } = await createTestAccount();
    const created = await request('POST', '/api/v1/api-keys', { json: { name: 'reader', scopes: ['documents:read'] } });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ name: 'reader', expiresAt: null, lastUsedAt: null, revokedAt: null });
    expect(created.body.scopes).to.deep.equal(['documents:read']);
    expect(created.body.secret).to.match(/^sk_live_[0-9A-Za-z]{43}$/);
    expect(created.body.secret.startsWith(created.body.prefix)).to.equal(true);

    const listed = await request('GET', '/api/v1/api-keys');
    expect(listed.status).to.equal(200);
    expect(listed.bytes.toString()).not.to.contain(created.body.secret);
    const { secret, ...shown } = created.body;
    expect(listed.body.data[0]).to.deep.equal(shown);
    expect(secret).to.be.a('string');

    const reader = client(system.url!, created.body.secret);
    expect((await reader('GET', '/api/v1/documents')).status).to.equal(200);
    const refused = await reader('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: 10 } });
    expect(refused.status).to.equal(403);
    expect(refused.body.error).to.equal('insufficient_scope');
    expect(refused.body.message).to.contain('documents:write');
  });

  it('gives every scope to a key made without a list, and an expiry when asked', async () => {
    const { request } = await createTestAccount();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await request('POST', '/api/v1/api-keys', { json: { name: 'ci', expiresAt } });
    expect(created.status).to.equal(201);
    expect(created.body.scopes).to.deep.equal([...scopes]);
    expect(created.body.expiresAt).to.equal(expiresAt);
  });

  it('400 for an unknown scope, an empty list, an expiry in the past, a blank name', async () => {
    const { request } = await createTestAccount();
    const bodies = [{ name: 'x', scopes: ['documents:delete'] }, { name: 'x', scopes: [] }, { name: 'x', expiresAt: '2020-01-01T00:00:00Z' }, { name: ' ' }];
    for (const json of bodies) {
      const response = await request('POST', '/api/v1/api-keys', { json });
      expect(response.status, JSON.stringify(json)).to.equal(400);
      expect(response.body.error).to.equal('validation_error');
    }
    const past = await request('POST', '/api/v1/api-keys', { json: { name: 'x', expiresAt: '2020-01-01T00:00:00Z' } });
    expect(past.body.details).to.deep.equal(['expiresAt must be in the future']);
  });

  it('refuses a scoped key any key management: no key can make one broader than itself', async () => {
    const { request, system } = await createTestAccount();
    const almostAll = scopes.filter((scope) => scope !== 'account:read');
    const scoped = client(system.url!, (await request('POST', '/api/v1/api-keys', { json: { name: 'most', scopes: almostAll } })).body.secret);
    for (const json of [{ name: 'wider' }, { name: 'same', scopes: almostAll }, { name: 'narrower', scopes: ['documents:read'] }]) {
      const response = await scoped('POST', '/api/v1/api-keys', { json });
      expect(response.status).to.equal(403);
      expect(response.body.error).to.equal('insufficient_scope');
      expect(response.body.message).to.contain('account:read');
    }
    expect((await scoped('GET', '/api/v1/api-keys')).status).to.equal(403);
    expect((await request('GET', '/api/v1/api-keys')).body.data).to.have.length(2);
  });
});

describe('DELETE /api/v1/api-keys/{id}', () => {
  it('revokes at once, even a key the cache holds: 401 from the next request', async () => {
    const { request, system } = await createTestAccount();
    const { body: made } = await request('POST', '/api/v1/api-keys', { json: { name: 'soon gone' } });
    const doomed = client(system.url!, made.secret);
    expect((await doomed('GET', '/api/v1/documents')).status).to.equal(200);
    expect((await doomed('GET', '/api/v1/documents')).status).to.equal(200); // now cached where there is a cache
    const revoked = await request('DELETE', `/api/v1/api-keys/${made.id}`);
    expect(revoked.status).to.equal(200);
    expect(revoked.body.revokedAt).to.be.a('string');
    const refused = await doomed('GET', '/api/v1/documents');
    expect(refused.status).to.equal(401);
    expect(refused.body.message).to.match(/revoked/);
    expect((await request('DELETE', `/api/v1/api-keys/${made.id}`)).body.revokedAt).to.equal(revoked.body.revokedAt);
  });

  it('404 for another account’s key, which keeps working', async () => {
    const mine = await createTestAccount();
    const theirs = await createTestAccount();
    const response = await mine.request('DELETE', `/api/v1/api-keys/${theirs.apiKeyId}`);
    expect(response.status).to.equal(404);
    expect(response.body.error).to.equal('not_found');
    expect((await theirs.request('GET', '/api/v1/documents')).status).to.equal(200);
    const listed = await mine.request('GET', '/api/v1/api-keys');
    expect(listed.body.data.map((key: { id: string }) => key.id)).to.deep.equal([mine.apiKeyId]);
  });
});

describe('an expired API key', () => {
  it('401 saying it expired', async () => {
    const { request, db, system } = await createTestAccount();
    const { body: made } = await request('POST', '/api/v1/api-keys', { json: { name: 'brief', expiresAt: new Date(Date.now() + 3_600_000).toISOString() } });
    const brief = client(system.url!, made.secret);
    expect((await brief('GET', '/api/v1/documents')).status).to.equal(200);
    // The hour has passed: moved in the database, not waited for.
    await db('api_keys')
      .where({ id: made.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    authChanged();
    const response = await brief('GET', '/api/v1/documents');
    expect(response.status).to.equal(401);
    expect(response.body.error).to.equal('unauthorized');
    expect(response.body.message).to.match(/expired at/);
  });
});

describe('lastUsedAt', () => {
  it('is written at most once a minute per key', async () => {
    const { request, db, apiKeyId } = await createTestAccount();
    let writes = 0;
    const count = (query: { sql: string; bindings?: unknown[] }) => {
      if (/^update "api_keys" set "last_used_at"/.test(query.sql) && query.bindings?.includes(apiKeyId)) writes++;
    };
    db.on('query', count);
    try {
      for (let i = 0; i < 5; i++) expect((await request('GET', '/api/v1/documents')).status).to.equal(200);
      expect(writes).to.equal(1);
      const { last_used_at: first } = await db('api_keys').where({ id: apiKeyId }).first();
      expect(first).to.be.instanceOf(Date);
      // A minute and more later (moved, not waited for): one more write.
      await db('api_keys')
        .where({ id: apiKeyId })
        .update({ last_used_at: new Date(Date.now() - 120_000) });
      authChanged();
      writes = 0; // that update was this test's
      for (let i = 0; i < 3; i++) await request('GET', '/api/v1/documents');
      expect(writes).to.equal(1);
      const listed = await request('GET', '/api/v1/api-keys');
      expect(Date.parse(listed.body.data[0].lastUsedAt)).to.be.greaterThan(Date.now() - 60_000);
    } finally {
      db.off('query', count);
    }
  });
});

describe('scopes, operation by operation (from the OpenAPI document)', () => {
  it('each operation refuses a key without a scope it needs, naming it, and lets one with exactly its scopes through', async () => {
    const { request, db, account, system } = await createTestAccount();
    // A key made before scopes existed: null scopes, every operation.
    expect((await db('api_keys').where({ account_id: account.id }).first()).scopes).to.equal(null);
    const document = (await request('GET', '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    const keyWith = new Map<string, ReturnType<typeof client>>();
    const keyFor = async (held: readonly Scope[]) => {
      const label = [...held].sort().join(' ');
      if (!keyWith.has(label)) keyWith.set(label, client(system.url!, (await createApiKey(db, account.id, label, { scopes: held })).secret));
      return keyWith.get(label)!;
    };
    let checked = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const needed = operation.security?.[0]?.bearerAuth as Scope[] | undefined;
        if (!needed) continue;
        const url = `/api/v1${path.replace(/\{\w+\}/g, 'x')}`;
        const label = `${method.toUpperCase()} ${path}`;
        for (const lacking of needed) {
          const refused = await (
            await keyFor(scopes.filter((scope) => scope !== lacking))
          )(method.toUpperCase(), url, { json: method === 'get' ? undefined : {} });
          expect(refused.status, `${label} without ${lacking}`).to.equal(403);
          expect(refused.body.error, label).to.equal('insufficient_scope');
          expect(refused.body.message, label).to.contain(lacking);
        }
        for (const key of [await keyFor(needed), request]) {
          const let_through = await key(method.toUpperCase(), url, { json: method === 'get' ? undefined : {} });
          expect(let_through.body?.error, `${label} with ${needed.join(' ')}: ${let_through.status}`).not.to.be.oneOf(['insufficient_scope', 'unauthorized']);
        }
        checked++;
      }
    }
    expect(checked).to.be.greaterThan(40);
  });
});
