import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Logger } from '../logger';

const repoRoot = path.resolve(__dirname, '../..');

/** The Temporal CLI: TEMPORAL_CLI_PATH, `temporal` on PATH, the cached build, or provision it now. */
export function findTemporalCli(configured: string | undefined, logger: Logger): string {
  if (configured) return configured;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'temporal');
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  const cached = path.join(repoRoot, '.cache/bin/temporal');
  if (fs.existsSync(cached)) return cached;
  logger.info('Temporal CLI not found: provisioning it (a first build with Go takes a few minutes)');
  const output = execFileSync('bash', [path.join(repoRoot, 'scripts/provision.sh'), 'temporal'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return output.toString().trim().split('\n').pop()!;
}

export interface TemporalDevServer {
  address: string;
  uiUrl: string;
  stop(): Promise<void>;
}

/** The embedded default: `temporal server start-dev` as a child process, its state in DATA_DIR, stopped with us. */
export async function startTemporalDevServer(options: {
  cliPath?: string;
  dataDir: string;
  port: number;
  uiPort: number;
  logger: Logger;
}): Promise<TemporalDevServer> {
  const binary = findTemporalCli(options.cliPath, options.logger);
  const address = `127.0.0.1:${options.port}`;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--ui-port', String(options.uiPort)];
  args.push('--db-filename', path.join(options.dataDir, 'temporal.db'), '--log-level', 'warn');
  // As temporal-dynamicconfig.yaml sets it for the deployed server: activity tasks handed straight back to the worker.
  args.push('--dynamic-config-value', 'system.enableActivityEagerExecution=true');
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitUntilReachable(address, child, exited, () => stderr);
  return {
    address,
    uiUrl: `http://127.0.0.1:${options.uiPort}`,
    stop: () => stopChild(child, exited),
  };
}

async function waitUntilReachable(address: string, child: ChildProcess, exited: Promise<number | null>, stderr: () => string) {
  const deadline = Date.now() + 60_000;
  let done = false;
  exited.then(() => (done = true));
  while (Date.now() < deadline) {
    if (done) throw new Error(`temporal server start-dev exited (code ${child.exitCode}):\n${stderr()}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`temporal server start-dev did not answer on ${address} within 60 s:\n${stderr()}`);
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>) {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
