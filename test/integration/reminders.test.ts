import { expect } from 'chai';
import { createSigningActivities } from '../../activities/signingRequest';
import { planNames, plans } from '../../src/domain/plans';
import { MAX_SIGNERS } from '../../src/documents/fields';
import type { MailTransport } from '../../src/mail';
import type { TestResponse } from '../support/http';
import { eventually } from '../support/signing';
import { createTestAccount } from '../support/system';
import { uploadDocument } from '../support/documents';

// Reminders are limited twice, each a 429 with the rate-limit headers: one e-mail with their link a signer an
// hour (the invitation included), and the plan's e-mails an hour for the account. The reproduction:
// a free account, one request to 50 signers and 15 reminds at once had queued 750 e-mails in 20 s.

type Account = Awaited<ReturnType<typeof createTestAccount>>;
const HOUR_S = 3600;

const fiftySigners = Array.from({ length: 50 }, (_, index) => ({ name: `Signer ${index + 1}`, email: `signer-${index + 1}@example.com` }));

async function requestTo(account: Account, signers: { name: string; email: string }[], extra: Record<string, unknown> = {}) {
  const document = await uploadDocument(account.request, { fileName: 'a.pdf', pages: ['Phishing title'] });
  return account.request('POST', '/api/v1/signatures', { json: { document_id: document.id, title: 'Urgent: verify your account', signers, ...extra } });
}

/** Every invitation of the request sent (the workflow sends them after the 201). */
async function invited(account: Account, signerIds: string[]) {
  await eventually(
    async () =>
      expect(
        await account.db('mail_outbox').whereIn(
          'idempotency_key',
          signerIds.map((id) => `invitation:${id}:0`),
        ),
      ).to.have.length(signerIds.length),
    60_000,
  );
}

/** The hour since each signer's last e-mail has passed. */
const anHourLater = (account: Account, requestId: string) =>
  account
    .db('signers')
    .where({ signing_request_id: requestId })
    .update({ last_mailed_at: account.db.raw("now() - interval '61 minutes'") });

const remindersSent = async (account: Account, signerIds: string[]) =>
  (
    await account
      .db('mail_outbox')
      .whereIn('idempotency_key', account.db('audit_trail').whereIn('signer_id', signerIds).where({ action: 'reminder_sent' }).select('idempotency_key'))
      .select('idempotency_key')
  ).length;

const remindAll = (account: Account, id: string, times: number) =>
  Promise.all(Array.from({ length: times }, () => account.request('POST', `/api/v1/signatures/${id}/remind`)));

function expectLimited(response: TestResponse, limit: number) {
  expect(response.status, JSON.stringify(response.body)).to.equal(429);
  expect(response.body.error).to.equal('rate_limit_exceeded');
  expect(response.headers.get('x-ratelimit-limit')).to.equal(String(limit));
  expect(response.headers.get('x-ratelimit-remaining')).to.equal('0');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).to.be.within(1, HOUR_S);
  const reset = Number(response.headers.get('x-ratelimit-reset'));
  expect(reset - Date.now() / 1000).to.be.within(0, HOUR_S + 1);
}

