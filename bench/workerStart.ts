import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { generateSelfSignedP12 } from '../src/pdf/sealCertificate';
import { NODE_FLAGS, START_ENV } from './startCommand';
import { median } from './stats';

// A worker's start, from process start to its /readyz answering 200 (connected, workflows loaded, polling):
// from the sources as `npm start` runs them (tsx; webpack bundles the workflows in a child) against the
// build as the image runs it (scripts/start-production.sh; the bundle made by `npm run build`).
// `npm run build`, then `tsx bench/workerStart.ts [rounds]` with DATABASE_URL and TEMPORAL_ADDRESS set.

const root = path.resolve(__dirname, '..');
const rounds = Number(process.argv[2] ?? 5);
const commands = {
  source: [process.execPath, ...NODE_FLAGS, 'src/main.ts'],
  build: [path.join(root, 'scripts/start-production.sh')],
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Milliseconds from spawn to /readyz 200; then the process is stopped with SIGTERM and awaited. */
async function timeStart([command, ...args]: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, { cwd: root, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (performance.now() - started > 300_000) throw new Error(`${command}: not ready within 300 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function main() {
  const { DATABASE_URL, TEMPORAL_ADDRESS } = process.env;
  if (!DATABASE_URL || !TEMPORAL_ADDRESS) throw new Error('needs DATABASE_URL and TEMPORAL_ADDRESS');
  if (!fs.existsSync(path.join(root, 'dist/src/worker/workflow-bundle.js'))) throw new Error('no build: run npm run build first');
  const name = `signet_worker_start_${process.pid}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-worker-start-'));
  const admin = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  try {
    const databaseUrl = new URL(DATABASE_URL);
    databaseUrl.pathname = `/${name}`;
    fs.writeFileSync(path.join(dir, 'seal.p12'), await generateSelfSignedP12(), { mode: 0o600 });
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...START_ENV,
      NODE_ENV: 'production',
      SIGNET_PROCESSES: 'worker',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl.toString(),
      TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: `signet-worker-start-${process.pid}`,
      PUBLIC_URL: 'http://localhost:3000',
      WEBHOOK_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      SIGNING_TOKEN_SECRET: crypto.randomBytes(32).toString('hex'),
      SEAL_P12_PATH: path.join(dir, 'seal.p12'),
      METRICS_PORT: 'off',
      DATA_DIR: dir,
      LOG_LEVEL: 'warn',
    };
    // One start of each first, not counted: the migrations run, the file cache is warm for both.
    for (const command of Object.values(commands)) await timeStart(command, env);
    const times: Record<keyof typeof commands, number[]> = { source: [], build: [] };
    for (let round = 0; round < rounds; round++) {
      for (const [kind, command] of Object.entries(commands) as [keyof typeof commands, string[]][]) times[kind].push(await timeStart(command, env));
    }
    for (const [kind, values] of Object.entries(times)) {
      const seconds = values.map((ms) => (ms / 1000).toFixed(2));
      process.stdout.write(`${kind.padEnd(6)} median ${(median(values) / 1000).toFixed(2)} s  (${seconds.join(', ')})\n`);
    }
  } finally {
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
