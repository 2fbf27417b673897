import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createLogger } from '../../src/logger';
import { startApp } from '../support/app';
import { client, type TestResponse } from '../support/http';
import { createSigningRequest, drawnSignature, eventually, signingLinkOf, tokenOf } from '../support/signing';
import { createTestAccount, runSweeper, useSharedSystem } from '../support/system';
import { templateField, uploadLease } from '../support/templates';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const ACCESS_CODE = 'Zq7!kite';

/** A signer's browser on one link: its requests carry the cookie a right code set, as a browser's would. */
function browserOn(account: Account, url: string, baseUrl = account.system.url!) {
  const token = tokenOf(url);
  const call = client(baseUrl);
  let cookie = '';
  const send = async (method: string, path: string, options: { json?: unknown; headers?: Record<string, string> } = {}) => {
    const response = await call(method, `/sign/${token}${path}`, {
      ...options,
      headers: { 'User-Agent': 'verification-test', ...options.headers, ...(cookie ? { Cookie: cookie } : {}) },
    });
    const set = response.headers.getSetCookie().find((line) => line.startsWith('signet_verified='));
    if (set) {
      expect(set).to.include(`Path=/sign/${token}`).and.include('HttpOnly');
      cookie = set.split(';')[0];
    }
    return response;
  };
  return { token, send, verify: (code: string) => send('POST', '/verification', { json: { code } }) };
}

async function requestWith(account: Account, verification: Record<string, unknown>) {
  const { signingRequest, document } = await createSigningRequest(account.request, {
    signers: [
      { name: 'Ada Lovelace', email: `ada-${Math.random().toString(36).slice(2)}@example.com`, verification },
      { name: 'Alan Turing', email: 'alan@example.com' },
    ],
  });
  const signer = signingRequest.signers[0];
  const url = await signingLinkOf(account.request, signingRequest.id, signer.id);
  return { signingRequest, document, signer, url, browser: browserOn(account, url) };
}

const codeMails = (account: Account, email: string) =>
  account.db('mail_outbox').where('to_address', 'like', `%${email}%`).andWhere('idempotency_key', 'like', 'verification-code:%').orderBy('id', 'desc');
const lastCode = async (account: Account, email: string) => /(\d{6})/.exec((await codeMails(account, email).first('subject')).subject)![1];
const expectError = (response: TestResponse, status: number, error: string) => {
  expect(response.status, JSON.stringify(response.body)).to.equal(status);
  expect(response.body.error).to.equal(error);
};

/** The signer's lock runs out, as if its time had passed. */
const lockRunsOut = (account: Account, signerId: string) =>
  account
    .db('signer_verifications')
    .where({ signer_id: signerId })
    .update({ locked_until: new Date(Date.now() - 1000) });

/** Twenty wrong codes, each lock run out before the next five: every wrong try the request allows is spent. */
async function spendEveryTry(account: Account, signerId: string, browser: ReturnType<typeof browserOn>) {
  for (let lock = 1; lock <= 4; lock++) {
    for (let tries = 0; tries < 5; tries++) await browser.verify(`wrong-${lock}`);
    if (lock < 4) await lockRunsOut(account, signerId);
  }
}

/** The sender reminds the signers whose turn it is, an hour after their invitations went; the ids reminded. */
async function remind(account: Account, requestId: string): Promise<string[]> {
  const signers = () => account.db('signers').where({ signing_request_id: requestId });
  await eventually(async () => expect(await signers().whereNull('last_mailed_at')).to.have.length(0), 60_000);
  await signers().update({ last_mailed_at: account.db.raw("now() - interval '61 minutes'") });
  const reminded = await account.request('POST', `/api/v1/signatures/${requestId}/remind`);
  expect(reminded.status, JSON.stringify(reminded.body)).to.equal(200);
  return reminded.body.remindedSignerIds;
}

