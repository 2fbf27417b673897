import { spawn, type ChildProcess } from 'node:child_process';
import { archiveRenewalScheduleId, sweeperWorkflowId } from '../../src/temporal/client';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startSystem, type RunningSystem } from '../../src/system';
import { startOnFreePorts } from './ports';
import { waitUntilReady } from './ready';

const root = path.resolve(__dirname, '../..');

/** SIGKILL, and resolves once the process has exited. */
async function killed(child: ChildProcess | undefined) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/**
 * The api in this process and the worker as a child process of its own, so a test can kill the worker
 * mid-flight (SIGKILL) and start it again. Needs the services of `npm test`.
 */
export async function startSplitSystem(name: string, extraEnv: Record<string, string> = {}) {
  if (!process.env.DATABASE_URL || !process.env.TEMPORAL_ADDRESS) throw new Error('needs DATABASE_URL and TEMPORAL_ADDRESS: run with npm test');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `signet-${name}-`));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'error',
    TEMPORAL_TASK_QUEUE: `signet-${name}-${process.pid}`,
    PORT: '0',
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    ...extraEnv,
  };
  const api: RunningSystem = await startSystem(loadConfig({ ...env, SIGNET_PROCESSES: 'api' }), createLogger('error'));
  let worker: ChildProcess | undefined;
  const startWorker = () => {
    worker = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/main.ts'], { cwd: root, env: { ...env, SIGNET_PROCESSES: 'worker' }, stdio: 'ignore' });
  };
  startWorker();
  const apis = new Set<ChildProcess>();
  return {
    api,
    startWorker,
    /** Another api, as a process of its own that a test can kill mid-request; resolves once it is ready. */
    async startApiProcess() {
      return startOnFreePorts(1, async ([port]) => {
        const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/main.ts'], {
          cwd: root,
          env: { ...env, SIGNET_PROCESSES: 'api', PORT: String(port) },
          stdio: 'ignore',
        });
        apis.add(child);
        await waitUntilReady(child, port, { ms: 60_000, name: 'the api' });
        return { url: `http://127.0.0.1:${port}`, kill: () => killed(child) };
      });
    },
    /** SIGKILL, and resolves once the worker has exited. */
    killWorker: () => killed(worker),
    async stop() {
      worker?.kill('SIGKILL');
      for (const child of apis) child.kill('SIGKILL');
      await api.client.workflow
        .getHandle(sweeperWorkflowId(env.TEMPORAL_TASK_QUEUE))
        .terminate('test over')
        .catch(() => undefined);
      await api.client.schedule
        .getHandle(archiveRenewalScheduleId(env.TEMPORAL_TASK_QUEUE))
        .delete()
        .catch(() => undefined);
      await api.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
