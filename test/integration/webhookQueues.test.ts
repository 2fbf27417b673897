import { expect } from 'chai';
import { unitOfWork } from '../../src/db/unitOfWork';
import { isId } from '../../src/domain/ids';
import { newId } from '../../src/ids';
import { runningLegacyWorkflows } from '../../src/webhooks/legacy';
import { webhookStatusQuery, webhookWorkflowId } from '../../workflows/definitions';
import { startReceiver, type Receiver, type Responder } from '../support/receiver';
import { eventually } from '../support/signing';
import { createTestAccount, runSweeper } from '../support/system';
import { webhooksSettled } from '../support/webhooks';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const receivers: Receiver[] = [];
async function receiver(respond?: Responder) {
  const started = await startReceiver(respond);
  receivers.push(started);
  return started;
}

async function subscribe(account: Account, url: string) {
  const created = await account.request('POST', '/api/v1/webhooks', { json: { url, events: ['*'] } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return created.body as { id: string };
}

/** `count` events of the account, each committed on its own and dispatched at commit, as the api does. */
async function emit(account: Account, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push((await account.system.events.record(account.db, account.account.id, 'document.updated', { documentId: newId('document'), n: i })).id);
  return ids;
}

/** The running workflows of an account, as an operator lists them in Temporal. */
async function runningWorkflows(account: Account) {
  const found: { workflowId: string; type: string }[] = [];
  const query = `SignetAccountId = '${account.account.id}' AND ExecutionStatus = 'Running'`;
  for await (const execution of account.system.client.workflow.list({ query })) found.push({ workflowId: execution.workflowId, type: execution.type });
  return found;
}

describe('webhook delivery queues: one workflow per endpoint', () => {
  after(async () => {
    await Promise.all(receivers.map((started) => started.stop().catch(() => undefined)));
  });

  it('a failing endpoint holds only its own queue: another account’s healthy endpoint gets every event meanwhile', async () => {
    const [slow, fast] = [await createTestAccount(), await createTestAccount()];
    const down = await receiver(() => ({ status: 503, delayMs: 400 }));
    const healthy = await receiver();
    const failing = await subscribe(slow, down.url);
    await subscribe(fast, healthy.url);
    const [failingEvents, healthyEvents] = await Promise.all([emit(slow, 40), emit(fast, 40)]);
    await eventually(async () => expect(healthy.unique().size).to.equal(40), 15_000);
    expect([...healthy.unique().keys()].sort()).to.deep.equal([...healthyEvents].sort());

    // The failing one: its backlog on the API, its health in Temporal, its queue's status by query.
    const fetched = await slow.request('GET', `/api/v1/webhooks/${failing.id}`);
    expect(fetched.body.backlog).to.be.within(1, failingEvents.length);
    expect(Date.parse(fetched.body.oldestPendingAt)).to.be.below(Date.now());
    const handle = slow.system.client.workflow.getHandle(webhookWorkflowId(failing.id));
    await eventually(async () => {
      const status = await handle.query(webhookStatusQuery);
      expect(status.health).to.equal('failing');
      expect(status.backlog).to.be.above(0);
      expect(status.lastError).to.equal('HTTP 503');
    });
    await eventually(async () => {
      const query = `SignetWebhookId = '${failing.id}' AND SignetWebhookHealth = 'failing' AND ExecutionStatus = 'Running'`;
      const listed = [];
      for await (const execution of slow.system.client.workflow.list({ query })) listed.push(execution.workflowId);
      expect(listed).to.deep.equal([webhookWorkflowId(failing.id)]);
    });
    await slow.request('DELETE', `/api/v1/webhooks/${failing.id}`); // its workflow ends at its next batch
  });

  it('runs one workflow per webhook with work to do, however many events', async () => {
    const account = await createTestAccount();
    const slowReceivers = await Promise.all([1, 2, 3].map(() => receiver(() => ({ status: 200, delayMs: 50 }))));
    const webhooks = await Promise.all(slowReceivers.map((each) => subscribe(account, each.url)));
    const emitted = emit(account, 60);
    const seen = new Set<string>();
    let most = 0;
    // Samples the running workflows four times a second while the burst is delivered (the pause is the sampling, not a wait for something).
    for (let i = 0; i < 40 && slowReceivers.some((each) => each.unique().size < 60); i++) {
      const running = await runningWorkflows(account);
      most = Math.max(most, running.length);
      for (const execution of running) {
        expect(execution.type).to.equal('webhookWorkflow');
        seen.add(execution.workflowId);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await emitted;
    await eventually(async () => slowReceivers.forEach((each) => expect(each.unique().size).to.equal(60)), 20_000);
    expect(most).to.be.within(1, 3);
    expect([...seen].every((id) => webhooks.some((webhook) => id === webhookWorkflowId(webhook.id)))).to.equal(true);
    // The last attempts are recorded, and counted, just after their receivers answered.
    await eventually(async () => {
      for (const webhook of webhooks)
        expect((await account.request('GET', `/api/v1/webhooks/${webhook.id}`)).body).to.include({ backlog: 0, oldestPendingAt: null });
      // Counted for operators: this process's worker sent them.
      const scrape = await (await fetch(account.system.metricsUrl!)).text();
      expect(Number(/^signet_webhook_deliveries_total\{outcome="delivered"\} (\d+)/m.exec(scrape)?.[1])).to.be.at.least(180);
    });
  });

  it('queues an event’s deliveries in its own transaction: they commit with it, or roll back with it', async () => {
    const account = await createTestAccount();
    const hooks = await receiver();
    const webhook = await subscribe(account, hooks.url);
    const deliveriesOf = (eventId: string) => account.db('webhook_deliveries').where({ webhook_id: webhook.id, event_id: eventId });

    let rolledBack = '';
    await unitOfWork(account.db, async (trx) => {
      rolledBack = (await account.system.events.record(trx, account.account.id, 'document.updated', { documentId: newId('document') })).id;
      expect(await trx('webhook_deliveries').where({ webhook_id: webhook.id, event_id: rolledBack })).to.have.length(1);
      throw new Error('the change fails after its event was recorded');
    }).catch((error) => expect(error.message).to.equal('the change fails after its event was recorded'));
    expect(await account.db('events').where({ id: rolledBack })).to.have.length(0);
    expect(await deliveriesOf(rolledBack)).to.have.length(0);

    const committed = await unitOfWork(account.db, (trx) =>
      account.system.events.record(trx, account.account.id, 'document.updated', { documentId: newId('document') }),
    );
    const [event] = await account.db('events').where({ id: committed.id });
    expect(event.dispatched_at).not.to.equal(null);
    expect(await deliveriesOf(committed.id)).to.have.length(1);
    await eventually(async () => expect([...hooks.unique().keys()]).to.deep.equal([committed.id]));
    // A retried step (same idempotency key) gets the event back and queues nothing more.
    const key = `step-${newId('event')}`;
    const first = await account.system.events.record(account.db, account.account.id, 'document.updated', { n: 1 }, key);
    const again = await account.system.events.record(account.db, account.account.id, 'document.updated', { n: 1 }, key);
    expect(again.id).to.equal(first.id);
    expect(await deliveriesOf(first.id)).to.have.length(1);
  });

  it('queues one delivery per subscribed webhook, each with an id of its own, in the transaction that records the event', async () => {
    const account = await createTestAccount();
    const hooks = await receiver();
    const subscribed = [];
    for (let i = 0; i < 34; i++) subscribed.push(await subscribe(account, `${hooks.url}/${i}`));
    const other = await account.request('POST', '/api/v1/webhooks', { json: { url: `${hooks.url}/other`, events: ['template.created'] } });
    expect(other.status).to.equal(201);
    const event = await account.system.events.record(account.db, account.account.id, 'document.updated', { documentId: newId('document') });
    const deliveries = await account.db('webhook_deliveries').where({ event_id: event.id }).orderBy('id');
    expect(deliveries.map((delivery) => delivery.webhook_id).sort()).to.deep.equal(subscribed.map((webhook) => webhook.id).sort());
    expect(new Set(deliveries.map((delivery) => delivery.id)).size).to.equal(34);
    for (const delivery of deliveries) expect(isId('delivery', delivery.id), delivery.id).to.equal(true);
    expect(new Set(deliveries.map((delivery) => delivery.body))).to.have.length(1);
    expect(JSON.parse(deliveries[0].body)).to.deep.equal({ id: event.id, type: 'document.updated', timestamp: event.timestamp, data: event.data });
    await eventually(async () => expect(hooks.received).to.have.length(34), 20_000);
    expect(new Set(hooks.received.map((entry) => entry.headers['webhook-id']))).to.deep.equal(new Set([event.id]));
  });

  it('a batch under way follows its webhook: a new URL takes the rest of the queue, a 410 stops it', async () => {
    const account = await createTestAccount();
    const before = await receiver(() => ({ status: 200, delayMs: 30 }));
    const after = await receiver(() => ({ status: 410 }));
    const webhook = await subscribe(account, before.url);
    const emitted = emit(account, 200);
    await eventually(async () => expect(before.received.length).to.be.at.least(5));
    const patched = await account.request('PATCH', `/api/v1/webhooks/${webhook.id}`, { json: { url: after.url } });
    expect(patched.status).to.equal(200);
    const ids = await emitted;
    await eventually(
      async () => expect((await account.request('GET', `/api/v1/webhooks/${webhook.id}`)).body).to.include({ enabled: false, backlog: 0 }),
      20_000,
    );
    // The old URL got only what was sent before the change (or in flight then); the new one answered
    // 410 to its first group, and nothing was sent after it: the rest was cancelled.
    expect(before.unique().size).to.be.below(ids.length);
    expect(after.received.length).to.be.within(1, 16);
    const rows: { status: string }[] = await account.db('webhook_deliveries').where({ webhook_id: webhook.id }).select('status');
    const count = (status: string) => rows.filter((row) => row.status === status).length;
    expect(count('succeeded')).to.equal(before.unique().size);
    expect(count('failed')).to.equal(after.received.length);
    expect(count('pending')).to.equal(0);
    expect(count('cancelled'))
      .to.equal(rows.length - count('succeeded') - count('failed'))
      .and.be.above(0);
  });

  it('the sweeper wakes a queue whose wake-up was lost with its process', async () => {
    const account = await createTestAccount();
    const hooks = await receiver();
    const webhook = await subscribe(account, hooks.url);
    const eventId = newId('event');
    const body = JSON.stringify({ id: eventId, type: 'document.updated', timestamp: new Date().toISOString(), data: {} });
    await account.db('webhook_deliveries').insert({
      id: newId('delivery'),
      webhook_id: webhook.id,
      event_id: eventId,
      event_type: 'document.updated',
      body,
      next_retry_at: new Date(Date.now() - 120_000),
    });
    expect((await runSweeper(account.system)).webhooks).to.be.at.least(1);
    await eventually(async () => expect([...hooks.unique().keys()]).to.deep.equal([eventId]), 20_000);
  });

  it('takes over the per-event workflows of the previous version: each delivery sent once more at most, with its webhook-id', async () => {
    const account = await createTestAccount();
    const hooks = await receiver();
    const webhook = await subscribe(account, hooks.url);
    const { client, config } = account.system;
    // Two events dispatched by the old version: one whose workflow had not yet written its deliveries,
    // one whose delivery was being attempted (attempt 1 recorded, no due time) when the upgrade came.
    const [unprepared, inFlight, finished] = [newId('event'), newId('event'), newId('event')];
    const data = JSON.stringify({ documentId: newId('document') });
    await account
      .db('events')
      .insert(
        [unprepared, inFlight, finished].map((id) => ({ id, account_id: account.account.id, type: 'document.updated', data, dispatched_at: new Date() })),
      );
    const bodyOf = (id: string) => JSON.stringify({ id, type: 'document.updated', timestamp: new Date().toISOString(), data: JSON.parse(data) });
    await account.db('webhook_deliveries').insert([
      {
        id: newId('delivery'),
        webhook_id: webhook.id,
        event_id: inFlight,
        event_type: 'document.updated',
        body: bodyOf(inFlight),
        attempts: 1,
        last_status_code: 500,
      },
      {
        id: newId('delivery'),
        webhook_id: webhook.id,
        event_id: finished,
        event_type: 'document.updated',
        body: bodyOf(finished),
        attempts: 1,
        status: 'succeeded',
      },
    ]);
    const legacy = await Promise.all(
      [unprepared, inFlight].map((eventId) =>
        client.workflow.start('deliverEventWorkflow', {
          workflowId: `deliver-${eventId}`,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          args: [{ eventId, retryScale: 1 }],
        }),
      ),
    );

    // The sweeper finds them by a visibility query, which can lag their start on a busy machine (it runs
    // every minute, so a late one is taken over by the next run): CI once saw one of the two.
    await eventually(async () => {
      const visible: string[] = [];
      for await (const execution of client.workflow.list({ query: runningLegacyWorkflows(config.TEMPORAL_TASK_QUEUE) })) visible.push(execution.workflowId);
      expect(visible).to.include.members(legacy.map((handle) => handle.workflowId));
    }, 20_000);
    await runSweeper(account.system);
    await eventually(async () => expect(new Set(hooks.unique().keys())).to.deep.equal(new Set([unprepared, inFlight])), 20_000);
    for (const handle of legacy) expect((await handle.describe()).status.name).to.equal('TERMINATED');
    const rows = await account.db('webhook_deliveries').where({ webhook_id: webhook.id }).orderBy('event_id');
    expect(Object.fromEntries(rows.map((row) => [row.event_id, [row.status, row.attempts]]))).to.deep.equal({
      [unprepared]: ['succeeded', 1],
      [inFlight]: ['succeeded', 2],
      [finished]: ['succeeded', 1],
    });
    await webhooksSettled(account);
    expect(hooks.received).to.have.length(2);
  });
});