describe('POST /api/v1/signatures/:id/remind: one e-mail a signer an hour', function () {
  this.timeout(180_000);

  it('every plan’s e-mails an hour hold a full request’s invitations twice over', () => {
    for (const plan of planNames) expect(plans[plan].emailsPerHour, plan).to.be.at.least(2 * MAX_SIGNERS);
  });

  it('15 reminds at once right after a request to 50 signers remind nobody: 429 with Retry-After and X-RateLimit-* (the issue’s reproduction)', async () => {
    const account = await createTestAccount('free');
    const created = await requestTo(account, fiftySigners);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const signerIds: string[] = created.body.signers.map((signer: { id: string }) => signer.id);
    await invited(account, signerIds);
    const responses = await remindAll(account, created.body.id, 15);
    for (const response of responses) expectLimited(response, 1);
    expect(responses[0].body.message).to.match(
      /^Each signer gets at most one e-mail with their link an hour, the invitation included: the next reminder can go at /,
    );
    expect(await remindersSent(account, signerIds)).to.equal(0);
  });

  it('an hour later, 15 reminds at once remind each signer exactly once; the account’s hour is then spent, and a new request to 50 signers is 429 with the plan’s limit', async () => {
    const account = await createTestAccount('free');
    const created = await requestTo(account, fiftySigners);
    const signerIds: string[] = created.body.signers.map((signer: { id: string }) => signer.id);
    await invited(account, signerIds);
    await anHourLater(account, created.body.id);

    const responses = await remindAll(account, created.body.id, 15);
    const reminded = responses.filter((response) => response.status === 200).flatMap((response) => response.body.remindedSignerIds as string[]);
    expect([...reminded].sort(), 'every signer reminded, once').to.deep.equal([...signerIds].sort());
    for (const response of responses.filter((one) => one.status !== 200)) expectLimited(response, 1);
    expect(await remindersSent(account, signerIds)).to.equal(50);
    const audit = await account.db('audit_trail').whereIn('signer_id', signerIds).where({ action: 'reminder_sent' });
    expect(audit).to.have.length(50);

    // 50 invitations and 50 reminders: the free plan's 100 e-mails of this hour.
    expect(plans.free.emailsPerHour).to.equal(100);
    const before = await account.db('signing_requests').where({ account_id: account.account.id }).count({ count: '*' }).first();
    const refused = await requestTo(account, fiftySigners);
    expectLimited(refused, 100);
    expect(refused.body.message).to.match(/^This request would send 50 e-mail\(s\); the free plan sends 100 an hour and 0 are left\. They fit from /);
    expect(await account.db('signing_requests').where({ account_id: account.account.id }).count({ count: '*' }).first(), 'nothing made').to.deep.equal(before);
    // A sequential request invites its first signer only, and that is too many as well.
    expectLimited(await requestTo(account, fiftySigners.slice(0, 2), { signingOrder: 'sequential' }), 100);
  });

  it('a signer invited a minute ago is left out while the others are reminded; what the hour allows goes in signing order', async () => {
    const account = await createTestAccount('free');
    // 95 of the free plan's 100 e-mails already went this hour.
    await account
      .db('account_mail_log')
      .insert(Array.from({ length: 95 }, (_, index) => ({ idempotency_key: `earlier:${account.account.id}:${index}`, account_id: account.account.id })));
    const created = await requestTo(account, fiftySigners.slice(0, 5));
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const signerIds: string[] = created.body.signers.map((signer: { id: string }) => signer.id);
    await invited(account, signerIds);
    // The hour is spent: 95 + 5 invitations.
    const spent = await account.request('POST', `/api/v1/signatures/${created.body.id}/remind`);
    expect(spent.status).to.equal(429);
    // Three of the earlier e-mails leave the account's hour, and every signer's hour but the first's passes.
    await account
      .db('account_mail_log')
      .whereIn(
        'idempotency_key',
        [0, 1, 2].map((index) => `earlier:${account.account.id}:${index}`),
      )
      .delete();
    await anHourLater(account, created.body.id);
    await account.db('signers').where({ id: signerIds[0] }).update({ last_mailed_at: account.db.fn.now() });
    const reminded = await account.request('POST', `/api/v1/signatures/${created.body.id}/remind`);
    expect(reminded.status, JSON.stringify(reminded.body)).to.equal(200);
    expect(reminded.body.remindedSignerIds).to.deep.equal(signerIds.slice(1, 4));
    const none = await account.request('POST', `/api/v1/signatures/${created.body.id}/remind`);
    expectLimited(none, 100);
    expect(none.body.message).to.match(/^The free plan sends 100 e-mails an hour and none are left: the next can go at /);
  });

  it('scheduled reminders go by the same rule: a round within the hour of a remind reminds nobody', async () => {
    const account = await createTestAccount('free');
    const created = await requestTo(account, fiftySigners.slice(0, 2));
    const signerIds: string[] = created.body.signers.map((signer: { id: string }) => signer.id);
    await invited(account, signerIds);
    await anHourLater(account, created.body.id);
    const remind = await account.request('POST', `/api/v1/signatures/${created.body.id}/remind`);
    expect(remind.body.remindedSignerIds).to.deep.equal(signerIds);
    // The workflow's timer runs this same activity with its next round number.
    const sent: string[] = [];
    const mail: MailTransport = { name: 'recorder', send: async (message) => (sent.push(message.idempotencyKey), { messageId: message.idempotencyKey }) };
    const activities = createSigningActivities({ db: account.db, events: account.system.events, config: account.system.config, mail });
    const round = await activities.sendReminders(created.body.id, signerIds, 1000);
    expect(round).to.deep.include({ remindedSignerIds: [] });
    expect(round.limitedBy).to.deep.include({ limit: 'signer', perHour: 1 });
    expect(sent).to.deep.equal([]);
    // A retried round sends again what it chose before (the same keys, delivered once), and nothing more.
    await anHourLater(account, created.body.id);
    const first = await activities.sendReminders(created.body.id, signerIds, 1001);
    const retried = await activities.sendReminders(created.body.id, signerIds, 1001);
    expect([first.remindedSignerIds, retried.remindedSignerIds]).to.deep.equal([signerIds, signerIds]);
    expect(sent).to.deep.equal([...signerIds, ...signerIds].map((id) => `reminder:${id}:1001`));
    expect(
      await account.db('account_mail_log').whereIn(
        'idempotency_key',
        signerIds.map((id) => `reminder:${id}:1001`),
      ),
    ).to.have.length(2);
  });
});
