import fs from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { searchAttributes } from '../../workflows/definitions';

export const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** The workflows/ bundle, built once per test file. */
export const bundleWorkflows = () => bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quietLogger });

/**
 * Temporal's time-skipping test server (from Maven Central, provisioned by scripts/provision.sh): it
 * jumps over every timer a workflow waits on, so days of schedule run in seconds.
 */
export async function startTimeSkippingServer() {
  const launcher = path.resolve(__dirname, '../../.cache/temporal-test-server/temporal-test-server');
  if (!fs.existsSync(launcher)) throw new Error(`no ${launcher}: run bash scripts/provision.sh test-server (npm test does)`);
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: launcher } } });
  // Signet's search attributes, which the workflows set.
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(Object.values(searchAttributes).map(({ name }) => [name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
  });
  return env;
}
