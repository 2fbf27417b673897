import { expect } from 'chai';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { BatchResult } from '../../src/webhooks/delivery';
import { waitAfterAttempt } from '../../src/webhooks/delivery';
import type { WebhookActivities } from '../../workflows/activities';
import { wakeSignal, webhookStatusQuery } from '../../workflows/definitions';
import { DISABLE_FAILING_AFTER_MS, RETRY_SCHEDULE_MS, webhookWorkflow } from '../../workflows/webhook';
import { eventually } from '../support/signing';
import { bundleWorkflows, startTimeSkippingServer } from '../support/temporal';

const HOUR = 3600e3;

type Answer = { status: 'delivered' | 'retry' | 'gone'; retryAfterMs?: number };

/** A webhook's queue in memory, sent by the fake activity at the test server's (skipped) time. */
class FakeQueue {
  deliveries: { id: string; attempts: number; dueAt: number | null; at: number[] }[] = [];
  disabled: string[] = [];
  enabled = true;
  failingSince: number | null = null;
  constructor(
    private readonly now: () => Promise<number>,
    private readonly answer: (id: string, attempt: number) => Answer,
  ) {}

  async add(id: string) {
    this.deliveries.push({ id, attempts: 0, dueAt: await this.now(), at: [] });
  }

  activities(): WebhookActivities {
    return {
      sendDueDeliveries: async ({ retryScheduleMs }) => {
        const now = await this.now();
        const pending = () => this.deliveries.filter((d) => d.dueAt !== null);
        if (!this.enabled) for (const d of pending()) d.dueAt = null;
        const due = pending().filter((d) => d.dueAt! <= now);
        let gone = false;
        for (const d of due) {
          d.attempts += 1;
          d.at.push(now);
          const answer = this.answer(d.id, d.attempts);
          gone ||= answer.status === 'gone';
          const wait = answer.status === 'retry' ? waitAfterAttempt(d.attempts, retryScheduleMs) : null;
          d.dueAt = wait === null ? null : now + Math.max(wait, answer.retryAfterMs ?? 0);
          this.failingSince = answer.status === 'delivered' ? null : (this.failingSince ?? now);
        }
        const left = pending();
        const nextDue = left.length ? Math.min(...left.map((d) => d.dueAt!)) : null;
        return {
          health: !this.enabled ? 'disabled' : this.failingSince !== null ? 'failing' : 'healthy',
          attempted: due.length,
          gone,
          failingForMs: this.failingSince === null ? null : now - this.failingSince,
          lastError: this.failingSince === null ? null : 'HTTP 500',
          backlog: left.length,
          oldestPendingAt: null,
          nextDueInMs: nextDue === null ? null : Math.max(0, nextDue - now),
        } satisfies BatchResult;
      },
      disableWebhook: async ({ reason }) => {
        this.disabled.push(reason);
        this.enabled = false;
      },
    };
  }
}

// The delivery schedule at its real length (about 76 hours), on Temporal's time-skipping test server.
describe('webhookWorkflow: one endpoint’s queue, with time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;

  before(async function () {
    env = await startTimeSkippingServer(this);
    bundle = await bundleWorkflows();
  });

  after(() => env?.teardown());

  async function run(queue: FakeQueue, during?: (handle: Awaited<ReturnType<TestWorkflowEnvironment['client']['workflow']['start']>>) => Promise<void>) {
    const taskQueue = `webhook-test-${Math.random().toString(36).slice(2)}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities: queue.activities() });
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(webhookWorkflow, {
        taskQueue,
        workflowId: `webhook-${taskQueue}`,
        args: [{ webhookId: 'wh_test', retryScale: 1 }],
      });
      await during?.(handle);
      await handle.result();
    });
  }

  const fakeQueue = (answer: (id: string, attempt: number) => Answer) => new FakeQueue(() => env.currentTimeMs(), answer);

  it('attempts immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h with jitter, gives up, and ends when idle', async () => {
    const queue = fakeQueue(() => ({ status: 'retry' }));
    await queue.add('a');
    await queue.add('b');
    await run(queue); // returns: the workflow ended once its queue stayed empty
    for (const delivery of queue.deliveries) {
      expect(delivery.at).to.have.length(RETRY_SCHEDULE_MS.length);
      delivery.at
        .slice(1)
        .forEach((at, i) =>
          expect(at - delivery.at[i], `wait before attempt ${i + 2}`).to.be.within(RETRY_SCHEDULE_MS[i + 1] * 0.9, RETRY_SCHEDULE_MS[i + 1] * 1.1 + 1000),
        );
    }
    const total = RETRY_SCHEDULE_MS.reduce((sum, delay) => sum + delay, 0);
    for (const delivery of queue.deliveries) expect(delivery.at.at(-1)! - delivery.at[0]).to.be.within(total * 0.9, total * 1.1);
    expect(queue.disabled).to.deep.equal([]);
  });

  it('stops at the first success, and waits as long as Retry-After asks', async () => {
    const queue = fakeQueue((_id, attempt) => (attempt === 1 ? { status: 'retry', retryAfterMs: 6 * HOUR } : { status: 'delivered' }));
    await queue.add('a');
    await run(queue);
    const [delivery] = queue.deliveries;
    expect(delivery.at).to.have.length(2);
    expect(delivery.at[1] - delivery.at[0]).to.be.at.least(6 * HOUR);
  });

  it('disables the webhook on 410, once, and cancels what is left', async () => {
    const queue = fakeQueue((id) => (id === 'a' ? { status: 'gone' } : { status: 'retry' }));
    await queue.add('a');
    await queue.add('b');
    await run(queue);
    expect(queue.disabled).to.deep.equal(['gone']);
    expect(queue.deliveries.map((d) => d.dueAt)).to.deep.equal([null, null]);
  });

  it('disables a webhook that has failed for 5 days', async () => {
    const queue = fakeQueue(() => ({ status: 'retry' }));
    queue.failingSince = (await env.currentTimeMs()) - DISABLE_FAILING_AFTER_MS;
    await queue.add('a');
    await run(queue);
    expect(queue.disabled).to.deep.equal(['failing']);
    expect(queue.deliveries[0].at).to.have.length(1);
  });

  it('a wake sends a new delivery at once, while an older one waits hours for its retry; the status query tells the backlog', async () => {
    const queue = fakeQueue((id, attempt) => (id === 'slow' && attempt === 1 ? { status: 'retry', retryAfterMs: 10 * HOUR } : { status: 'delivered' }));
    await queue.add('slow');
    await run(queue, async (handle) => {
      // Let the first batch run and the workflow go to sleep for 10 hours, without skipping time.
      await env.client.workflow.getHandle(handle.workflowId).query(webhookStatusQuery);
      await eventually(async () => expect(queue.deliveries[0].at).to.have.length(1));
      expect(await handle.query(webhookStatusQuery)).to.include({ backlog: 1, health: 'failing' });
      const before = await env.currentTimeMs();
      await queue.add('new');
      await handle.signal(wakeSignal);
      await eventually(async () => expect(queue.deliveries[1].at).to.have.length(1));
      expect(queue.deliveries[1].at[0] - before).to.be.below(HOUR);
    });
    expect(queue.deliveries[0].at[1] - queue.deliveries[0].at[0]).to.be.at.least(10 * HOUR);
  });
});