const lockEvents = (account: Account) => account.db('events').where({ account_id: account.account.id, type: 'signer.verification_locked' }).orderBy('id');
const lockNotices = (account: Account, signerId: string) => account.db('mail_outbox').where('idempotency_key', 'like', `verification-locked:${signerId}:%`);
const verificationSteps = async (account: Account, requestId: string) =>
  account
    .db('audit_trail')
    .where({ signing_request_id: requestId })
    .whereLike('action', 'verification_%')
    .orderBy('id')
    .select('action', 'actor', 'signer_id', 'data');
const countOf = (steps: { action: string }[], action: string) => steps.filter((step) => step.action === action).length;

describe('signer verification', function () {
  this.timeout(120_000);
  useSharedSystem();

  describe('POST /api/v1/signatures with verification', () => {
    it('stores the access code only as a hash and shows the method, never the code', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      expect(signer.verification).to.deep.equal({ method: 'access_code', verifiedAt: null, lockedUntil: null });
      expect(signingRequest.signers[1].verification).to.equal(null);
      const read = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(read.body.signers[0].verification.method).to.equal('access_code');
      const row = await account.db('signer_verifications').where({ signer_id: signer.id }).first();
      expect(row.code_hash).to.match(/^[0-9a-f]{64}$/);
      expect(JSON.stringify([read.body, row])).not.to.include(ACCESS_CODE);
    });

    it('with template_id, each signer keeps their own verification whatever the roles’ order', async () => {
      const account = await createTestAccount();
      const documentId = await uploadLease(account.request);
      const template = await account.request('POST', '/api/v1/templates', {
        json: {
          name: 'Lease',
          documentId,
          roles: [{ name: 'landlord' }, { name: 'tenant' }],
          fields: [templateField('landlord', 'signature'), templateField('tenant', 'signature', { y: 200 })],
        },
      });
      expect(template.status, JSON.stringify(template.body)).to.equal(201);
      const created = await account.request('POST', '/api/v1/signatures', {
        json: {
          template_id: template.body.id,
          title: 'Lease',
          signers: [
            { name: 'Tina Tenant', email: 'tina@example.com', role: 'tenant', verification: { method: 'access_code', code: ACCESS_CODE } },
            { name: 'Larry Landlord', email: 'larry@example.com', role: 'landlord', verification: { method: 'email_code' } },
          ],
        },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const methods = Object.fromEntries(
        created.body.signers.map((signer: { email: string; verification: { method: string } }) => [signer.email, signer.verification.method]),
      );
      expect(methods).to.deep.equal({ 'larry@example.com': 'email_code', 'tina@example.com': 'access_code' });
      const tina = created.body.signers.find((signer: { email: string }) => signer.email === 'tina@example.com');
      const browser = browserOn(account, await signingLinkOf(account.request, created.body.id, tina.id));
      expect((await browser.verify(ACCESS_CODE)).status).to.equal(200);
    });

    it('refuses a code that is too short, too long or has spaces, and verification for a cc', async () => {
      const account = await createTestAccount();
      for (const code of ['abc', 'abcdefghijklm', 'ab cd']) {
        const refused = await account.request('POST', '/api/v1/signatures', {
          json: { document_id: 'doc_x', title: 'T', signers: [{ name: 'A', email: 'a@example.com', verification: { method: 'access_code', code } }] },
        });
        expect(refused.status).to.equal(400);
        expect(refused.body.details.join(' ')).to.include('signers.0.verification.code');
      }
      const cc = await account.request('POST', '/api/v1/signatures', {
        json: {
          document_id: 'doc_x',
          title: 'T',
          signers: [
            { name: 'A', email: 'a@example.com' },
            { name: 'C', email: 'c@example.com', recipientType: 'cc', verification: { method: 'email_code' } },
          ],
        },
      });
      expect(cc.status).to.equal(400);
      expect(cc.body.details).to.include('signers.1.verification cannot be given to a cc: a cc never opens a signing page');
    });
  });

  describe('before verification', () => {
    it('every signer endpoint of the OpenAPI document answers 401 verification_required and nothing of the document', async () => {
      const account = await createTestAccount();
      const { signingRequest, document, browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      const spec = (await client(account.system.url!)('GET', '/api/v1/openapi.json')).body;
      const bodies: Record<string, unknown> = {
        '/sign/{token}/sign': { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } },
        '/sign/{token}/decline': { reason: 'No' },
      };
      const checked: string[] = [];
      for (const [path, operations] of Object.entries(spec.paths as Record<string, Record<string, unknown>>)) {
        if (!path.startsWith('/sign/{token}/') || path.startsWith('/sign/{token}/verification')) continue;
        for (const method of Object.keys(operations)) {
          const concrete = path.replace('/sign/{token}', '').replace('{documentId}', document.id);
          const answer = await browser.send(method.toUpperCase(), concrete, bodies[path] ? { json: bodies[path] } : {});
          expectError(answer, 401, 'verification_required');
          expect(answer.bytes.toString()).not.to.include(signingRequest.title).and.not.to.include('agreement.pdf').and.not.to.include('%PDF');
          checked.push(`${method} ${path}`);
        }
      }
      expect(checked).to.include.members([
        'get /sign/{token}/request',
        'get /sign/{token}/document',
        'get /sign/{token}/documents/{documentId}',
        'post /sign/{token}/sign',
        'post /sign/{token}/decline',
        'post /sign/{token}/approve',
        'post /sign/{token}/viewed',
      ]);
      // The page itself is the same static shell for every link; the view was not recorded.
      const page = await browser.send('GET', '');
      expect(page.status).to.equal(200);
      expect(page.bytes.toString()).not.to.include(signingRequest.title);
      const signers = await account.db('signers').where({ signing_request_id: signingRequest.id }).orderBy('order');
      expect(signers[0].viewed_at).to.equal(null);
      const state = await browser.send('GET', '/verification');
      expect(state.body).to.deep.equal({
        method: 'access_code',
        verified: false,
        lockedUntil: null,
        lockedUntilSenderActs: false,
        sentTo: null,
        codeExpiresAt: null,
        nextCodeAt: null,
      });
    });

    it('a signer without verification needs nothing', async () => {
      const account = await createTestAccount();
      const { signingRequest } = await createSigningRequest(account.request);
      const url = await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[0].id);
      const browser = browserOn(account, url);
      expect((await browser.send('GET', '/verification')).body).to.include({ method: null, verified: true });
      expect((await browser.send('GET', '/request')).status).to.equal(200);
    });
  });

  describe('POST /sign/{token}/verification (access code)', () => {
    it('a wrong code is 403 with the tries left; the right one opens the page, and the signer signs', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer, browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      const wrong = await browser.verify('Zq7!kitf');
      expectError(wrong, 403, 'verification_failed');
      expect(wrong.body.triesLeft).to.equal(4);
      expect(wrong.body.message).to.equal('The code is wrong, expired or used already. 4 tries left before the page locks for 15 minutes.');
      const right = await browser.verify(ACCESS_CODE);
      expect(right.status, JSON.stringify(right.body)).to.equal(200);
      expect(right.body.verified).to.equal(true);
      const view = await browser.send('GET', '/request');
      expect(view.status).to.equal(200);
      expect(view.body.request.title).to.equal(signingRequest.title);
      expect((await browser.send('GET', '/document')).bytes.subarray(0, 4).toString()).to.equal('%PDF');
      const signed = await browser.send('POST', '/sign', { json: { consent: true, signature: { type: 'drawn', value: drawnSignature } } });
      expect(signed.status, JSON.stringify(signed.body)).to.equal(200);

      // Another browser on the same link has not given the code.
      expectError(await browserOn(account, `http://other.test/sign/${browser.token}`).send('GET', '/request'), 401, 'verification_required');
      const read = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(read.body.signers[0].verification.verifiedAt).to.be.a('string');
      const audit = (await account.request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`)).body.data.filter((step: { action: string }) =>
        step.action.startsWith('verification_'),
      );
      expect(audit.map((step: { action: string }) => step.action)).to.deep.equal(['verification_failed', 'verification_succeeded']);
      for (const step of audit) expect(step).to.include({ signerId: signer.id, ipAddress: '127.0.0.1', userAgent: 'verification-test' });
      expect(JSON.stringify(audit)).not.to.include(ACCESS_CODE).and.not.to.include('Zq7!kitf');
    });

    it('five wrong codes lock the signer for 15 minutes, record signer.verification_locked and e-mail the sender; the lock runs out', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer, browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      for (let left = 4; left >= 1; left--) expect((await browser.verify('wrong-1')).body.triesLeft).to.equal(left);
      const fifth = await browser.verify('wrong-1');
      expectError(fifth, 429, 'verification_locked');
      expect(fifth.body.lockedUntilSenderActs).to.equal(false);
      const lockedUntil = new Date(fifth.body.lockedUntil);
      expect(lockedUntil.getTime() - Date.now()).to.be.within(14 * 60_000, 15 * 60_000 + 5_000);
      expect(Number(fifth.headers.get('retry-after'))).to.be.within(14 * 60, 15 * 60 + 5);
      // Locked: even the right code is refused, and not counted.
      expectError(await browser.verify(ACCESS_CODE), 429, 'verification_locked');

      const events = await account.db('events').where({ account_id: account.account.id, type: 'signer.verification_locked' });
      expect(events).to.have.length(1);
      expect(events[0].data).to.include({ signingRequestId: signingRequest.id, signerId: signer.id, lockedUntil: lockedUntil.toISOString() });
      const notice = await account.db('mail_outbox').where('idempotency_key', 'like', `verification-locked:${signer.id}:%`);
      expect(notice).to.have.length(1);
      expect(notice[0].to_address).to.include(account.account.email);
      expect(notice[0].subject).to.equal(`Signing page locked: ${signingRequest.title}`);
      const read = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(read.body.signers[0].verification.lockedUntil).to.equal(lockedUntil.toISOString());

      // Fifteen minutes later (the lock moved into the past): the next lock comes five wrong codes on, and lasts an hour.
      await lockRunsOut(account, signer.id);
      expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.signers[0].verification.lockedUntil).to.equal(null);
      const sixth = await browser.verify('wrong-2');
      expect(sixth.body.triesLeft).to.equal(4);
      expect(sixth.body.message).to.equal('The code is wrong, expired or used already. 4 tries left before the page locks for 1 hour.');
      expect((await browser.verify(ACCESS_CODE)).status).to.equal(200);
      expect((await browser.send('GET', '/request')).status).to.equal(200);
      const stored = JSON.stringify([events, notice, await account.db('audit_trail').where({ signing_request_id: signingRequest.id })]);
      expect(stored).not.to.include(ACCESS_CODE);
      // Nor in any row of any table: events, audit, search copies, the outbox.
      const tables: string[] = (
        await account.db.raw(`select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`)
      ).rows.map((row: { table_name: string }) => row.table_name);
      expect(tables).to.include.members(['events', 'audit_trail', 'signer_verifications', 'mail_outbox']);
      for (const table of tables) {
        const [{ count }] = (await account.db.raw(`select count(*)::int as count from "${table}" t where t::text like ?`, [`%${ACCESS_CODE}%`])).rows;
        expect(count, table).to.equal(0);
      }
    });

    it('a lock whose e-mail was lost with its process is told to the sender by the sweeper', async () => {
      const account = await createTestAccount();
      const { signer, browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      for (let tries = 0; tries < 5; tries++) await browser.verify('wrong-1');
      const row = await account.db('signer_verifications').where({ signer_id: signer.id }).first();
      expect(row.notified_lock_at?.toISOString()).to.equal(row.locked_at.toISOString());
      // As if the api had died after the commit, two minutes ago.
      const lockedAt = new Date(Date.now() - 2 * 60_000);
      await lockNotices(account, signer.id).delete();
      await account
        .db('signer_verifications')
        .where({ signer_id: signer.id })
        .update({ locked_at: lockedAt, locked_until: new Date(lockedAt.getTime() + 15 * 60_000), notified_lock_at: null });
      await runSweeper(account.system);
      await eventually(async () => {
        const notice = await account.db('mail_outbox').where({ idempotency_key: `verification-locked:${signer.id}:${lockedAt.toISOString()}` });
        expect(notice).to.have.length(1);
        expect(notice[0].to_address).to.include(account.account.email);
      }, 30_000);
      await eventually(async () => {
        const told = await account.db('signer_verifications').where({ signer_id: signer.id }).first();
        expect(told.notified_lock_at?.toISOString()).to.equal(lockedAt.toISOString());
      });
    });

    it('ten wrong tries at once: exactly five counted, one lock, one event', async () => {
      const account = await createTestAccount();
      const { signingRequest, browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      const answers = await Promise.all(Array.from({ length: 10 }, () => browser.verify('wrong-race')));
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).to.deep.equal([403, 403, 403, 403, 429, 429, 429, 429, 429, 429]);
      expect(
        answers
          .filter((answer) => answer.status === 403)
          .map((answer) => answer.body.triesLeft)
          .sort(),
      ).to.deep.equal([1, 2, 3, 4]);
      const steps = await account.db('audit_trail').where({ signing_request_id: signingRequest.id }).whereLike('action', 'verification_%').pluck('action');
      expect(steps.filter((action) => action === 'verification_failed')).to.have.length(5);
      expect(steps.filter((action) => action === 'verification_locked')).to.have.length(1);
      expect(await account.db('events').where({ account_id: account.account.id, type: 'signer.verification_locked' })).to.have.length(1);
    });

    it('ten right tries at once all verify, and the right code after four wrong ones at once is still accepted', async () => {
      const account = await createTestAccount();
      const { browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      await Promise.all(Array.from({ length: 4 }, () => browser.verify('wrong-race')));
      const answers = await Promise.all(Array.from({ length: 10 }, () => browser.verify(ACCESS_CODE)));
      expect(answers.map((answer) => answer.status)).to.deep.equal(Array(10).fill(200));
    });

    it('a right code resets nothing: after four wrong codes and the right one, the next wrong one locks', async () => {
      const account = await createTestAccount();
      const { browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      for (let tries = 0; tries < 4; tries++) await browser.verify('wrong-1');
      expect((await browser.verify(ACCESS_CODE)).status).to.equal(200);
      // Another browser, another session: the count is the request's, not the session's.
      const other = browserOn(account, `http://other.test/sign/${browser.token}`);
      expectError(await other.verify('wrong-2'), 429, 'verification_locked');
    });
  });

  describe('POST /sign/{token}/verification: escalating locks over the request’s life', () => {
    it('each fifth wrong code locks for longer, 15 minutes, 1 hour, 4 hours, whenever the last lock ran out; the twentieth until the sender acts', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer, browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      const locks: [number, boolean][] = [];
      for (let lock = 1; lock <= 3; lock++) {
        for (let left = 4; left >= 1; left--) expect((await browser.verify(`wrong-${lock}`)).body.triesLeft).to.equal(left);
        const locking = await browser.verify(`wrong-${lock}`);
        expectError(locking, 429, 'verification_locked');
        const minutes = (new Date(locking.body.lockedUntil).getTime() - Date.now()) / 60_000;
        locks.push([Math.round(minutes), locking.body.lockedUntilSenderActs]);
        expect(Number(locking.headers.get('retry-after'))).to.be.within(Math.floor(minutes * 60) - 5, Math.ceil(minutes * 60) + 5);
        await lockRunsOut(account, signer.id);
      }
      expect(locks).to.deep.equal([
        [15, false],
        [60, false],
        [240, false],
      ]);

      for (let tries = 0; tries < 3; tries++) await browser.verify('wrong-4');
      const nineteenth = await browser.verify('wrong-4');
      expect(nineteenth.body.message).to.equal(
        'The code is wrong, expired or used already. 1 try left before the page locks until the sender sends you the link again.',
      );
      const twentieth = await browser.verify('wrong-4');
      expectError(twentieth, 429, 'verification_locked');
      expect(twentieth.body).to.include({ lockedUntilSenderActs: true, lockedUntil: signingRequest.expiresAt });
      expect(twentieth.body.message).to.equal(
        'Too many wrong codes: this page stays locked until the sender sends you the link again. Contact the person who sent you this request.',
      );
      expect(twentieth.headers.get('retry-after')).to.equal(null);
      const read = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(read.body.signers[0].verification.lockedUntil).to.equal(signingRequest.expiresAt);
      expect((await browser.send('GET', '/verification')).body).to.include({ lockedUntil: signingRequest.expiresAt, lockedUntilSenderActs: true });

      // No waiting helps: not even the right code is weighed.
      await lockRunsOut(account, signer.id);
      expectError(await browser.verify(ACCESS_CODE), 429, 'verification_locked');
      expect((await browser.send('GET', '/verification')).body.lockedUntilSenderActs).to.equal(true);

      const events = await lockEvents(account);
      expect(events.map((event) => [event.data.wrongTries, event.data.untilSenderActs])).to.deep.equal([
        [5, false],
        [10, false],
        [15, false],
        [20, true],
      ]);
      expect(events[3].data.lockedUntil).to.equal(signingRequest.expiresAt);
      const notices = (await lockNotices(account, signer.id)).sort((a, b) => a.idempotency_key.localeCompare(b.idempotency_key));
      expect(notices.map((notice) => /^\d+ wrong codes/m.exec(notice.text)?.[0])).to.deep.equal([
        '5 wrong codes',
        '10 wrong codes',
        '15 wrong codes',
        '20 wrong codes',
      ]);
      expect(notices[3].text).to.include('stays locked until you remind the signer');
      expect(notices[0].text).not.to.include('remind');
      const steps = await verificationSteps(account, signingRequest.id);
      expect([countOf(steps, 'verification_failed'), countOf(steps, 'verification_locked'), countOf(steps, 'verification_succeeded')]).to.deep.equal([
        20, 4, 0,
      ]);
    });

    it('past the twentieth the right code is refused until the sender reminds the signer; then it opens the page, and five wrong ones lock again', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer, browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      await spendEveryTry(account, signer.id, browser);
      await lockRunsOut(account, signer.id);
      expectError(await browser.verify(ACCESS_CODE), 429, 'verification_locked');

      expect(await remind(account, signingRequest.id)).to.include(signer.id);
      expect((await browser.send('GET', '/verification')).body).to.include({ lockedUntil: null, lockedUntilSenderActs: false });
      expect((await account.request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.signers[0].verification.lockedUntil).to.equal(null);
      const released = (await verificationSteps(account, signingRequest.id)).filter((step) => step.action === 'verification_released');
      expect(released).to.have.length(1);
      expect(released[0]).to.deep.include({ actor: account.account.email, signer_id: signer.id, data: { wrongTries: 20, wrongTriesAllowed: 25 } });
      expect((await browser.verify(ACCESS_CODE)).status).to.equal(200);
      expect((await browser.send('GET', '/request')).status).to.equal(200);

      // The remind gave five tries, no more: the fifth wrong one waits for the sender again.
      const other = browserOn(account, `http://other.test/sign/${browser.token}`);
      for (let left = 4; left >= 1; left--) expect((await other.verify('wrong-5')).body.triesLeft).to.equal(left);
      const again = await other.verify('wrong-5');
      expectError(again, 429, 'verification_locked');
      expect(again.body.lockedUntilSenderActs).to.equal(true);
      expectError(await other.verify(ACCESS_CODE), 429, 'verification_locked');
      expect((await lockEvents(account)).map((event) => event.data.wrongTries)).to.deep.equal([5, 10, 15, 20, 25]);
      expect(await lockNotices(account, signer.id)).to.have.length(5);
      // The browser that gave the right code keeps its session.
      expect((await browser.send('GET', '/request')).status).to.equal(200);
    });

    it('fifty wrong codes at once, again after each lock: twenty weighed in all, four locks, and no try past them', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer, browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      const weighed: number[] = [];
      for (let round = 1; round <= 5; round++) {
        const answers = await Promise.all(Array.from({ length: 50 }, () => browser.verify(`wrong-race-${round}`)));
        expect(answers.filter((answer) => ![403, 429].includes(answer.status))).to.deep.equal([]);
        const steps = await verificationSteps(account, signingRequest.id);
        weighed.push(countOf(steps, 'verification_failed'));
        await lockRunsOut(account, signer.id);
      }
      expect(weighed).to.deep.equal([5, 10, 15, 20, 20]);
      const row = await account.db('signer_verifications').where({ signer_id: signer.id }).first();
      expect([row.wrong_tries, row.wrong_tries_allowed]).to.deep.equal([20, 20]);
      expect((await lockEvents(account)).map((event) => event.data.wrongTries)).to.deep.equal([5, 10, 15, 20]);
      expectError(await browser.verify(ACCESS_CODE), 429, 'verification_locked');
      // The table itself refuses a count past the allowed.
      const past = await account
        .db('signer_verifications')
        .where({ signer_id: signer.id })
        .update({ wrong_tries: 21 })
        .then(
          () => 'written',
          (error: Error) => error.message,
        );
      expect(past).to.include('signer_verifications_wrong_tries_allowed');
    });
  });

  describe('e-mail code', () => {
    it('is e-mailed on request, works once within ten minutes, a new one at most once a minute, and never another request’s', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer, browser } = await requestWith(account, { method: 'email_code' });
      const before = await browser.send('GET', '/verification');
      expect(before.body).to.include({ method: 'email_code', verified: false, codeExpiresAt: null, nextCodeAt: null });
      expect(before.body.sentTo).to.match(/^a•+@example\.com$/);

      const sent = await browser.send('POST', '/verification/code');
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      expect(new Date(sent.body.codeExpiresAt).getTime() - Date.now()).to.be.within(9 * 60_000, 10 * 60_000 + 5_000);
      const code = await lastCode(account, signer.email);
      expect(code).to.match(/^\d{6}$/);
      const again = await browser.send('POST', '/verification/code');
      expectError(again, 429, 'rate_limit_exceeded');
      expect(Number(again.headers.get('retry-after'))).to.be.within(1, 60);
      expect(await codeMails(account, signer.email)).to.have.length(1);

      const wrong = await browser.verify(code === '000000' ? '000001' : '000000');
      expectError(wrong, 403, 'verification_failed');
      expect((await browser.verify(code)).status).to.equal(200);
      expect((await browser.send('GET', '/request')).body.request.title).to.equal(signingRequest.title);
      // Used once: another browser cannot use it again.
      expectError(await browserOn(account, `http://other.test/sign/${browser.token}`).verify(code), 403, 'verification_failed');

      // A minute later a new code; expired after ten minutes.
      await account
        .db('signer_verifications')
        .where({ signer_id: signer.id })
        .update({ code_sent_at: new Date(Date.now() - 61_000) });
      expect((await browser.send('POST', '/verification/code')).status).to.equal(200);
      const second = await lastCode(account, signer.email);
      await account
        .db('signer_verifications')
        .where({ signer_id: signer.id })
        .update({ code_expires_at: new Date(Date.now() - 1000) });
      const other = browserOn(account, `http://other.test/sign/${browser.token}`);
      expectError(await other.verify(second), 403, 'verification_failed');

      // Another request's code, e-mailed to the same person, opens only that request.
      const elsewhere = await createSigningRequest(account.request, {
        signers: [{ name: 'Ada', email: signer.email, verification: { method: 'email_code' } }],
      });
      const elsewhereUrl = await signingLinkOf(account.request, elsewhere.signingRequest.id, elsewhere.signingRequest.signers[0].id);
      await account
        .db('signer_verifications')
        .where({ signer_id: signer.id })
        .update({ code_sent_at: new Date(Date.now() - 61_000) });
      expect((await browser.send('POST', '/verification/code')).status).to.equal(200);
      expect((await browserOn(account, elsewhereUrl).send('POST', '/verification/code')).status).to.equal(200);
      const elsewhereCode = await lastCode(account, signer.email);
      expectError(await other.verify(elsewhereCode), 403, 'verification_failed');
      expect((await browserOn(account, elsewhereUrl).verify(elsewhereCode)).status).to.equal(200);

      // The codes are only in the e-mails: not in the API's answers, the audit trail or the events.
      const codes = [code, second, elsewhereCode];
      const read = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
      const audit = await account.request('GET', `/api/v1/signatures/${signingRequest.id}/audit-trail`);
      const events = await account.db('events').where({ account_id: account.account.id });
      const text = JSON.stringify([read.body, audit.body, events]);
      for (const each of codes) expect(text).not.to.include(each);
      expect(audit.body.data.map((step: { action: string }) => step.action)).to.include('verification_code_sent');
    });

    it('no code reaches the logs: not the access code, not an e-mailed one', async () => {
      const lines: string[] = [];
      const api = await startApp({}, { logger: createLogger('debug', { write: (line: string) => lines.push(line) }) });
      try {
        const account = await createTestAccount();
        const onApi = (url: string) => browserOn(account, `${api.url}/sign/${tokenOf(url)}`, api.url);
        const withAccess = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
        const access = onApi(withAccess.url);
        await access.verify('Zq7!kitf');
        await access.verify(ACCESS_CODE);
        const withMail = await requestWith(account, { method: 'email_code' });
        const mailed = onApi(withMail.url);
        await mailed.send('POST', '/verification/code');
        const code = await lastCode(account, withMail.signer.email);
        await mailed.verify(code);
        expect((await mailed.send('GET', '/request')).status).to.equal(200);
        const all = lines.join('\n');
        expect(lines.filter((line) => line.includes('/verification'))).to.have.length.greaterThan(3);
        expect(all).not.to.include(ACCESS_CODE).and.not.to.include('Zq7!kitf').and.not.to.include(code);
      } finally {
        void api.close();
      }
    });

    it('shares the count: past the twentieth wrong code no code is sent or weighed until the sender reminds the signer', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer, browser } = await requestWith(account, { method: 'email_code' });
      expect((await browser.send('POST', '/verification/code')).status).to.equal(200);
      const code = await lastCode(account, signer.email);
      await spendEveryTry(account, signer.id, browser);
      await lockRunsOut(account, signer.id);
      expectError(await browser.verify(code), 429, 'verification_locked');
      await account
        .db('signer_verifications')
        .where({ signer_id: signer.id })
        .update({ code_sent_at: new Date(Date.now() - 61_000) });
      const refused = await browser.send('POST', '/verification/code');
      expectError(refused, 429, 'verification_locked');
      expect(refused.body.lockedUntilSenderActs).to.equal(true);
      expect(await codeMails(account, signer.email)).to.have.length(1);

      expect(await remind(account, signingRequest.id)).to.include(signer.id);
      expect((await browser.send('POST', '/verification/code')).status).to.equal(200);
      expect((await browser.verify(await lastCode(account, signer.email))).status).to.equal(200);
    });

    it('a signer with an access code cannot ask for an e-mailed one', async () => {
      const account = await createTestAccount();
      const { browser } = await requestWith(account, { method: 'access_code', code: ACCESS_CODE });
      expectError(await browser.send('POST', '/verification/code'), 409, 'conflict');
    });

    it('is stated in the certificate of completion once everyone has signed', async () => {
      const account = await createTestAccount();
      const { signingRequest, signer, browser } = await requestWith(account, { method: 'email_code' });
      await browser.send('POST', '/verification/code');
      expect((await browser.verify(await lastCode(account, signer.email))).status).to.equal(200);
      await browser.send('POST', '/sign', { json: { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } } });
      const other = await signingLinkOf(account.request, signingRequest.id, signingRequest.signers[1].id);
      await browserOn(account, other).send('POST', '/sign', { json: { consent: true, signature: { type: 'typed', value: 'Alan Turing' } } });
      await eventually(async () => {
        const read = await account.request('GET', `/api/v1/signatures/${signingRequest.id}`);
        expect(read.body.status).to.equal('completed');
      }, 60_000);
      const sealed = await account.db('sealed_documents').where({ signing_request_id: signingRequest.id }).first('content');
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signet-verification-')), 'sealed.pdf');
      fs.writeFileSync(file, sealed.content);
      const text = execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
      expect(text).to.include('E-mail code verified');
    });
  });
});
