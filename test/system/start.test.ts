import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { client } from '../support/http';
import { startOnFreePorts } from '../support/ports';

const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);

function embeddedEnv(dataDir: string, ports?: { api: number; temporal: number; ui: number }) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', METRICS_PORT: '0' };
  if (ports) Object.assign(env, { PORT: String(ports.api), TEMPORAL_PORT: String(ports.temporal), TEMPORAL_UI_PORT: String(ports.ui) });
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'ELASTICSEARCH_URL', 'PUBLIC_URL']) delete env[name];
  return env;
}

function waitForOutput(child: ChildProcess, text: string, ms: number) {
  return new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no "${text}" within ${ms} ms:\n${output}`)), ms);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes(text)) {
        clearTimeout(timer);
        resolve(output);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`exited with ${code} before "${text}":\n${output}`)));
  });
}

const temporalChildren = (dataDir: string) => {
  try {
    return execFileSync('pgrep', ['-f', '--', `--db-filename ${path.join(dataDir, 'temporal.db')}`])
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
};

async function signet(dataDir: string, args: string[]) {
  const { stdout } = await run('npx', ['signet', ...args], { cwd: root, env: embeddedEnv(dataDir), timeout: 60_000 });
  return stdout;
}

describe('npm start on the embedded defaults (PGlite, Temporal dev server child, outbox)', function () {
  this.timeout(180_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-start-'));
  let child: ChildProcess;
  let ports: { api: number; temporal: number; ui: number };
  let banner: string;

  before(async () => {
    ({ ports, child, banner } = await startOnFreePorts(3, async ([api, temporal, ui]) => {
      const ports = { api, temporal, ui };
      // Its own process group, so the test can press Ctrl-C the way a terminal does: SIGINT to the group.
      const child = spawn('npm', ['start'], { cwd: root, env: embeddedEnv(dataDir, ports), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        return { ports, child, banner: await waitForOutput(child, 'Create an account', 150_000) };
      } catch (error) {
        if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
        throw error;
      }
    }));
  });

  after(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the API, docs and Temporal UI URLs and the account command', () => {
    expect(banner).to.contain(`http://localhost:${ports.api}/api/v1`);
    expect(banner).to.contain(`http://localhost:${ports.api}/docs`);
    expect(banner).to.contain(`http://127.0.0.1:${ports.ui}`);
    expect(banner).to.contain('npx signet account create --email');
  });

  it('is ready: database and Temporal answer; the Temporal UI is served', async () => {
    const request = client(`http://127.0.0.1:${ports.api}`);
    const ready = await request('GET', '/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body.checks).to.deep.equal({ database: 'ok', temporal: 'ok' });
    const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
    expect(ui.status).to.equal(200);
  });

  it('the CLI works against the running server: accounts, keys, plans', async () => {
    const created = await signet(dataDir, ['account', 'create', '--email', 'owner@example.com', '--plan', 'business']);
    expect(created.trim().split('\n')).to.have.length(1);
    const { accountId, apiKey } = JSON.parse(created);
    expect(accountId).to.match(/^acct_/);
    expect(apiKey).to.match(/^sk_live_[0-9A-Za-z]{43}$/);

    const request = client(`http://127.0.0.1:${ports.api}`, apiKey);
    const document = await request('POST', '/api/v1/documents', { json: { fileName: 'smoke.pdf', fileSize: 100 } });
    expect(document.status).to.equal(201);

    const second = JSON.parse(await signet(dataDir, ['key', 'create', '--account', accountId, '--name', 'ci']));
    expect(second).to.include({ name: 'ci' });
    const keys = JSON.parse(await signet(dataDir, ['key', 'list', '--account', accountId]));
    expect(keys.map((key: { name: string }) => key.name)).to.deep.equal(['default', 'ci']);
    expect(JSON.stringify(keys)).not.to.contain(apiKey);

    await signet(dataDir, ['key', 'revoke', second.keyId]);
    expect((await client(`http://127.0.0.1:${ports.api}`, second.apiKey)('GET', '/api/v1/documents')).status).to.equal(401);

    expect(JSON.parse(await signet(dataDir, ['account', 'plan', accountId, 'free']))).to.deep.equal({ accountId, plan: 'free' });
    expect((await request('GET', '/api/v1/account')).body.plan).to.equal('free');
  });

  it('the CLI refuses a bad plan with a message on stderr and a non-zero exit', async () => {
    const failure = await signet(dataDir, ['account', 'create', '--email', 'x@example.com', '--plan', 'platinum']).catch((error) => error);
    expect(failure.code).to.not.equal(0);
    expect(failure.stderr).to.contain('plan must be one of: free, pro, business');
    expect(failure.stdout).to.equal('');
  });

  it('Ctrl-C stops everything, the Temporal dev server child included', async () => {
    expect(temporalChildren(dataDir)).to.have.length(1);
    const exited = new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
    process.kill(-child.pid!, 'SIGINT');
    const [code, signal] = await exited;
    // npm itself may end by the signal; what matters is that nothing of ours is left running.
    expect(code === 0 || signal === 'SIGINT', `exit ${code} ${signal}`).to.equal(true);
    for (let i = 0; i < 50 && temporalChildren(dataDir).length; i++) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(temporalChildren(dataDir)).to.deep.equal([]);
    const refused = await fetch(`http://127.0.0.1:${ports.api}/healthz`).then(
      () => false,
      () => true,
    );
    expect(refused, 'the api port still answers').to.equal(true);
    expect(fs.existsSync(path.join(dataDir, '.s.PGSQL.5432'))).to.equal(false);
  });

  it('the CLI opens the embedded database itself when no server runs', async () => {
    const { accountId } = JSON.parse(await signet(dataDir, ['account', 'create', '--email', 'later@example.com']));
    const keys = JSON.parse(await signet(dataDir, ['key', 'list', '--account', accountId]));
    expect(keys).to.have.length(1);
  });
});

describe('SIGTERM on the server process', function () {
  this.timeout(180_000);

  it('stops the api, the worker and the Temporal child, and exits 0', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-term-'));
    const child = await startOnFreePorts(3, async ([api, temporal, ui]) => {
      const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/main.ts'], {
        cwd: root,
        env: embeddedEnv(dataDir, { api, temporal, ui }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        await waitForOutput(child, 'Signet is running', 150_000);
        return child;
      } catch (error) {
        if (child.exitCode === null) child.kill('SIGKILL');
        throw error;
      }
    });
    try {
      expect(temporalChildren(dataDir)).to.have.length(1);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      expect(temporalChildren(dataDir)).to.deep.equal([]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
