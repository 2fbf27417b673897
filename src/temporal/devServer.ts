import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { Connection } from '@temporalio/client';
import type { Logger } from '../logger';

const repoRoot = path.resolve(__dirname, '../..');
const cachedCli = path.join(repoRoot, '.cache/bin/temporal');
const provisionTemporal = ['bash', path.join(repoRoot, 'scripts/provision.sh'), 'temporal'];

/** The Temporal CLI already on this machine: TEMPORAL_CLI_PATH, `temporal` on PATH, or the cached build. */
export function locateTemporalCli(configured: string | undefined): string | undefined {
  if (configured) return configured;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'temporal');
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return fs.existsSync(cachedCli) ? cachedCli : undefined;
}

/** The Temporal CLI: the one on this machine, else built now (buildTemporalCli). */
export const findTemporalCli = async (configured: string | undefined, logger: Logger): Promise<string> =>
  locateTemporalCli(configured) ?? buildTemporalCli(logger);

function elapsed(ms: number) {
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * Builds the Temporal CLI with Go, from the Go module proxy, into .cache/bin (scripts/provision.sh
 * temporal): minutes on a cold Go cache, once. Go is silent while it compiles, so the modules it
 * downloads and the packages it compiles (`go install -v`) are counted and logged every `progressEveryMs`.
 */
export function buildTemporalCli(logger: Logger, { command = provisionTemporal, progressEveryMs = 10_000 } = {}): Promise<string> {
  logger.info(
    `No Temporal CLI (TEMPORAL_CLI_PATH, temporal on PATH, ${cachedCli}): building it with Go from the Go module proxy, ` +
      'once; it takes a few minutes. Set TEMPORAL_CLI_PATH to a temporal binary to skip this.',
  );
  const started = Date.now();
  const built = { modules: 0, packages: 0 };
  let stderrTail = '';
  let stdout = '';
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  readline.createInterface({ input: child.stderr! }).on('line', (line) => {
    stderrTail = `${stderrTail}${line}\n`.slice(-4000);
    if (line.startsWith('go: downloading ')) built.modules++;
    else if (line.startsWith('[provision]')) logger.info(line);
    else if (/^[\w.-]+(\/[\w.@~+-]+)*$/.test(line)) built.packages++;
  });
  const progress = setInterval(
    () =>
      logger.info(
        { ...built, elapsedSeconds: Math.round((Date.now() - started) / 1000) },
        `Building the Temporal CLI: ${elapsed(Date.now() - started)}, ${built.modules} modules downloaded, ${built.packages} packages compiled`,
      ),
    progressEveryMs,
  );
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearInterval(progress);
      reject(error);
    });
    child.once('close', (code) => {
      clearInterval(progress);
      const binary = stdout.trim().split('\n').pop();
      if (code === 0 && binary) {
        logger.info(`Built the Temporal CLI in ${elapsed(Date.now() - started)}: ${binary}`);
        resolve(binary);
      } else {
        reject(
          new Error(
            `building the Temporal CLI failed (exit ${code}); set TEMPORAL_CLI_PATH to a temporal binary, or TEMPORAL_ADDRESS to a running Temporal:\n${stderrTail}`,
          ),
        );
      }
    });
  });
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
  const binary = await findTemporalCli(options.cliPath, options.logger);
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
