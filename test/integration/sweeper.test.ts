import { ScheduleNotFoundError } from '@temporalio/client';
import { expect } from 'chai';
import { startSweeper, sweeperWorkflowId } from '../../src/temporal/client';
import { newId } from '../../src/ids';
import { startReceiver } from '../support/receiver';
import { eventually } from '../support/signing';
import { createTestAccount, runSweeper } from '../support/system';
import { uploadDocument } from '../support/documents';

const TWO_MINUTES_AGO = () => new Date(Date.now() - 120_000);

// What a process leaves behind when it dies between a commit and handing the work to Temporal.
describe('the sweeper', () => {
  it('delivers an event whose dispatch was lost with its process', async () => {
    const account = await createTestAccount();
    const receiver = await startReceiver();
    try {
      const webhook = await account.request('POST', '/api/v1/webhooks', { json: { url: receiver.url, events: ['*'] } });
      expect(webhook.status).to.equal(201);
      const id = newId('event');
      await account.db('events').insert({
        id,
        account_id: account.account.id,
        type: 'document.created',
        data: JSON.stringify({ documentId: newId('document'), fileName: 'lost.pdf' }),
        created_at: TWO_MINUTES_AGO(),
      });
      await runSweeper(account.system);
      await eventually(async () => expect(receiver.unique().has(id)).to.equal(true), 20_000);
      expect((await account.db('events').where({ id }).first()).dispatched_at).not.to.equal(null);
    } finally {
      await receiver.stop();
    }
  });

  it('starts the workflow of a signing request committed but never started', async () => {
    const account = await createTestAccount();
    const document = await uploadDocument(account.request, { fileName: 'orphan.pdf', pages: ['Orphaned agreement'] });
    const requestId = newId('signingRequest');
    const signerId = newId('signer');
    const orphanEmail = `orphan-${signerId}@example.com`;
    await account.db('signing_requests').insert({
      id: requestId,
      account_id: account.account.id,
      document_id: document.id,
      title: 'Orphaned agreement',
      signing_order: 'parallel',
      expires_at: new Date(Date.now() + 7 * 24 * 3600e3),
      reminder_every_days: 3,
      original_sha256: document.sha256,
      created_at: TWO_MINUTES_AGO(),
    });
    await account
      .db('signing_request_documents')
      .insert({ signing_request_id: requestId, position: 1, document_id: document.id, original_sha256: document.sha256 });
    await account.db('signers').insert({ id: signerId, signing_request_id: requestId, name: 'Orphan Signer', email: orphanEmail, order: 1 });

    await runSweeper(account.system);
    await eventually(async () => {
      const got = await account.request('GET', `/api/v1/signatures/${requestId}`);
      expect(got.body.signers[0].status).to.equal('notified');
    }, 20_000);
    expect((await account.db('signing_requests').where({ id: requestId }).first()).workflow_started_at).not.to.equal(null);
    const invitation = await account.db('mail_outbox').where('to_address', 'like', `%${orphanEmail}%`);
    expect(invitation).to.have.length(1);
  });
});

describe('the sweeper and Idempotency-Keys', () => {
  it('deletes the keys past their 24 hours, and only those', async () => {
    const account = await createTestAccount();
    const key = (name: string, expiresAt: Date) => ({
      account_id: account.account.id,
      key: name,
      method: 'POST',
      path: '/api/v1/documents',
      holder: 'h',
      status: 201,
      created_at: new Date(expiresAt.getTime() - 86_400_000),
      expires_at: expiresAt,
    });
    await account.db('idempotency_keys').insert([key('old', TWO_MINUTES_AGO()), key('fresh', new Date(Date.now() + 3_600_000))]);
    await runSweeper(account.system);
    expect(await account.db('idempotency_keys').where({ account_id: account.account.id }).pluck('key')).to.deep.equal(['fresh']);
  });
});

// Housekeeping must not fill the Temporal UI's list, sorted by start time, that operators read requests in.
describe('the sweeper in Temporal', () => {
  it('is one workflow on its task queue however many sweeps it makes: no workflow a sweep, no schedule', async () => {
    const { system } = await createTestAccount();
    const taskQueue = system.config.TEMPORAL_TASK_QUEUE;
    const sweeper = system.client.workflow.getHandle(sweeperWorkflowId(taskQueue));
    await runSweeper(system); // a system of another test, stopped, may have taken the sweeper with it: this starts it again
    const { runId, type } = await sweeper.describe();
    const since = new Date().toISOString();
    for (let sweep = 0; sweep < 3; sweep++)
      expect(await runSweeper(system)).to.have.keys('legacy', 'events', 'webhooks', 'signingRequests', 'verificationLocks', 'idempotencyKeys', 'bulkSends');
    const after = await sweeper.describe();
    expect({ type, runId: after.runId, status: after.status.name }).to.deep.equal({ type: 'sweeperWorkflow', runId, status: 'RUNNING' });
    const sweepers = `WorkflowType = 'sweeperWorkflow' AND TaskQueue = '${taskQueue}'`;
    await eventually(async () => expect((await system.client.workflow.count(`${sweepers} AND ExecutionStatus = 'Running'`)).count).to.equal(1));
    expect((await system.client.workflow.count(`${sweepers} AND StartTime > '${since}'`)).count).to.equal(0);
    expect(
      await system.client.schedule
        .getHandle(sweeperWorkflowId(taskQueue))
        .describe()
        .catch((error) => error),
    ).to.be.instanceOf(ScheduleNotFoundError);
  });

  it('replaces the every-minute schedule of earlier versions when it starts', async () => {
    const { system } = await createTestAccount();
    // A task queue no worker serves: the sweeper started there never runs, and nothing else sees it.
    const taskQueue = `signet-test-upgraded-${newId('event')}`;
    const scheduleId = sweeperWorkflowId(taskQueue);
    await system.client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1 minute' }] },
      action: { type: 'startWorkflow', workflowType: 'sweeperWorkflow', workflowId: scheduleId, taskQueue },
      state: { paused: true },
    });
    try {
      await startSweeper(system.client, taskQueue);
      expect(
        await system.client.schedule
          .getHandle(scheduleId)
          .describe()
          .catch((error) => error),
      ).to.be.instanceOf(ScheduleNotFoundError);
      expect((await system.client.workflow.getHandle(sweeperWorkflowId(taskQueue)).describe()).status.name).to.equal('RUNNING');
    } finally {
      await system.client.schedule
        .getHandle(scheduleId)
        .delete()
        .catch(() => undefined);
      await system.client.workflow
        .getHandle(sweeperWorkflowId(taskQueue))
        .terminate('test over')
        .catch(() => undefined);
    }
  });
});
