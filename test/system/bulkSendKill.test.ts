import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { client } from '../support/http';
import { eventually } from '../support/signing';
import { startSplitSystem } from '../support/splitSystem';
import { templateField, uploadLease } from '../support/templates';

// Issue #56: kill -9 of the api under the job's POST and of the worker, again and again, while a job's rows are sent.
// BULK_KILL_ROWS sets the job's size (the benchmark's chaos, docs/benchmarks.md, runs 10,000).
const ROWS = Number(process.env.BULK_KILL_ROWS ?? 1000);
const WORKER_KILLS = 6;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a bulk send whose api and worker are killed (kill -9) while it runs', function () {
  // Rows are sent at some 5 a second on two cores, the request workflows' announcements after them.
  const sendingMs = 120_000 + ROWS * 400;
  this.timeout(sendingMs + 600_000);
  let system: Awaited<ReturnType<typeof startSplitSystem>>;

  before(async () => {
    system = await startSplitSystem('bulkkill', { RATE_LIMIT_MULTIPLIER: '1000' });
  });

  after(() => system?.stop());

  it(`ends every one of ${ROWS} rows as exactly one request, and its counts agree with the database and the events`, async () => {
    const db = system.api.database.knex;
    const account = await createAccount(db, { email: `bulkkill-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
    const { secret } = await createApiKey(db, account.id);
    const request = client(system.api.url!, secret);
    const documentId = await uploadLease(request);
    const template = await request('POST', '/api/v1/templates', {
      json: { name: 'Policy', documentId, roles: [{ name: 'employee' }], fields: [templateField('employee', 'signature')] },
    });
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    const rows = Array.from({ length: ROWS }, (_, row) => ({
      recipients: { employee: { name: `Employee ${row}`, email: `employee${row}@example.com` } },
      externalId: `e-${row}`,
    }));
    const post = (url: string) =>
      client(url, secret)('POST', '/api/v1/bulk-sends', { json: { templateId: template.body.id, rows }, headers: { 'Idempotency-Key': 'policy-2026' } });

    // The api dies under the POST; the client retries the same key on another api until the job is answered.
    const doomed = await system.startApiProcess();
    const first = post(doomed.url).catch(() => undefined);
    await sleep(300);
    await doomed.kill();
    await first;
    const created = await eventually(async () => {
      const answer = await post(system.api.url!);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
      return answer.body;
    }, 120_000);
    const id = created.id as string;

    // The worker dies again and again, spread over the job: once each further seventh of its rows is sent, at a
    // random moment within the next few seconds; it comes back at once.
    let kills = 0;
    const deadline = Date.now() + sendingMs;
    while (kills < WORKER_KILLS && Date.now() < deadline) {
      await sleep(500);
      const job = await request('GET', `/api/v1/bulk-sends/${id}`);
      if (job.body.status !== 'sending') break;
      if (job.body.rows.sent < ((kills + 1) * ROWS) / (WORKER_KILLS + 1)) continue;
      await sleep(Math.random() * 3000);
      await system.killWorker();
      kills++;
      system.startWorker();
    }
    expect(kills, 'the worker was killed while the job was sending').to.equal(WORKER_KILLS);

    const done = await eventually(async () => {
      const job = await request('GET', `/api/v1/bulk-sends/${id}`);
      expect(job.body.status).to.equal('sent');
      expect(job.body.finishedAt).to.be.a('string');
      return job.body;
    }, sendingMs);

    const inDb = await db('bulk_send_rows').where({ bulk_send_id: id }).select('row', 'status', 'signing_request_id', 'error');
    expect(inDb).to.have.length(ROWS);
    const failed = inDb.filter((row) => row.status === 'failed');
    const sent = inDb.filter((row) => row.status === 'sent');
    expect(sent.length + failed.length, 'every row sent or refused').to.equal(ROWS);
    expect(
      failed.every((row) => row.error),
      'a refused row records why',
    ).to.equal(true);
    expect(done.rows).to.deep.equal({ queued: 0, sent: sent.length, failed: failed.length, cancelled: 0 });

    const requests = await db('signing_requests').where({ bulk_send_id: id }).select('id', 'bulk_row');
    expect(requests, 'one request per sent row').to.have.length(sent.length);
    expect(new Set(requests.map((one) => one.bulk_row)).size, 'no row twice').to.equal(requests.length);
    const requestOf = new Map(requests.map((one) => [one.bulk_row, one.id]));
    expect(
      sent.every((row) => requestOf.get(row.row) === row.signing_request_id),
      'each row names its request',
    ).to.equal(true);
    expect(Object.values(done.requests as Record<string, number>).reduce((sum, count) => sum + count, 0)).to.equal(requests.length);

    // Each request's workflow announces it (signing_request.created) once it runs: the last may come after the job ends.
    await eventually(async () => {
      const events: { type: string; request: string | null; n: number }[] = await db('events')
        .where({ account_id: account.id })
        .whereIn('type', ['signing_request.created', 'bulk_send.created', 'bulk_send.completed'])
        .groupBy('type', db.raw(`data->>'signingRequestId'`))
        .select('type', db.raw(`data->>'signingRequestId' as request`), db.raw('count(*)::int as n'));
      const announced = new Set(events.filter((event) => event.type === 'signing_request.created').map((event) => event.request));
      expect(
        events.filter((event) => event.n !== 1).map(({ type, request, n }) => `${type} ${request ?? ''} ×${n}`),
        'no event twice',
      ).to.deep.equal([]);
      expect(requests.filter((one) => !announced.has(one.id)).length, 'requests without their signing_request.created').to.equal(0);
      expect(announced.size, 'no signing_request.created of another request').to.equal(requests.length);
      expect(events.filter((event) => event.type.startsWith('bulk_send.')).map((event) => event.type)).to.have.members([
        'bulk_send.created',
        'bulk_send.completed',
      ]);
    }, 300_000);
    const completed = await db('events').where({ account_id: account.id, type: 'bulk_send.completed' }).first();
    expect(completed.data).to.include({ bulkSendId: id, sent: sent.length, failed: failed.length });
  });
});
