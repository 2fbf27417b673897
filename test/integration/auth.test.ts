import { expect } from 'chai';
import { authChanged } from '../../src/accounts/authChanges';
import { createApiKey, revokeApiKey } from '../../src/apiKeys/service';
import { openDatabase } from '../../src/db';
import type { RunningSystem } from '../../src/system';
import { client } from '../support/http';
import { eventually } from '../support/signing';
import { createTestAccount, databaseKind, sharedSystem } from '../support/system';

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

describe('API key cache', () => {
  type Knex = import('knex').Knex;
  // A cached key lives a minute (src/apiKeys/cache.ts): what changes well within it was PostgreSQL's
  // notification, not the entry's age. The bound is a third of that minute, as generous as a loaded machine needs.
  const NOTIFIED_WITHIN_MS = 20_000;
  /** How many times `work` made the system look an API key up in the database. */
  async function keyLookups(db: Knex, work: () => Promise<unknown>) {
    let lookups = 0;
    const count = ({ sql }: { sql: string }) => void (/^select .* from "api_keys"/.test(sql) && lookups++);
    db.on('query', count);
    try {
      await work();
    } finally {
      db.off('query', count);
    }
    return lookups;
  }
  const getAccountTimes = (request: Awaited<ReturnType<typeof createTestAccount>>['request'], times: number) => async () => {
    for (let i = 0; i < times; i++) expect((await request('GET', '/api/v1/account')).status).to.equal(200);
  };
  /** Another process's database connection, as the CLI or a second api process has: its changes reach the cache only through PostgreSQL. */
  async function otherProcessDb(system: RunningSystem) {
    return openDatabase(system.config);
  }

  it('looks a key up once, then answers from memory (PostgreSQL); every time on PGlite, where no change notification can reach it', async () => {
    const { request, system } = await createTestAccount();
    const lookups = await keyLookups(system.database.knex, getAccountTimes(request, 4));
    expect(lookups).to.equal(databaseKind === 'postgres' ? 1 : 4);
  });

  it('refuses a key revoked by another process once PostgreSQL notifies the change, not at the end of the cached minute', async () => {
    const { request, system, apiKeyId } = await createTestAccount();
    await getAccountTimes(request, 2)();
    const other = await otherProcessDb(system);
    try {
      await other.knex('api_keys').where({ id: apiKeyId }).update({ revoked_at: other.knex.fn.now() });
      await eventually(async () => expect((await request('GET', '/api/v1/account')).status).to.equal(401), NOTIFIED_WITHIN_MS);
    } finally {
      await other.close();
    }
  });

  it('applies a plan changed by another process once PostgreSQL notifies the change, not at the end of the cached minute', async () => {
    const { request, system, account } = await createTestAccount('business');
    expect((await request('GET', '/api/v1/account')).body.plan).to.equal('business');
    const other = await otherProcessDb(system);
    try {
      await other.knex('accounts').where({ id: account.id }).update({ plan: 'free' });
      await eventually(async () => expect((await request('GET', '/api/v1/account')).body.plan).to.equal('free'), NOTIFIED_WITHIN_MS);
      // The cached account is the new one: a Business-only endpoint now refuses.
      const webhook = await request('POST', '/api/v1/webhooks', { json: { url: 'https://example.com/hooks', events: ['*'] } });
      expect(webhook.status).to.equal(403);
    } finally {
      await other.close();
    }
  });

  it('does not keep a lookup that overlapped a change', async () => {
    const { request, system } = await createTestAccount();
    const db = system.database.knex;
    // A change lands while the key's lookup is on its way to the database: what that lookup read may be stale.
    const changeMidLookup = ({ sql }: { sql: string }) => {
      if (!/^select .* from "api_keys"/.test(sql)) return;
      db.off('query', changeMidLookup);
      authChanged();
    };
    db.on('query', changeMidLookup);
    await getAccountTimes(request, 1)();
    expect(await keyLookups(db, getAccountTimes(request, 2))).to.equal(databaseKind === 'postgres' ? 1 : 2);
  });

  it('revoking through the service takes effect in this process at once', async () => {
    const { request, db, apiKeyId } = await createTestAccount();
    await getAccountTimes(request, 2)();
    await revokeApiKey(db, apiKeyId);
    expect((await request('GET', '/api/v1/account')).status).to.equal(401);
  });

  // PGlite has no listening connection to lose.
  if (databaseKind === 'postgres') {
    it('caches nothing while the notification connection is down, and resumes once it is back', async () => {
      const { request, system, apiKeyId, account } = await createTestAccount();
      const db = system.database.knex;
      await getAccountTimes(request, 1)();
      const other = await otherProcessDb(system);
      try {
        await other.knex.raw("select pg_terminate_backend(pid) from pg_stat_activity where query = 'listen signet_auth_changed'");
        await eventually(async () => expect(await keyLookups(db, getAccountTimes(request, 2))).to.equal(2), NOTIFIED_WITHIN_MS);
        await other.knex('api_keys').where({ id: apiKeyId }).update({ revoked_at: other.knex.fn.now() });
        await eventually(async () => expect((await request('GET', '/api/v1/account')).status).to.equal(401), NOTIFIED_WITHIN_MS);
        // A fresh key each try: once the connection is back, its first request looks it up and the next two don't.
        await eventually(async () => {
          const { secret } = await createApiKey(db, account.id);
          expect(await keyLookups(db, getAccountTimes(client(system.url!, secret), 3))).to.equal(1);
        }, NOTIFIED_WITHIN_MS);
      } finally {
        await other.close();
      }
    });
  }
});
