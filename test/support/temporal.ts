import fs from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { searchAttributes } from '../../workflows/definitions';

export const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** The workflows/ bundle, built once per test file. */
export const bundleWorkflows = () => bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quietLogger });

/** In a `before` hook: skip its tests where a server binary is not provisioned, saying why (a failure under CI). */
function skipWithout(hook: Mocha.Context, executable: string, provision: string) {
  if (fs.existsSync(executable)) return;
  const reason = `no ${executable}: run bash scripts/provision.sh ${provision} (npm test does)`;
  if (process.env.CI) throw new Error(reason);
  console.warn(`skipped: ${reason}`);
  hook.skip();
}

/**
 * A Temporal dev server of the test's own (the provisioned `temporal` CLI, in memory, on a free port), for
 * workflows driven by updates and queries, which the time-skipping server does not fully support.
 */
export async function startDevServer(hook: Mocha.Context) {
  const executable = path.resolve(__dirname, '../../.cache/bin/temporal');
  skipWithout(hook, executable, 'temporal');
  const env = await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: executable } } });
  await addSignetSearchAttributes(env);
  return env;
}

async function addSignetSearchAttributes(env: TestWorkflowEnvironment) {
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(
      Object.values(searchAttributes).map(({ name }) => [name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
}

/**
 * Temporal's time-skipping test server (from Maven Central, provisioned by scripts/provision.sh): it
 * jumps over every timer a workflow waits on, so days of schedule run in seconds.
 */
export async function startTimeSkippingServer(hook: Mocha.Context) {
  const launcher = path.resolve(__dirname, '../../.cache/temporal-test-server/temporal-test-server');
  skipWithout(hook, launcher, 'test-server');
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: launcher } } });
  await addSignetSearchAttributes(env);
  return env;
}
