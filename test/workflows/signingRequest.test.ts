import { expect } from 'chai';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { SigningRequestActivities } from '../../workflows/activities';
import { ApplicationFailure, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import {
  approveUpdate,
  cancelUpdate,
  declineUpdate,
  progressQuery,
  searchAttributes,
  type SigningRequestOutcome,
  signUpdate,
  stateQuery,
  viewDoneUpdate,
  viewedSignal,
} from '../../workflows/definitions';
import { changeRefused, databaseRefusal, type SigningRequestInput } from '../../src/domain/signingRequests';
import { signingRequestWorkflow } from '../../workflows/signingRequest';
import { eventually } from '../support/signing';
import { bundleWorkflows, startDevServer, startTimeSkippingServer } from '../support/temporal';

/** Activities that record each call (its name and arguments) and answer as the real ones would. */
function recordingActivities() {
  const calls: [string, unknown[]][] = [];
  const record =
    (name: string, result?: unknown) =>
    async (...args: unknown[]) => {
      calls.push([name, args]);
      return result;
    };
  const activities: Record<keyof SigningRequestActivities, (...args: unknown[]) => Promise<unknown>> = {
    sendInvitations: record('sendInvitations'),
    sendReminders: async (...args) => {
      calls.push(['sendReminders', args]);
      return args[1];
    },
    announceRequest: record('announceRequest'),
    recordView: record('recordView'),
    recordViewStep: record('recordViewStep', true),
    recordSignature: record('recordSignature', true),
    recordApproval: record('recordApproval', true),
    recordDecline: record('recordDecline', true),
    recordCancellation: record('recordCancellation', true),
    expireRequest: record('expireRequest', true),
    completeRequest: record('completeRequest'),
    sendClosingMails: record('sendClosingMails'),
  };
  return { calls, activities, names: () => calls.map(([name]) => name) };
}

/** A request that ended completes (its outcome is no workflow failure) with the outcome in SignetStatus. */
async function expectEndedAs(handle: WorkflowHandle, outcome: SigningRequestOutcome) {
  const description = await handle.describe();
  expect(description.status.name).to.equal('COMPLETED');
  expect(description.typedSearchAttributes.get(searchAttributes.status)).to.equal(outcome);
}

// The workflow's decisions on a Temporal dev server of the test's own, with activities replaced by
// recorders. Reminders and expiry wait on timers: they are tested with time skipping, below.
describe('signingRequestWorkflow decisions', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;

  before(async function () {
    env = await startDevServer(this);
    bundle = await bundleWorkflows();
  });

  after(() => env?.teardown());

  async function run<T>(
    input: Partial<SigningRequestInput>,
    activities: object,
    body: (handle: Awaited<ReturnType<typeof env.client.workflow.start>>) => Promise<T>,
    options: { workflowTaskTimeout?: string } = {},
  ) {
    const taskQueue = `workflow-test-${Math.random().toString(36).slice(2)}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
    const requestId = `sr_test_${Math.random().toString(36).slice(2)}`;
    return worker.runUntil(async () => {
      const handle = await env.client.workflow.start(signingRequestWorkflow, {
        taskQueue,
        workflowId: requestId,
        ...options,
        args: [
          {
            requestId,
            signingOrder: 'parallel',
            signerIds: ['sgr_a', 'sgr_b'],
            expiresAt: new Date(Date.now() + 60_000).toISOString(),
            reminderEveryMs: 0,
            ...input,
          },
        ],
      });
      return body(handle);
    });
  }

  it('sequential: invites the next signer only after the previous one signed, then completes', async () => {
    const recorder = recordingActivities();
    const result = await run({ signingOrder: 'sequential' }, recorder.activities, async (handle) => {
      const sign = (signerId: string) => handle.executeUpdate(signUpdate, { args: [{ signerId, signature: { type: 'typed', value: signerId } }] });
      const early = await sign('sgr_b').then(
        () => 'accepted',
        (error: Error) => String((error.cause as Error | undefined)?.message ?? error.message),
      );
      expect(early).to.match(/turn/);
      await sign('sgr_a');
      await eventually(async () => expect((await handle.query(stateQuery)).signers.map((signer) => signer.status)).to.deep.equal(['signed', 'notified']));
      await sign('sgr_b');
      const result = await handle.result();
      await expectEndedAs(handle, 'completed');
      return result;
    });
    expect(result.outcome).to.equal('completed');
    const invitations = recorder.calls.filter(([name]) => name === 'sendInvitations').map(([, args]) => args[1]);
    expect(invitations).to.deep.equal([['sgr_a'], ['sgr_b']]);
    expect(recorder.names().filter((name) => name === 'completeRequest')).to.have.length(1);
  });

  it('routes by step: approver and signer at once, then a viewer; cc is never invited and blocks nothing', async () => {
    const recorder = recordingActivities();
    const recipients = [
      { id: 'sgr_approver', type: 'approver', routingOrder: 1 },
      { id: 'sgr_signer', type: 'signer', routingOrder: 1 },
      { id: 'sgr_viewer', type: 'viewer', routingOrder: 2 },
      { id: 'sgr_cc', type: 'cc', routingOrder: 1 },
    ] as const;
    const result = await run({ signerIds: recipients.map((each) => each.id), recipients: [...recipients] }, recorder.activities, async (handle) => {
      const refusal = (promise: Promise<unknown>) =>
        promise.then(
          () => 'accepted',
          (error: Error) => String((error.cause as Error | undefined)?.message ?? error.message),
        );
      const who = { signerId: 'sgr_signer', signature: { type: 'typed' as const, value: 'S' } };
      expect(await refusal(handle.executeUpdate(signUpdate, { args: [{ ...who, signerId: 'sgr_approver' }] }))).to.equal(
        'This recipient is an approver: it does not sign.',
      );
      expect(await refusal(handle.executeUpdate(approveUpdate, { args: [{ signerId: 'sgr_signer' }] }))).to.equal(
        'This recipient is a signer: it does not approve.',
      );
      expect(await refusal(handle.executeUpdate(viewDoneUpdate, { args: [{ signerId: 'sgr_viewer' }] }))).to.match(/turn/);
      expect(await refusal(handle.executeUpdate(declineUpdate, { args: [{ signerId: 'sgr_cc', reason: 'no' }] }))).to.equal(
        'This recipient is a cc: it does not decline.',
      );
      expect((await handle.query(progressQuery)).waitingFor).to.deep.equal(['sgr_approver', 'sgr_signer']);
      await handle.executeUpdate(approveUpdate, { args: [{ signerId: 'sgr_approver' }] });
      await handle.executeUpdate(signUpdate, { args: [who] });
      await eventually(async () => expect((await handle.query(progressQuery)).waitingFor).to.deep.equal(['sgr_viewer']));
      // Opening the page is not a viewer's step: its page says when the documents have been shown.
      await handle.signal(viewedSignal, { signerId: 'sgr_viewer' });
      expect((await handle.query(progressQuery)).waitingFor).to.deep.equal(['sgr_viewer']);
      await handle.executeUpdate(viewDoneUpdate, { args: [{ signerId: 'sgr_viewer' }] });
      return handle.result();
    });
    expect(result.outcome).to.equal('completed');
    expect(result.signers).to.deep.equal([
      { id: 'sgr_approver', status: 'approved' },
      { id: 'sgr_signer', status: 'signed' },
      { id: 'sgr_viewer', status: 'viewed' },
      { id: 'sgr_cc', status: 'pending' },
    ]);
    const invitations = recorder.calls.filter(([name]) => name === 'sendInvitations').map(([, args]) => args[1]);
    expect(invitations).to.deep.equal([['sgr_approver', 'sgr_signer'], ['sgr_viewer']]);
    expect(recorder.names().filter((name) => name === 'completeRequest')).to.have.length(1);
  });

  it('an approver’s decline ends the request; the signer of the same step is refused after it', async () => {
    const recorder = recordingActivities();
    // The workflow stays open (its closing e-mails held) until the late signature has its answer: closed,
    // it would abort the update rather than refuse it.
    let releaseClosing!: () => void;
    const closingHeld = new Promise<void>((resolve) => (releaseClosing = resolve));
    recorder.activities.sendClosingMails = async (...args) => {
      recorder.calls.push(['sendClosingMails', args]);
      await closingHeld;
    };
    const result = await run(
      {
        signerIds: ['sgr_a', 'sgr_b'],
        recipients: [
          { id: 'sgr_a', type: 'approver', routingOrder: 1 },
          { id: 'sgr_b', type: 'signer', routingOrder: 1 },
        ],
      },
      recorder.activities,
      async (handle) => {
        await handle.executeUpdate(declineUpdate, { args: [{ signerId: 'sgr_a', reason: 'Wrong amount' }] });
        const late = await handle.executeUpdate(signUpdate, { args: [{ signerId: 'sgr_b', signature: { type: 'typed', value: 'B' } }] }).then(
          () => 'accepted',
          (error: Error) => String((error.cause as Error | undefined)?.message ?? error.message),
        );
        releaseClosing();
        expect(late).to.equal('This signing request is declined.');
        const result = await handle.result();
        await expectEndedAs(handle, 'declined');
        // What an operator's list of declined requests runs.
        await eventually(async () => {
          const listed = [];
          for await (const workflow of env.client.workflow.list({ query: `SignetStatus = 'declined' AND WorkflowId = '${handle.workflowId}'` }))
            listed.push(workflow.workflowId);
          expect(listed).to.deep.equal([handle.workflowId]);
        });
        return result;
      },
    );
    expect(result.outcome).to.equal('declined');
    expect(recorder.names()).to.not.include('recordSignature');
  });

  it('answers the last signature before sealing: the signer does not wait for the seal, and progress says sealing meanwhile', async function () {
    // A worker hands back a task held by a local activity at 80% of the task's timeout: a long timeout
    // keeps that from answering the update while the seal is held, within this test's time.
    this.timeout(30_000);
    const recorder = recordingActivities();
    let sealStarted!: () => void;
    const sealing = new Promise<void>((resolve) => (sealStarted = resolve));
    let releaseSeal!: () => void;
    const sealHeld = new Promise<void>((resolve) => (releaseSeal = resolve));
    recorder.activities.completeRequest = async (...args) => {
      recorder.calls.push(['completeRequest', args]);
      sealStarted();
      await sealHeld;
    };
    const result = await run(
      { signerIds: ['sgr_a'] },
      recorder.activities,
      async (handle) => {
        // A seal run inside the task that answers the update (a local activity) would hold this answer.
        const answer = await handle.executeUpdate(signUpdate, { args: [{ signerId: 'sgr_a', signature: { type: 'typed', value: 'sgr_a' } }] });
        expect(answer.signers).to.deep.equal([{ id: 'sgr_a', status: 'signed' }]);
        await sealing;
        expect(await handle.query(progressQuery)).to.deep.equal({
          stage: 'sealing',
          waitingFor: [],
          sealing: { attempts: 0, lastError: null, nextAttemptAt: null },
        });
        releaseSeal();
        return handle.result();
      },
      { workflowTaskTimeout: '1 minute' },
    );
    expect(result.outcome).to.equal('completed');
    expect(recorder.names().slice(-2)).to.deep.equal(['completeRequest', 'sendClosingMails']);
  });

  it('cancel ends it at once; later updates are refused', async () => {
    const recorder = recordingActivities();
    const result = await run({}, recorder.activities, async (handle) => {
      await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'changed my mind' }] });
      const result = await handle.result();
      await expectEndedAs(handle, 'cancelled');
      return result;
    });
    expect(result.outcome).to.equal('cancelled');
    const cancellation = recorder.calls.find(([name]) => name === 'recordCancellation')!;
    expect(cancellation[1][1]).to.equal('changed my mind');
    expect(recorder.names()).not.to.include('completeRequest');
  });

  // The database refusing a change for good (activities/signingRequest.ts makes it this failure at once).
  const refusedForGood = () => {
    throw ApplicationFailure.nonRetryable('The database refused recordCancellation for good (SQLSTATE 22P02)', databaseRefusal);
  };
  const failureOf = (work: Promise<unknown>) =>
    work.then(
      () => expect.fail('the update was accepted'),
      (error: unknown) => {
        expect(error).to.be.instanceOf(WorkflowUpdateFailedError);
        return (error as WorkflowUpdateFailedError).cause as ApplicationFailure;
      },
    );

  it('a cancellation the database refuses for good is taken back: the update fails once, the request stays pending and can still complete', async () => {
    const recorder = recordingActivities();
    let refusals = 0;
    recorder.activities.recordCancellation = async () => {
      refusals++;
      refusedForGood();
    };
    const result = await run({}, recorder.activities, async (handle) => {
      const failure = await failureOf(handle.executeUpdate(cancelUpdate, { args: [{ reason: 'a\ud800b' }] }));
      expect(failure.type).to.equal(changeRefused);
      expect(await handle.query(stateQuery)).to.deep.include({ status: 'pending' });
      expect(await handle.query(progressQuery)).to.deep.equal({ stage: 'awaiting_signers', waitingFor: ['sgr_a', 'sgr_b'], sealing: null });
      // Open as before: both can sign, and the request completes.
      for (const signerId of ['sgr_a', 'sgr_b'])
        await handle.executeUpdate(signUpdate, { args: [{ signerId, signature: { type: 'typed', value: signerId } }] });
      return handle.result();
    });
    expect(refusals).to.equal(1); // not retried
    expect(result.outcome).to.equal('completed');
    expect(recorder.names().filter((name) => name === 'sendClosingMails')).to.have.length(1);
  });

  it('a decline or a signature the database refuses for good changes nothing; the next try and a cancel go through', async () => {
    const recorder = recordingActivities();
    recorder.activities.recordDecline = async () => refusedForGood();
    let signatures = 0;
    recorder.activities.recordSignature = async () => (++signatures === 1 ? refusedForGood() : true);
    const result = await run({}, recorder.activities, async (handle) => {
      const declined = await failureOf(handle.executeUpdate(declineUpdate, { args: [{ signerId: 'sgr_a', reason: 'Me \udfff' }] }));
      expect(declined.type).to.equal(changeRefused);
      const signed = await failureOf(handle.executeUpdate(signUpdate, { args: [{ signerId: 'sgr_b', signature: { type: 'typed', value: 'Me \udfff' } }] }));
      expect(signed.type).to.equal(changeRefused);
      const state = await handle.query(stateQuery);
      expect(state.status).to.equal('pending');
      expect(state.signers.map((signer) => signer.status)).to.deep.equal(['notified', 'notified']);
      expect((await handle.query(progressQuery)).waitingFor).to.deep.equal(['sgr_a', 'sgr_b']);
      await handle.executeUpdate(signUpdate, { args: [{ signerId: 'sgr_b', signature: { type: 'typed', value: 'Bea' } }] });
      await handle.executeUpdate(cancelUpdate, { args: [{ reason: 'changed my mind' }] });
      return handle.result();
    });
    expect(result.outcome).to.equal('cancelled');
    expect(result.signers.map((signer: { status: string }) => signer.status)).to.deep.equal(['notified', 'signed']);
  });
});

// Days of reminders and expiry in seconds: Temporal's time-skipping test server (from Maven Central,
// provisioned by scripts/provision.sh) jumps over every timer the workflow waits on.
describe('signingRequestWorkflow timers, with time skipping', function () {
  this.timeout(120_000);
  const DAY = 24 * 60 * 60 * 1000;
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;

  before(async function () {
    env = await startTimeSkippingServer(this);
    bundle = await bundleWorkflows();
  });

  after(() => env?.teardown());

  /**
   * Runs a request to its end, after `during` (which may act on it); it expires `expiresInMs` after the
   * server's clock, which earlier tests moved on.
   */
  async function execute(
    input: Partial<SigningRequestInput> & { expiresInMs: number },
    activities: object,
    during: (handle: WorkflowHandle<typeof signingRequestWorkflow>) => Promise<void> = async () => undefined,
  ) {
    const { expiresInMs, ...rest } = input;
    const taskQueue = `time-skipping-${Math.random().toString(36).slice(2)}`;
    const requestId = `sr_time_skipping_${Math.random().toString(36).slice(2)}`;
    const expiresAt = new Date((await env.currentTimeMs()) + expiresInMs).toISOString();
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
    return worker.runUntil(async () => {
      const handle = await env.client.workflow.start(signingRequestWorkflow, {
        taskQueue,
        workflowId: requestId,
        args: [{ requestId, signingOrder: 'parallel', signerIds: ['sgr_a'], expiresAt, reminderEveryMs: 0, ...rest }],
      });
      await during(handle);
      const result = await handle.result();
      await expectEndedAs(handle, result.outcome);
      return result;
    });
  }

  it('reminds every 3 days and expires after 10, without waiting 10 days', async () => {
    const recorder = recordingActivities();
    const result = await execute({ reminderEveryMs: 3 * DAY, expiresInMs: 10 * DAY }, recorder.activities);
    expect(result.outcome).to.equal('expired');
    expect(recorder.names()).to.deep.equal([
      'sendInvitations',
      'announceRequest',
      'sendReminders',
      'sendReminders',
      'sendReminders',
      'expireRequest',
      'sendClosingMails',
    ]);
  });

  it('a seal lost with its worker is tried again after the first delay, not a doubled one', async () => {
    // Two seals lost, then one that works. A lost seal sends no heartbeat while it moves the test server's
    // clock past its heartbeat timeout (15 s), as if its worker had died: the server times it out.
    const recorder = recordingActivities();
    let seals = 0;
    recorder.activities.completeRequest = async () => {
      if (++seals <= 2) await env.sleep('16 seconds');
    };
    let workflow: WorkflowHandle | undefined;
    const result = await execute({ expiresInMs: 10 * DAY }, recorder.activities, async (handle) => {
      workflow = handle;
      await handle.executeUpdate(signUpdate, { args: [{ signerId: 'sgr_a', signature: { type: 'typed', value: 'sgr_a' } }] });
    });
    expect(result.outcome).to.equal('completed');
    expect(seals).to.equal(3);
    const { events } = await workflow!.fetchHistory();
    const timers = (events ?? [])
      .filter((event) => event.timerStartedEventAttributes)
      .map((event) => Number(event.timerStartedEventAttributes!.startToFireTimeout!.seconds));
    // One retry timer per lost seal, 1 s each (a failing seal waits 1 s, then 2 s); the expiry's is days away.
    expect(timers.filter((seconds) => seconds < 60)).to.deep.equal([1, 1]);
  });

  it('reminds the signers whose turn it is on every interval, then expires', async () => {
    const recorder = recordingActivities();
    const result = await execute({ signerIds: ['sgr_a', 'sgr_b'], reminderEveryMs: DAY, expiresInMs: 3.5 * DAY }, recorder.activities);
    expect(result.outcome).to.equal('expired');
    const reminded = recorder.calls.filter(([name]) => name === 'sendReminders').map(([, args]) => args[1]);
    expect(reminded).to.deep.equal([
      ['sgr_a', 'sgr_b'],
      ['sgr_a', 'sgr_b'],
      ['sgr_a', 'sgr_b'],
    ]);
    expect(recorder.names().slice(-2)).to.deep.equal(['expireRequest', 'sendClosingMails']);
  });
});
