import { expect } from 'chai';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { AttemptResult } from '../../src/webhooks/delivery';
import type { WebhookActivities } from '../../activities/webhooks';
import { DISABLE_FAILING_AFTER_MS, RETRY_SCHEDULE_MS, deliverEventWorkflow } from '../../workflows/deliverEvent';
import { bundleWorkflows, startTimeSkippingServer } from '../support/temporal';

const HOUR = 3600e3;

// The delivery schedule at its real length (about 76 hours), on Temporal's time-skipping test server.
describe('deliverEventWorkflow schedule, with time skipping', function () {
  this.timeout(120_000);
  let env: TestWorkflowEnvironment;
  let bundle: WorkflowBundleWithSourceMap;

  before(async () => {
    env = await startTimeSkippingServer();
    bundle = await bundleWorkflows();
  });

  after(() => env?.teardown());

  /** Runs the workflow for one event with two webhooks; `answer` plays the receiver for each attempt. */
  async function run(answer: (attempt: number, nextDelayMs: number | null, now: number) => AttemptResult) {
    const attempts = new Map<string, { at: number; nextDelayMs: number | null }[]>();
    const disabled: [string, string][] = [];
    const activities: Partial<WebhookActivities> = {
      prepareDeliveries: async () => [
        { deliveryId: 'whd_a', webhookId: 'wh_a' },
        { deliveryId: 'whd_b', webhookId: 'wh_b' },
      ],
      attemptDelivery: async ({ deliveryId, nextDelayMs }) => {
        const log = attempts.get(deliveryId) ?? [];
        attempts.set(deliveryId, log);
        const now = await env.currentTimeMs();
        log.push({ at: now, nextDelayMs });
        return answer(log.length, nextDelayMs, now);
      },
      disableWebhook: async ({ webhookId, reason }) => {
        disabled.push([webhookId, reason]);
      },
    };
    const taskQueue = `deliver-test-${Math.random().toString(36).slice(2)}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
    const started = await env.currentTimeMs();
    await worker.runUntil(
      env.client.workflow.execute(deliverEventWorkflow, { taskQueue, workflowId: `deliver-evt_${taskQueue}`, args: [{ eventId: 'evt_test', retryScale: 1 }] }),
    );
    return { attempts, disabled, elapsed: (await env.currentTimeMs()) - started };
  }

  it('attempts immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h with jitter, then gives up', async () => {
    const { attempts, disabled, elapsed } = await run((_attempt, nextDelayMs) =>
      nextDelayMs === null ? { outcome: 'failed', retryInMs: null, failingForMs: HOUR } : { outcome: 'retry', retryInMs: nextDelayMs, failingForMs: HOUR },
    );
    for (const log of attempts.values()) {
      expect(log).to.have.length(RETRY_SCHEDULE_MS.length);
      log.slice(0, -1).forEach((attempt, i) => expect(attempt.nextDelayMs!, `delay after attempt ${i + 1}`).to.be.within(RETRY_SCHEDULE_MS[i + 1] * 0.9, RETRY_SCHEDULE_MS[i + 1] * 1.1));
      expect(log.at(-1)!.nextDelayMs).to.equal(null);
      log.slice(1).forEach((attempt, i) => expect(attempt.at - log[i].at, `wait before attempt ${i + 2}`).to.be.at.least(log[i].nextDelayMs!));
    }
    const total = RETRY_SCHEDULE_MS.reduce((sum, delay) => sum + delay, 0);
    expect(elapsed).to.be.at.least(total * 0.9);
    expect(disabled).to.deep.equal([]);
  });

  it('stops at the first success, and waits as long as Retry-After asks', async () => {
    const { attempts } = await run((attempt) =>
      attempt === 1 ? { outcome: 'retry', retryInMs: 6 * HOUR, failingForMs: 0 } : { outcome: 'delivered', retryInMs: null, failingForMs: null },
    );
    for (const log of attempts.values()) {
      expect(log).to.have.length(2);
      expect(log[1].at - log[0].at).to.be.at.least(6 * HOUR);
    }
  });

  it('disables a webhook on 410, and one that has failed for 5 days', async () => {
    const { attempts, disabled } = await run((attempt) =>
      attempt === 1
        ? { outcome: 'retry', retryInMs: 1000, failingForMs: DISABLE_FAILING_AFTER_MS + 1 }
        : { outcome: 'gone', retryInMs: null, failingForMs: DISABLE_FAILING_AFTER_MS + 2000 },
    );
    expect([...attempts.values()].map((log) => log.length)).to.deep.equal([2, 2]);
    expect(disabled.filter(([, reason]) => reason === 'failing').map(([id]) => id).sort()).to.deep.equal(['wh_a', 'wh_b']);
    expect(disabled.filter(([, reason]) => reason === 'gone').map(([id]) => id).sort()).to.deep.equal(['wh_a', 'wh_b']);
  });
});
