import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { NODE_FLAGS, START_ENV } from './startCommand';

// The processes and resources a benchmark starts: each undone in reverse order by cleanUp, on success,
// on error and on Ctrl-C alike (each benchmark's main installs the signal handlers).

const REPO = path.resolve(__dirname, '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const cleanups: (() => Promise<unknown> | unknown)[] = [];

export async function cleanUp(label: string) {
  for (const step of cleanups.splice(0).reverse()) {
    await Promise.resolve()
      .then(step)
      .catch((error) => console.error(`[${label}] cleanup step failed:`, error));
  }
}

/** A free port on 127.0.0.1 (the OS picks it; the child binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** SIGTERM, then SIGKILL if the process has not exited after 15 s (the worker drains on shutdown). */
export async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  if ((await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)])) === false) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Starts `node <NODE_FLAGS> <flags> <script>` (as `npm start` runs) with its output in a log file, and waits until `readyPath` answers 200. */
export async function startServer(options: {
  name: string;
  script: string;
  env: Record<string, string | undefined>;
  readyPath: string;
  logDir: string;
  flags?: string[];
}) {
  const { name, script, env, readyPath, logDir, flags = [] } = options;
  const port = await freePort();
  const logFile = path.join(logDir, `${name}.log`);
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...NODE_FLAGS, ...flags, script], {
    cwd: REPO,
    env: { ...START_ENV, ...env, PORT: String(port), METRICS_PORT: '0' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  cleanups.push(() => stopChild(child));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited during startup; its output:\n${fs.readFileSync(logFile, 'utf8').slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`${name} not ready after 90 s; its output is in ${logFile}`);
    const ok = await fetch(url + readyPath, { signal: AbortSignal.timeout(2000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return { url, pid: child.pid!, logFile };
    await sleep(250);
  }
}

/**
 * The services of `scripts/services.sh up`: DATABASE_URL, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and ELASTICSEARCH_URL from
 * the environment, else from .cache/run/services.env (`export NAME=value` lines, values bare or single-quoted).
 */
export function servicesEnv(): Record<string, string | undefined> {
  const env: Record<string, string> = {};
  const file = path.join(REPO, '.cache/run/services.env');
  if (fs.existsSync(file)) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      const match = /^export (\w+)=(.*)$/.exec(line.trim());
      if (match) env[match[1]] = match[2].startsWith("'") ? match[2].slice(1, -1).replaceAll("'\\''", "'") : match[2];
    }
  }
  const names = ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'ELASTICSEARCH_URL'];
  return Object.fromEntries(names.map((name) => [name, process.env[name] ?? env[name]]));
}
