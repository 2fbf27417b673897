import { expect } from 'chai';
import { makePdf } from '../support/pdfs';
import { consoleClient, mailedLink, newEmail, PASSWORD, uploadPdf } from '../support/consoleClient';
import { invitedMember, keyOf, ownerOfNewAccount } from '../support/members';
import { createSigningRequest, eventually } from '../support/signing';
import { sharedSystem } from '../support/system';

type Db = Awaited<ReturnType<typeof sharedSystem>>['database']['knex'];

describe('members of an account: invitations, roles, removal, hand-over, and who did what', function () {
  this.timeout(120_000);
  let baseUrl: string;
  let db: Db;

  before(async () => {
    const system = await sharedSystem();
    baseUrl = system.url!;
    db = system.database.knex;
  });

  const roleOf = async (id: string) => (await db('users').where({ id }).first('role'))?.role as string | undefined;

  it('an invitation by e-mail: single use, hashed at rest, the invitee joins with the role it gives and sees the account', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    const member = await invitedMember(baseUrl, owner.browser, 'sender');
    expect(await roleOf(member.id)).to.equal('sender');
    const home = await member.browser.request('GET', '/app');
    expect(home.status).to.equal(200);
    const listed = await owner.api('GET', '/api/v1/members');
    expect(listed.body.data.map((one: { email: string; role: string }) => [one.email, one.role])).to.deep.equal([
      [owner.email, 'owner'],
      [member.email, 'sender'],
    ]);
    // Only the token's SHA-256 is stored; the link works once.
    const token = member.link.split('/').pop()!;
    const stored = await db('invitations').where({ account_id: owner.accountId }).first();
    expect(JSON.stringify(stored)).not.to.include(token);
    expect(stored.accepted_at).to.be.an.instanceOf(Date);
    const again = consoleClient(baseUrl);
    await again.request('GET', '/app/login'); // a page with a form, for its token
    expect((await again.request('GET', member.link)).status).to.equal(404);
    expect((await again.post(member.link, { password: PASSWORD })).status).to.equal(404);
    expect(await db('users').where({ account_id: owner.accountId }).count({ n: '*' }).first()).to.deep.equal({ n: 2 });
  });

  it('a revoked or expired invitation does not work; inviting a member or another account’s person is a 409', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    const revokedEmail = newEmail();
    const created = await owner.api('POST', '/api/v1/invitations', { json: { email: revokedEmail, role: 'viewer' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ email: revokedEmail, role: 'viewer', invitedBy: owner.email });
    const revokedLink = await mailedLink(revokedEmail, '/app/invitations/');
    const revoked = await owner.api('DELETE', `/api/v1/invitations/${created.body.id}`);
    expect(revoked.status).to.equal(200);
    expect((await owner.api('DELETE', `/api/v1/invitations/${created.body.id}`)).status).to.equal(409);
    expect((await consoleClient(baseUrl).request('GET', revokedLink)).status).to.equal(404);

    const expiredEmail = newEmail();
    const expiring = await owner.api('POST', '/api/v1/invitations', { json: { email: expiredEmail, role: 'viewer' } });
    await db('invitations')
      .where({ id: expiring.body.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const late = consoleClient(baseUrl);
    const link = await mailedLink(expiredEmail, '/app/invitations/');
    await late.request('GET', '/app/login');
    expect((await late.post(link, { password: PASSWORD })).status).to.equal(404);
    expect(await db('users').where({ email: expiredEmail }).first()).to.equal(undefined);

    expect((await owner.api('POST', '/api/v1/invitations', { json: { email: owner.email, role: 'admin' } })).status).to.equal(409);
    const stranger = await ownerOfNewAccount(baseUrl, 'Other Ltd');
    const elsewhere = await owner.api('POST', '/api/v1/invitations', { json: { email: stranger.email, role: 'admin' } });
    expect(elsewhere.status).to.equal(409);
    expect(elsewhere.body.message).to.match(/another Signet account/);
    expect((await owner.api('POST', '/api/v1/invitations', { json: { email: newEmail(), role: 'owner' } })).status).to.equal(400);
  });

  it('an invitation takes one of the plan’s e-mails of the hour: past them, a 429 in the API and on the page, and no invitation', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    await db('account_mail_log').insert(
      Array.from({ length: 100 }, (_, index) => ({ idempotency_key: `earlier:${owner.accountId}:${index}`, account_id: owner.accountId })),
    );
    const refused = await owner.api('POST', '/api/v1/invitations', { json: { email: newEmail(), role: 'viewer' } });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(429);
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    const page = await owner.browser.submit('/app/settings/members', '/app/settings/members/invitations', { email: newEmail(), role: 'viewer' });
    expect(page.status).to.equal(429);
    expect(page.headers.get('retry-after')).to.match(/^\d+$/);
    expect(page.text).to.include('role="alert"');
    expect(await db('invitations').where({ account_id: owner.accountId }).first()).to.equal(undefined);
  });

  it('roles change through the API but the owner’s never does; the owner cannot be removed nor leave', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    const member = await invitedMember(baseUrl, owner.browser, 'viewer');
    const changed = await owner.api('PATCH', `/api/v1/members/${member.id}`, { json: { role: 'admin' } });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body).to.include({ id: member.id, role: 'admin' });
    expect((await owner.api('PATCH', `/api/v1/members/${owner.id}`, { json: { role: 'viewer' } })).status).to.equal(409);
    expect((await owner.api('DELETE', `/api/v1/members/${owner.id}`)).status).to.equal(409);
    await owner.browser.request('GET', '/app/settings/members');
    expect((await owner.browser.post('/app/account/leave')).status).to.equal(409);
    // An admin may not remove the owner either; another account's member is not found.
    await member.browser.request('GET', '/app/settings/members');
    expect((await member.browser.post(`/app/settings/members/${owner.id}/remove`)).status).to.equal(409);
    const stranger = await ownerOfNewAccount(baseUrl, 'Other Ltd');
    expect((await stranger.api('DELETE', `/api/v1/members/${member.id}`)).status).to.equal(404);
    expect((await stranger.api('PATCH', `/api/v1/members/${member.id}`, { json: { role: 'viewer' } })).status).to.equal(404);
    expect(await roleOf(owner.id)).to.equal('owner');
    expect(await roleOf(member.id)).to.equal('admin');
  });

  it('removing a member ends their sessions at once and revokes their keys; what they did stays theirs', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    const member = await invitedMember(baseUrl, owner.browser, 'sender');
    const { api } = await keyOf(baseUrl, member, owner.accountId);
    const { signingRequest } = await createSigningRequest(api);
    const removed = await owner.api('DELETE', `/api/v1/members/${member.id}`);
    expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
    const after = await member.browser.request('GET', '/app');
    expect(after.status).to.equal(302);
    expect(after.location).to.equal('/app/login');
    expect((await api('GET', '/api/v1/documents')).status).to.equal(401);
    // The request keeps its sender, and its audit trail and events name them.
    const request = await owner.api('GET', `/api/v1/signatures/${signingRequest.id}`);
    expect(request.body.sentBy).to.deep.include({ type: 'api_key', memberId: member.id, memberEmail: member.email });
    const trail = await owner.api('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`);
    const created = trail.body.data.find((step: { action: string }) => step.action === 'created');
    expect(created.actor).to.include(member.email);
  });

  it('a member’s role bounds the keys they made, and a change of role narrows them at once', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    const member = await invitedMember(baseUrl, owner.browser, 'sender');
    const { api } = await keyOf(baseUrl, member, owner.accountId);
    expect((await api('POST', '/api/v1/webhooks', { json: { url: 'https://example.com/hook', events: ['*'] } })).status).to.equal(403);
    expect((await api('GET', '/api/v1/api-keys')).status).to.equal(403);
    const pdf = await makePdf(['Agreement']);
    const upload = () => api('POST', '/api/v1/documents', { json: { fileName: 'a.pdf', fileSize: pdf.length, content: pdf.toString('base64') } });
    expect((await upload()).status).to.equal(201);
    await owner.api('PATCH', `/api/v1/members/${member.id}`, { json: { role: 'viewer' } });
    // The api's key cache empties when roles change (a notification at commit): bounded wait.
    await eventually(async () => expect((await upload()).status).to.equal(403), 5000);
    expect((await api('GET', '/api/v1/documents')).status).to.equal(200);
  });

  it('the owner hands the account on: exactly one owner, the former one an admin', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    const member = await invitedMember(baseUrl, owner.browser, 'admin');
    // An admin cannot take the account.
    await member.browser.request('GET', '/app/settings/members');
    expect((await member.browser.post('/app/settings/members/transfer', { memberId: member.id })).status).to.equal(403);
    const page = await owner.browser.request('GET', '/app/settings/members');
    expect(page.text).to.include('Hand the account on');
    const handed = await owner.browser.post('/app/settings/members/transfer', { memberId: member.id });
    expect(handed.status, handed.text).to.equal(303);
    expect(await roleOf(member.id)).to.equal('owner');
    expect(await roleOf(owner.id)).to.equal('admin');
    expect(await db('users').where({ account_id: owner.accountId, role: 'owner' }).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
    // The new owner may remove the former one.
    await member.browser.request('GET', '/app/settings/members');
    expect((await member.browser.post(`/app/settings/members/${owner.id}/remove`)).status).to.equal(303);
    expect(await roleOf(owner.id)).to.equal(undefined);
  });

  it('every action names its actor: a member in the console, a key and its member through the API, in events, the audit trail and the certificate', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    const member = await invitedMember(baseUrl, owner.browser, 'sender');
    const document = await uploadPdf(member.browser, await makePdf(['Agreement']));
    const documentEvent = await db('events').where({ type: 'document.created' }).whereRaw(`data->>'documentId' = ?`, [document.id]).first();
    expect(documentEvent.data.actor).to.deep.equal({ type: 'member', id: member.id, email: member.email });

    const { signingRequest } = await createSigningRequest(owner.api);
    const actor = { type: 'api_key', memberId: owner.id, memberEmail: owner.email };
    expect(signingRequest.sentBy).to.deep.include(actor);
    const createdEvent = await eventually(async () => {
      const row = await db('events').where({ type: 'signing_request.created' }).whereRaw(`data->>'signingRequestId' = ?`, [signingRequest.id]).first();
      expect(row).to.not.equal(undefined);
      return row;
    });
    expect(createdEvent.data.actor).to.deep.include(actor);

    // The member cancels it in the console: the cancellation is theirs.
    await member.browser.request('GET', `/app/requests/${signingRequest.id}`);
    const cancelled = await member.browser.post(`/app/requests/${signingRequest.id}/cancel`, { reason: 'Wrong draft' });
    expect(cancelled.status, cancelled.text).to.equal(303);
    const cancelEvent = await eventually(async () => {
      const row = await db('events').where({ type: 'signing_request.cancelled' }).whereRaw(`data->>'signingRequestId' = ?`, [signingRequest.id]).first();
      expect(row).to.not.equal(undefined);
      return row;
    });
    expect(cancelEvent.data.actor).to.deep.equal({ type: 'member', id: member.id, email: member.email });
    const trail = await owner.api('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`);
    const actors = Object.fromEntries(trail.body.data.map((step: { action: string; actor: string }) => [step.action, step.actor]));
    expect(actors.created).to.equal(`API key “owner” of ${owner.email}`);
    expect(actors.cancelled).to.equal(member.email);
  });

  it('a member resets their own password; it proves their address, not the account’s', async () => {
    const owner = await ownerOfNewAccount(baseUrl);
    const member = await invitedMember(baseUrl, owner.browser, 'viewer');
    const browser = consoleClient(baseUrl);
    expect((await browser.submit('/app/password/forgot', '/app/password/forgot', { email: member.email })).status).to.be.oneOf([200, 303]);
    const link = await mailedLink(member.email, '/app/password/reset/');
    await browser.request('GET', link);
    expect((await browser.post(link, { password: 'another fine password' })).status).to.equal(303);
    const login = await consoleClient(baseUrl).submit('/app/login', '/app/login', { email: member.email, password: 'another fine password' });
    expect(login.status).to.equal(303);
    expect(await roleOf(member.id)).to.equal('viewer');
    expect((await owner.api('GET', '/api/v1/documents')).status).to.equal(200); // the account's keys still work
  });

  describe('races: one outcome each', () => {
    it('two admins removing each other at the same moment: exactly one goes', async () => {
      for (let round = 0; round < 6; round++) {
        const owner = await ownerOfNewAccount(baseUrl);
        const [a, b] = [await invitedMember(baseUrl, owner.browser, 'admin'), await invitedMember(baseUrl, owner.browser, 'admin')];
        await Promise.all([a.browser.request('GET', '/app/settings/members'), b.browser.request('GET', '/app/settings/members')]);
        const answers = await Promise.all([a.browser.post(`/app/settings/members/${b.id}/remove`), b.browser.post(`/app/settings/members/${a.id}/remove`)]);
        const left = [await roleOf(a.id), await roleOf(b.id)].filter(Boolean);
        expect(left, `round ${round}: ${answers.map((answer) => answer.status)}`).to.have.length(1);
        expect(answers.map((answer) => answer.status).sort()).to.deep.equal([303, 403].sort());
      }
    });

    it('an invitation accepted while it is revoked: accepted and a member, or revoked and no member', async () => {
      const owner = await ownerOfNewAccount(baseUrl);
      for (let round = 0; round < 10; round++) {
        const email = newEmail();
        const created = await owner.api('POST', '/api/v1/invitations', { json: { email, role: 'viewer' } });
        const link = await mailedLink(email, '/app/invitations/');
        const invitee = consoleClient(baseUrl);
        await invitee.request('GET', link);
        const [accepted, revoked] = await Promise.all([
          invitee.post(link, { password: PASSWORD }),
          owner.api('DELETE', `/api/v1/invitations/${created.body.id}`),
        ]);
        const joined = await db('users').where({ email }).first();
        if (accepted.status === 303) {
          expect(revoked.status, `round ${round}`).to.equal(409);
          expect(joined).to.not.equal(undefined);
        } else {
          expect([accepted.status, revoked.status], `round ${round}`).to.deep.equal([404, 200]);
          expect(joined).to.equal(undefined);
        }
      }
    });

    it('a member removed while their uploads are in flight: each upload made and theirs, or refused; never a 500', async () => {
      const owner = await ownerOfNewAccount(baseUrl);
      const member = await invitedMember(baseUrl, owner.browser, 'sender');
      const pdf = await makePdf(['Agreement']);
      await member.browser.request('GET', '/app/documents');
      const upload = () => {
        const body = new FormData();
        body.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'a.pdf');
        return member.browser.request('POST', '/app/documents', { body, headers: { Accept: 'application/json', 'X-CSRF-Token': member.browser.csrf } });
      };
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, upload),
        owner.api('DELETE', `/api/v1/members/${member.id}`),
        ...Array.from({ length: 8 }, upload),
      ]);
      const uploads = answers.filter((answer) => 'text' in answer);
      for (const answer of uploads as { status: number }[]) expect(answer.status).to.be.oneOf([201, 302, 403]);
      const made = (uploads as { status: number; json?: { id: string } }[]).filter((answer) => answer.status === 201).map((answer) => answer.json!.id);
      const events = await db('events').where({ type: 'document.created', account_id: owner.accountId }).select('data');
      expect(events.map((event) => event.data.documentId).sort()).to.deep.equal([...made].sort());
      for (const event of events) expect(event.data.actor).to.deep.equal({ type: 'member', id: member.id, email: member.email });
      expect(await roleOf(member.id)).to.equal(undefined);
    });
  });
});
