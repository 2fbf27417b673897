import type { Client } from '@temporalio/client';
import { expect } from 'chai';
import type { Db } from '../../src/db';
import { createWebhookDispatcher } from '../../src/webhooks/dispatcher';
import { webhookWorkflowId } from '../../workflows/definitions';

// The batching window, on a client that only records its signals (the database is not touched by wakes).
function dispatcherOnFakeClient(failFor: string[] = []) {
  const signalled: string[] = [];
  const signalWithStart = async (_type: string, options: { args: [{ webhookId: string }] }) => {
    const { webhookId } = options.args[0];
    if (failFor.includes(webhookId)) throw new Error(`${webhookId} unreachable`);
    signalled.push(webhookWorkflowId(webhookId));
  };
  const client = { workflow: { signalWithStart } } as unknown as Client;
  return { signalled, dispatcher: createWebhookDispatcher({ client, taskQueue: 'signet-test', db: {} as Db, retryScale: 1 }) };
}

describe('the webhook dispatcher', () => {
  const webhook = (webhookId: string) => ({ webhookId, accountId: 'acc_test' });

  it('wakes a queue at once, and those asked for within its window together at its end', async () => {
    const { signalled, dispatcher } = dispatcherOnFakeClient();
    await dispatcher.wakeAll([webhook('wh_a')]);
    expect(signalled).to.deep.equal([webhookWorkflowId('wh_a')]);
    const within = [dispatcher.wakeAll([webhook('wh_a')]), dispatcher.wakeAll([webhook('wh_a')])];
    // Another webhook's queue has a window of its own.
    await dispatcher.wakeAll([webhook('wh_b')]);
    expect(signalled).to.deep.equal([webhookWorkflowId('wh_a'), webhookWorkflowId('wh_b')]);
    await Promise.all(within);
    expect(signalled).to.deep.equal([webhookWorkflowId('wh_a'), webhookWorkflowId('wh_b'), webhookWorkflowId('wh_a')]);
  });

  it('a wake that fails is told to each caller it covered', async () => {
    const { dispatcher } = dispatcherOnFakeClient(['wh_gone']);
    const failures = await Promise.all([dispatcher.wakeAll([webhook('wh_gone')]).catch(String), dispatcher.wakeAll([webhook('wh_gone')]).catch(String)]);
    expect(failures).to.deep.equal(['Error: wh_gone unreachable', 'Error: wh_gone unreachable']);
  });
});
