import { expect } from 'chai';
import Koa from 'koa';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { requiredScopes } from '../../src/api/scopes';
import { authenticate } from '../../src/apiKeys/authenticate';
import type { ApiKeyAuthenticator } from '../../src/apiKeys/cache';
import type { Authenticated } from '../../src/apiKeys/service';
import { openApiDocument } from '../../src/openapiDocument';
import { scopes } from '../../src/domain/scopes';
import { AppError } from '../../src/errors';

type Operation = { security?: Record<string, string[]>[]; responses?: Record<string, unknown> };

describe('scopes in the OpenAPI document', () => {
  let operations: { label: string; operation: Operation }[];
  before(async () => {
    const document = (await openApiDocument()) as { paths: Record<string, Record<string, Operation>> };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ label: `${method.toUpperCase()} ${path}`, operation })),
    );
  });

  it('states the scopes every operation under the API key needs, each a known scope', () => {
    expect(operations.length).to.be.greaterThan(40);
    for (const { label, operation } of operations) {
      expect(operation.security, `${label} states no security`).to.be.an('array');
      if (operation.security!.length === 0) continue; // the signer's pages: their token, no key
      expect(operation.security, label).to.have.length(1);
      const needed = operation.security![0].bearerAuth;
      expect(needed, `${label} names no scope`).to.be.an('array').with.length.greaterThan(0);
      for (const scope of needed) expect(scopes, `${label}: ${scope}`).to.include(scope);
      expect(operation.responses, `${label} documents no 403`).to.have.property('403');
    }
  });

  it('reads need :read, writes :write, keys every scope', () => {
    const needs = Object.fromEntries(operations.map(({ label, operation }) => [label, operation.security?.[0]?.bearerAuth]));
    expect(needs['GET /documents']).to.deep.equal(['documents:read']);
    expect(needs['POST /signatures']).to.deep.equal(['signatures:write']);
    expect(needs['PATCH /templates/{id}']).to.deep.equal(['templates:write']);
    expect(needs['POST /webhooks/{id}/deliveries/{deliveryId}/redeliver']).to.deep.equal(['webhooks:write']);
    expect(needs['GET /account']).to.deep.equal(['account:read']);
    expect(needs['POST /api-keys']).to.deep.equal([...scopes]);
  });
});

describe('requiredScopes', () => {
  it('refuses a route whose tag decides no scope and which names none', () => {
    expect(() => requiredScopes({ tag: 'Mystery', method: 'get', path: '/mystery' })).to.throw(/tag Mystery has no scope/);
    expect(requiredScopes({ tag: 'Mystery', method: 'post', path: '/mystery', scope: 'account:read' })).to.deep.equal(['account:read']);
  });

  it('asks a key with every scope to change the account, which has no :write scope of its own', () => {
    expect(requiredScopes({ tag: 'Account', method: 'get', path: '/account' })).to.deep.equal(['account:read']);
    expect(requiredScopes({ tag: 'Account', method: 'patch', path: '/account/branding' })).to.deep.equal([...scopes]);
  });
});

describe('authenticate: expiry', () => {
  // What a cache hands back, a second after the key's expiry: refused all the same.
  const cached = (expiresAt: Date | null): ApiKeyAuthenticator => ({
    authenticate: async () =>
      ({
        keyId: 'key_x',
        scopes: null,
        expiresAt,
        account: { id: 'acc_x', email: 'a@example.com', name: null, plan: 'free', emailVerified: true, createdAt: new Date() },
      }) as Authenticated,
    close: async () => undefined,
  });

  async function statusWith(apiKeys: ApiKeyAuthenticator) {
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        ctx.status = error.status;
        ctx.body = { error: error.code, message: error.message };
      }
    });
    app.use(authenticate(apiKeys));
    app.use((ctx) => (ctx.body = { ok: true }));
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers: { Authorization: 'Bearer sk_live_x' } });
      return { status: response.status, body: await response.json() };
    } finally {
      server.close();
    }
  }

  it('401 saying it expired, for a key whose expiry has passed, even one the cache holds', async () => {
    const { status, body } = await statusWith(cached(new Date(Date.now() - 1000)));
    expect(status).to.equal(401);
    expect(body.error).to.equal('unauthorized');
    expect(body.message).to.match(/expired/);
  });

  it('lets a key through until then', async () => {
    expect((await statusWith(cached(new Date(Date.now() + 60_000)))).status).to.equal(200);
    expect((await statusWith(cached(null))).status).to.equal(200);
  });
});
