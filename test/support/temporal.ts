import fs from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';

export const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** The workflows/ bundle, built once per test file. */
export const bundleWorkflows = () => bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: quietLogger });

/**
 * Temporal's time-skipping test server (from Maven Central, provisioned by scripts/provision.sh): it
 * jumps over every timer a workflow waits on, so days of schedule run in seconds.
 */
export function startTimeSkippingServer() {
  const launcher = path.resolve(__dirname, '../../.cache/temporal-test-server/temporal-test-server');
  if (!fs.existsSync(launcher)) throw new Error(`no ${launcher}: run bash scripts/provision.sh test-server (npm test does)`);
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: launcher } } });
}
