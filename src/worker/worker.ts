import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsPromises from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';

const root = path.resolve(__dirname, '../..');
const BUNDLE_TIMEOUT_MS = 180_000;
/** Written by `npm run build` (scripts/build.ts) beside the compiled worker; absent beside the sources. */
const prebuiltBundle = path.join(__dirname, 'workflow-bundle.js');

/**
 * Bundles workflows/ in a child process (webpack needs a few hundred MB that the server would otherwise keep)
 * and returns the bundle's code path. Fails with the child's output when it fails or takes too long.
 */
export async function bundleWorkflowsInChild(outFile: string, timeoutMs = BUNDLE_TIMEOUT_MS): Promise<void> {
  const script = path.join(__dirname, 'bundleWorkflows.ts');
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--require', 'tsx/cjs', script, outFile],
      { cwd: root, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve();
        const why = error.killed ? `did not finish within ${timeoutMs / 1000} s` : `exited with ${error.code ?? error.signal}`;
        const output = `${stdout}${stderr}`.trim().slice(-4000);
        reject(new Error(`Bundling the workflows (${process.execPath} --require tsx/cjs ${script}) ${why}${output ? `:\n${output}` : ''}`));
      },
    );
  });
}

interface WorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
}

export async function createWorker(options: WorkerOptions) {
  if (fs.existsSync(prebuiltBundle)) return connectWorker(options, prebuiltBundle);
  // From the sources (npm start, the tests): bundle now, into a file that is not needed once the worker has read it.
  const dir = await fsPromises.mkdtemp(path.join(os.tmpdir(), 'signet-workflows-'));
  try {
    const codePath = path.join(dir, 'workflow-bundle.js');
    await bundleWorkflowsInChild(codePath);
    return await connectWorker(options, codePath);
  } finally {
    await fsPromises.rm(dir, { recursive: true, force: true });
  }
}

async function connectWorker(options: WorkerOptions, codePath: string) {
  const connection = await NativeConnection.connect({ address: options.address });
  try {
    const worker = await Worker.create({
      connection,
      namespace: options.namespace,
      taskQueue: options.taskQueue,
      workflowBundle: { codePath }, // read once here
      activities: createActivities(options.deps),
    });
    return { worker, connection };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
