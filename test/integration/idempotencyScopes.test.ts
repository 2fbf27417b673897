import { expect } from 'chai';
import { createApiKey } from '../../src/apiKeys/service';
import { scopes, type Scope } from '../../src/domain/scopes';
import { client, type Request } from '../support/http';
import { createTestAccount, useSharedSystem } from '../support/system';
import { uploadDocument } from '../support/documents';

type Account = Awaited<ReturnType<typeof createTestAccount>>;
interface Operation {
  security?: { bearerAuth?: string[] }[];
}

const withKey = (key: string) => ({ 'Idempotency-Key': key });
const keyWith = async (account: Account, held: readonly Scope[] | null) =>
  client(account.system.url!, (await createApiKey(account.db, account.account.id, 'other', { scopes: held })).secret);

async function pendingRequest(account: Account) {
  const document = await uploadDocument(account.request, { fileName: 'a.pdf', pages: ['Agreement'] });
  const created = await account.request('POST', '/api/v1/signatures', {
    json: { document_id: document.id, title: 'Agreement', signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] },
  });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return { id: created.body.id as string, signerId: created.body.signers[0].id as string };
}

describe('Idempotency-Key and the scopes of the key that replays', function () {
  this.timeout(120_000);
  useSharedSystem();

  // The POSTs whose answer holds a secret shown once: what a replay must never hand to another key.
  const secretAnswers: { name: string; path: (account: Account) => Promise<string>; json: object; secret: (body: any) => string }[] = [
    { name: 'POST /api-keys', path: async () => '/api/v1/api-keys', json: { name: 'ci' }, secret: (body) => body.secret },
    {
      name: 'POST /webhooks',
      path: async () => '/api/v1/webhooks',
      json: { url: 'https://example.com/hooks', events: ['*'] },
      secret: (body) => body.secret,
    },
    {
      name: 'POST /webhooks/{id}/rotate-secret',
      path: async (account) => {
        const webhook = await account.request('POST', '/api/v1/webhooks', { json: { url: 'https://example.com/hooks', events: ['*'] } });
        return `/api/v1/webhooks/${webhook.body.id}/rotate-secret`;
      },
      json: {},
      secret: (body) => body.secret,
    },
    {
      name: 'POST /signatures/{id}/signers/{signerId}/link',
      path: async (account) => {
        const request = await pendingRequest(account);
        return `/api/v1/signatures/${request.id}/signers/${request.signerId}/link`;
      },
      json: {},
      secret: (body) => body.url,
    },
  ];

  for (const operation of secretAnswers) {
    it(`${operation.name}: the kept answer, and its secret, go to the key that made it alone`, async () => {
      const account = await createTestAccount();
      const path = await operation.path(account);
      const first = await account.request('POST', path, { json: operation.json, headers: withKey('ci-deploy-1') });
      expect(first.status, JSON.stringify(first.body)).to.be.oneOf([200, 201]);
      const secret = operation.secret(first.body);
      expect(secret).to.be.a('string').with.length.greaterThan(10);

      // A key lacking the scope: the same 403 as for a key never used, and nothing of the answer.
      const reader = await keyWith(account, ['documents:read']);
      const replayed = await reader('POST', path, { json: operation.json, headers: withKey('ci-deploy-1') });
      const unused = await reader('POST', path, { json: operation.json, headers: withKey('never-used') });
      for (const answer of [replayed, unused]) {
        expect(answer.status).to.equal(403);
        expect(answer.body.error).to.equal('insufficient_scope');
        expect(answer.headers.get('idempotent-replayed')).to.equal(null);
      }
      expect(replayed.body.message).to.equal(unused.body.message);
      expect(replayed.bytes.toString()).not.to.contain(secret);

      // Another key with every scope: refused, without the secret.
      const other = await keyWith(account, null);
      const refused = await other('POST', path, { json: operation.json, headers: withKey('ci-deploy-1') });
      expect(refused.status).to.equal(422);
      expect(refused.body.error).to.equal('idempotency_key_reused');
      expect(refused.bytes.toString()).not.to.contain(secret);

      // The key that made it gets its answer again.
      const again = await account.request('POST', path, { json: operation.json, headers: withKey('ci-deploy-1') });
      expect(again.status).to.equal(first.status);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(operation.secret(again.body)).to.equal(secret);
    });
  }

  it('every POST of the OpenAPI document: a kept answer is replayed to no key lacking a scope the operation needs', async () => {
    const account = await createTestAccount();
    const document = (await account.request('GET', '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    const lackingKeys = new Map<Scope, Request>();
    let checked = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      const needed = methods.post?.security?.[0]?.bearerAuth as Scope[] | undefined;
      if (!needed) continue;
      const label = `POST ${path}`;
      const url = `/api/v1${path.replace(/\{\w+\}/g, 'x')}`;
      const key = `replay ${label}`;
      const first = await account.request('POST', url, { json: {}, headers: withKey(key) });
      const kept = await account.request('POST', url, { json: {}, headers: withKey(key) });
      // The answer was kept (else there would be nothing to replay, and nothing checked).
      expect(kept.headers.get('idempotent-replayed'), `${label}: ${first.status}`).to.equal('true');
      for (const lacking of needed) {
        if (!lackingKeys.has(lacking))
          lackingKeys.set(
            lacking,
            await keyWith(
              account,
              scopes.filter((scope) => scope !== lacking),
            ),
          );
        const answer = await lackingKeys.get(lacking)!('POST', url, { json: {}, headers: withKey(key) });
        expect(answer.status, `${label} without ${lacking}`).to.equal(403);
        expect(answer.body.error, label).to.equal('insufficient_scope');
        expect(answer.headers.get('idempotent-replayed'), label).to.equal(null);
      }
      checked++;
    }
    expect(checked).to.be.greaterThan(12);
  });
});
