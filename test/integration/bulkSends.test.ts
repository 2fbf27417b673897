import { expect } from 'chai';
import { client } from '../support/http';
import { eventually } from '../support/signing';
import { createBulkSend } from '../../src/bulkSends/service';
import { bulkSendDeps } from '../../src/bulkSends/workflow';
import { newId } from '../../src/ids';
import { createTestAccount, runSweeper } from '../support/system';
import { renewalTemplate } from '../support/templates';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const rowFor = (index: number) => ({
  recipients: { tenant: { name: `Tenant ${index}`, email: `tenant${index}@example.com` } },
  prefill: { Rent: 1000 + index },
  externalId: `unit-${index}`,
});

const csvOf = (lines: string[], bom = false) => new Blob([`${bom ? '\ufeff' : ''}${lines.join('\r\n')}\r\n`], { type: 'text/csv' });

function uploadCsv(account: Account, templateId: string, csv: Blob, extra: Record<string, string> = {}) {
  const form = new FormData();
  form.append('templateId', templateId);
  for (const [name, value] of Object.entries(extra)) form.append(name, value);
  form.append('file', csv, 'rows.csv');
  return client(account.system.url!, account.apiKey)('POST', '/api/v1/bulk-sends', { body: form });
}

describe('bulk sends (POST /api/v1/bulk-sends)', function () {
  this.timeout(180_000);

  it('sends every row as one request, each carrying its bulk id and row, and the job and its rows show the outcome', async () => {
    const account = await createTestAccount();
    const templateId = await renewalTemplate(account.request);
    const rows = Array.from({ length: 30 }, (_, index) => rowFor(index));
    const created = await account.request('POST', '/api/v1/bulk-sends', { json: { templateId, rows }, headers: { 'Idempotency-Key': 'renewals-2026' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ templateId, rowCount: 30 });
    const id = created.body.id as string;

    const done = await eventually(async () => {
      const job = await account.request('GET', `/api/v1/bulk-sends/${id}`);
      expect(job.body.status).to.equal('sent');
      return job.body;
    }, 120_000);
    expect(done.rows).to.deep.equal({ queued: 0, sent: 30, failed: 0, cancelled: 0 });
    expect(done.requests.pending).to.equal(30);

    // The same key again: the same job, nothing sent twice.
    const again = await account.request('POST', '/api/v1/bulk-sends', { json: { templateId, rows }, headers: { 'Idempotency-Key': 'renewals-2026' } });
    expect(again.body.id).to.equal(id);
    const requests = await account
      .db('signing_requests')
      .where({ account_id: account.account.id })
      .orderBy('bulk_row')
      .select('id', 'bulk_send_id', 'bulk_row');
    expect(requests.map((request) => request.bulk_row)).to.deep.equal(rows.map((_, index) => index));
    expect(new Set(requests.map((request) => request.bulk_send_id))).to.deep.equal(new Set([id]));

    const page = await account.request('GET', `/api/v1/bulk-sends/${id}/rows?limit=20`);
    expect(page.body.data).to.have.length(20);
    expect(page.body.data[3]).to.include({ row: 3, externalId: 'unit-3', status: 'sent', requestStatus: 'pending', error: null });
    const next = await account.request('GET', `/api/v1/bulk-sends/${id}/rows?limit=20&cursor=${page.body.pagination.nextCursor}`);
    expect(next.body.data.map((row: { row: number }) => row.row)).to.deep.equal([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
    const one = await account.request('GET', `/api/v1/signatures/${page.body.data[3].signingRequestId}`);
    expect(one.body.bulkSend).to.deep.equal({ id, row: 3 });
    expect(one.body.signers[0]).to.include({ name: 'Tenant 3', email: 'tenant3@example.com' });

    const events = await account
      .db('events')
      .where({ account_id: account.account.id })
      .whereIn('type', ['bulk_send.created', 'bulk_send.completed'])
      .orderBy('id');
    expect(events.map((event) => event.type)).to.deep.equal(['bulk_send.created', 'bulk_send.completed']);
    expect(events[1].data).to.include({ bulkSendId: id, sent: 30, failed: 0, cancelled: 0 });

    // Another account sees none of it.
    const other = await createTestAccount();
    expect((await other.request('GET', `/api/v1/bulk-sends/${id}`)).status).to.equal(404);
    expect((await other.request('GET', `/api/v1/bulk-sends/${id}/rows`)).status).to.equal(404);
  });

  it('checks every row before sending anything: a 400 names each problem by row and key; a dry run answers the check', async () => {
    const account = await createTestAccount();
    const templateId = await renewalTemplate(account.request);
    const bad = [
      rowFor(0),
      { recipients: { tenant: { name: 'No address', email: 'not-an-address' } } },
      { recipients: { landlord: { name: 'L', email: 'l@example.com' } } },
      { ...rowFor(3), prefill: { Rent: 'lots' } },
      { ...rowFor(4), colour: 'blue' },
    ];
    const refused = await account.request('POST', '/api/v1/bulk-sends', { json: { templateId, rows: bad } });
    expect(refused.status).to.equal(400);
    expect(refused.body.details).to.deep.equal([
      'rows.1.recipients.tenant.email must be a valid e-mail address',
      'rows.2.recipients.landlord names no role of the template (its roles: tenant)',
      'rows.2.recipients.tenant.name is required',
      'rows.2.recipients.tenant.email is required',
      'rows.3.prefill.Rent must be a number, written like 1234.5',
      'rows.4 has unknown field(s): colour',
    ]);
    expect(await account.db('bulk_sends').where({ account_id: account.account.id })).to.have.length(0);

    const many = Array.from({ length: 150 }, () => ({ recipients: {} }));
    const capped = await account.request('POST', '/api/v1/bulk-sends', { json: { templateId, rows: many } });
    expect(capped.body.details).to.have.length(101);
    expect(capped.body.details.at(-1)).to.equal('… and 200 more problems (300 in all)');

    const dry = await account.request('POST', '/api/v1/bulk-sends', { json: { templateId, rows: [rowFor(0), rowFor(1)], dryRun: true } });
    expect(dry.status).to.equal(200);
    expect(dry.body).to.deep.equal({ dryRun: true, templateId, rowCount: 2, requests: 2, invitations: 2 });
    expect(await account.db('signing_requests').where({ account_id: account.account.id })).to.have.length(0);
  });

  it('reads a CSV with a BOM, semicolons, quoted fields and CRLF, naming a problem by row and column', async () => {
    const account = await createTestAccount();
    const templateId = await renewalTemplate(account.request);
    const csv = csvOf(
      ['tenant.name;tenant.email;prefill.Rent;externalId', '"Lovelace; Ada";ada@example.com;1200;a-1', 'Grace Hopper;grace@example.com;1300;a-2'],
      true,
    );
    const dry = await uploadCsv(account, templateId, csv, { dryRun: 'true' });
    expect(dry.status, JSON.stringify(dry.body)).to.equal(200);
    expect(dry.body.rowCount).to.equal(2);

    const wrong = await uploadCsv(account, templateId, csvOf(['tenant.name,tenant.email', 'Ada,ada@example', 'Grace,grace@example.com']));
    expect(wrong.status).to.equal(400);
    expect(wrong.body.details).to.deep.equal(['row 1, column tenant.email: must be a valid e-mail address']);

    const sent = await uploadCsv(account, templateId, csv);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
    await eventually(async () => expect((await account.request('GET', `/api/v1/bulk-sends/${sent.body.id}`)).body.status).to.equal('sent'), 60_000);
    const names = (
      await account
        .db('signers as s')
        .join('signing_requests as r', 'r.id', 's.signing_request_id')
        .where('r.bulk_send_id', sent.body.id)
        .orderBy('r.bulk_row')
        .select('s.name')
    ).map((row) => row.name);
    expect(names).to.deep.equal(['Lovelace; Ada', 'Grace Hopper']);
  });

  it('cancel stops the rows not yet sent and, when asked, cancels those sent; every row has one outcome', async () => {
    const account = await createTestAccount();
    const templateId = await renewalTemplate(account.request);
    const created = await account.request('POST', '/api/v1/bulk-sends', {
      json: { templateId, rows: Array.from({ length: 200 }, (_, index) => rowFor(index)) },
    });
    expect(created.status).to.equal(201);
    const cancelled = await account.request('POST', `/api/v1/bulk-sends/${created.body.id}/cancel`, { json: { cancelSent: true } });
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
    expect(cancelled.body.status).to.equal('cancelled');
    const done = await eventually(async () => {
      const job = (await account.request('GET', `/api/v1/bulk-sends/${created.body.id}`)).body;
      expect(job.finishedAt).to.be.a('string');
      expect(job.requests.pending).to.equal(0);
      return job;
    }, 120_000);
    expect(done.rows.queued).to.equal(0);
    expect(done.rows.sent + done.rows.cancelled + done.rows.failed).to.equal(200);
    expect(done.rows.cancelled).to.be.greaterThan(0);
    // Each sent row is one request, and each of those is cancelled.
    const requests = await account.db('signing_requests').where({ bulk_send_id: created.body.id });
    expect(requests).to.have.length(done.rows.sent);
    expect(new Set(requests.map((request) => request.status))).to.satisfy(
      (statuses: Set<string>) => statuses.size === 0 || (statuses.size === 1 && statuses.has('cancelled')),
    );
  });

  it('a job its api did not start (it died after the commit) is started by a retry of it, or else by the sweeper', async () => {
    const account = await createTestAccount();
    const templateId = await renewalTemplate(account.request);
    const { system } = account;
    const deps = bulkSendDeps({ db: account.db, events: system.events, config: system.config, temporal: system.client });
    const died = { ...deps, start: () => Promise.reject(new Error('killed before the start')) };
    const input = { templateId, rows: [rowFor(1), rowFor(2)], dryRun: false, source: 'json' as const };
    const sent = async (id: string) =>
      eventually(async () => {
        const job = await account.request('GET', `/api/v1/bulk-sends/${id}`);
        expect(job.body.status).to.equal('sent');
        expect(job.body.rows.sent).to.equal(2);
      }, 60_000);

    const retried = newId('bulkSend');
    await createBulkSend(died, account.account, input, { id: retried }).catch(() => undefined);
    expect((await account.db('bulk_sends').where({ id: retried }).first()).workflow_started_at).to.equal(null);
    const again = await createBulkSend(deps, account.account, input, { id: retried });
    expect(again.job?.id).to.equal(retried);
    await sent(retried);

    const swept = newId('bulkSend');
    await createBulkSend(died, account.account, input, { id: swept }).catch(() => undefined);
    await account
      .db('bulk_sends')
      .where({ id: swept })
      .update({ created_at: new Date(Date.now() - 120_000) });
    await runSweeper(system);
    await sent(swept);
    expect((await account.db('bulk_sends').where({ id: swept }).first()).workflow_started_at).not.to.equal(null);
    expect(await account.db('signing_requests').whereIn('bulk_send_id', [retried, swept]).count('* as n').first()).to.deep.equal({ n: 4 });
  });

  it('the same job made many times at once is one job, one event and one request per row', async () => {
    const account = await createTestAccount();
    const templateId = await renewalTemplate(account.request);
    const { system } = account;
    const deps = bulkSendDeps({ db: account.db, events: system.events, config: system.config, temporal: system.client });
    const input = { templateId, rows: [rowFor(1), rowFor(2), rowFor(3)], dryRun: false, source: 'json' as const };
    const id = newId('bulkSend');
    const made = await Promise.all(Array.from({ length: 12 }, () => createBulkSend(deps, account.account, input, { id })));
    expect(new Set(made.map((one) => one.job?.id))).to.deep.equal(new Set([id]));
    await eventually(async () => {
      const job = await account.request('GET', `/api/v1/bulk-sends/${id}`);
      expect(job.body.rows.sent).to.equal(3);
    }, 60_000);
    const events = await account.db('events').where({ account_id: account.account.id, type: 'bulk_send.created' }).count('* as n').first();
    expect(events).to.deep.equal({ n: 1 });
    expect(await account.db('signing_requests').where({ bulk_send_id: id }).count('* as n').first()).to.deep.equal({ n: 3 });
  });
});
