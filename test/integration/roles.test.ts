import { expect } from 'chai';
import type Router from '@koa/router';
import { roles, type Role } from '../../src/domain/roles';
import { testApp } from '../support/app';
import { invitedMember, keyOf, ownerOfNewAccount } from '../support/members';
import { sharedSystem } from '../support/system';
import type { Request } from '../support/http';
import type { ConsoleClient } from '../support/consoleClient';

// Every API operation and every console page, with every role: allowed, or refused with a 403 that says
// so; never a 500. What each role may do is written out here by hand, apart from src/domain/roles.ts.
const senderWrites = ['/documents', '/signatures', '/templates', '/bulk-sends'];
const underAny = (path: string, prefixes: string[]) => prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

/** Whether a role may make this API request (path without /api/v1). */
function apiAllows(role: Role, method: string, path: string) {
  if (role === 'owner' || role === 'admin') return true;
  if (method === 'get') return !underAny(path, ['/api-keys']);
  return role === 'sender' && underAny(path, senderWrites);
}

/** Whether a role may open this console page or post this form (path without /app). */
function consoleAllows(role: Role, method: string, path: string) {
  if (role === 'owner' || role === 'admin') return true;
  const areas = ['/documents', '/requests', '/templates', '/bulk-sends', '/webhooks', '/settings'];
  if (!underAny(path, areas) && path !== '/') return true; // log in, sign up, invitations, the address's link…
  const writes = method !== 'GET' || path.endsWith('/new');
  if (!writes) return !underAny(path, ['/settings/api-keys']);
  return role === 'sender' && underAny(path, ['/documents', '/requests', '/templates', '/bulk-sends']);
}

interface Operation {
  security?: { bearerAuth?: string[] }[];
}

describe('every role, every API operation and console page: allowed or 403, never a 500', function () {
  this.timeout(300_000);
  const people = new Map<Role, { api: Request; browser: ConsoleClient }>();
  let baseUrl: string;

  before(async () => {
    baseUrl = (await sharedSystem()).url!;
    const owner = await ownerOfNewAccount(baseUrl, 'Acme Ltd', 'business'); // webhooks are the Business plan's
    people.set('owner', { api: owner.api, browser: owner.browser });
    for (const role of ['admin', 'sender', 'viewer'] as const) {
      const member = await invitedMember(baseUrl, owner.browser, role);
      people.set(role, { api: (await keyOf(baseUrl, member, owner.accountId)).api, browser: member.browser });
    }
  });

  it('the API: each operation of the OpenAPI document with a key made by each role', async () => {
    const document = (await people.get('owner')!.api('GET', '/api/v1/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    let checked = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        if (!operation.security?.[0]?.bearerAuth) continue; // not an API key's: signing pages, verification, health
        const url = `/api/v1${path.replace(/\{\w+\}/g, 'x')}`;
        for (const role of roles) {
          const answer = await people.get(role)!.api(method.toUpperCase(), url, method === 'get' || method === 'delete' ? {} : { json: {} });
          const label = `${role}: ${method.toUpperCase()} ${path} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
          expect(answer.status, label).to.be.below(500);
          if (apiAllows(role, method, path)) expect(answer.body?.error, label).to.not.equal('insufficient_scope');
          else expect([answer.status, answer.body?.error], label).to.deep.equal([403, 'insufficient_scope']);
          checked++;
        }
      }
    }
    expect(checked).to.be.greaterThan(40 * roles.length);
  });

  it('the console offers each role only what it may do: the nav, and the buttons that write', async () => {
    const offered = async (role: Role, path: string, needle: string) => (await people.get(role)!.browser.request('GET', path)).text.includes(needle);
    for (const role of roles) {
      const writes = role !== 'viewer';
      expect(await offered(role, '/app/requests', 'href="/app/requests/new"'), role).to.equal(writes);
      expect(await offered(role, '/app/templates', 'href="/app/templates/new"'), role).to.equal(writes);
      expect(await offered(role, '/app/documents', 'id="dropzone"'), role).to.equal(writes);
      expect(await offered(role, '/app/webhooks', 'href="/app/webhooks/new"'), role).to.equal(role === 'owner' || role === 'admin');
      expect(await offered(role, '/app', 'href="/app/settings/api-keys"'), role).to.equal(role === 'owner' || role === 'admin');
      expect(await offered(role, '/app/settings/branding', 'action="/app/settings/branding"'), role).to.equal(role === 'owner' || role === 'admin');
      expect(await offered(role, '/app/settings/branding', 'Only the owner and admins change the brand.'), role).to.equal(
        role === 'sender' || role === 'viewer',
      );
    }
  });

  it('the console: each page and form of its router with each role’s session', async () => {
    const { app } = await testApp();
    const router = app.middleware.map((middleware) => (middleware as { router?: Router }).router).find((found) => found?.opts.prefix === '/app')!;
    // Leaving and logging out end the session the walk goes on with: they are tested on their own (members.test.ts).
    const skipped = new Set(['/app/logout', '/app/account/leave']);
    const endpoints = router.stack
      .filter((layer) => layer.methods.length && !skipped.has(String(layer.path)))
      .flatMap((layer) => layer.methods.filter((method) => method === 'GET' || method === 'POST').map((method) => ({ method, path: String(layer.path) })));
    expect(endpoints.length).to.be.greaterThan(50);
    for (const { method, path } of endpoints) {
      const url = path.replace(/:\w+/g, 'x');
      for (const role of roles) {
        const { browser } = people.get(role)!;
        if (method === 'POST') await browser.request('GET', '/app/settings/plan'); // a page for the form's token
        const answer = method === 'GET' ? await browser.request('GET', url) : await browser.post(url);
        const label = `${role}: ${method} ${path} → ${answer.status} ${answer.text.slice(0, 200)}`;
        expect(answer.status, label).to.be.below(500);
        const refused = answer.status === 403 && answer.text.includes('an admin can change your role');
        expect(refused, label).to.equal(!consoleAllows(role, method, path.slice('/app'.length) || '/'));
      }
    }
    // Still logged in, every one of them.
    for (const role of roles) expect((await people.get(role)!.browser.request('GET', '/app')).status, role).to.equal(200);
  });
});
