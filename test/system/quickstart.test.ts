import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

// The README's quickstart, run as a newcomer runs it: `npm start` on the embedded defaults in one
// terminal, the quickstart's shell blocks as written in another, in a folder of their own.
const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/** The `sh` code blocks of the README's "## Quickstart" section, in order. */
function quickstartScript(readme: string) {
  const section = readme.split(/^## /m).find((part) => part.startsWith('Quickstart'));
  if (!section) throw new Error('the README has no "## Quickstart" section');
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
  if (blocks.length === 0) throw new Error('the quickstart has no sh code block');
  return blocks.join('\n');
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

function waitForOutput(child: ChildProcess, text: string, ms: number) {
  return new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no "${text}" within ${ms} ms:\n${output}`)), ms);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`exited with ${code} before "${text}":\n${output}`)));
  });
}

describe('the README quickstart', function () {
  this.timeout(240_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-quickstart-data-'));
  // The newcomer's folder: the checkout as npm ci leaves it, without the files the quickstart writes.
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-quickstart-'));
  let child: ChildProcess;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    for (const name of ['package.json', 'node_modules', 'src', 'tsconfig.json']) fs.symlinkSync(path.join(root, name), path.join(workDir, name));
    const ports = { api: await freePort(), temporal: await freePort(), ui: await freePort() };
    env = {
      ...process.env,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      PORT: String(ports.api),
      TEMPORAL_PORT: String(ports.temporal),
      TEMPORAL_UI_PORT: String(ports.ui),
    };
    for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'ELASTICSEARCH_URL', 'PUBLIC_URL', 'SMTP_URL', 'SENDGRID_API_KEY']) delete env[name];
    child = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    await waitForOutput(child, 'Signet is running', 150_000);
    env.SIGNET_URL = `http://localhost:${ports.api}`;
  });

  after(() => {
    if (child && child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('uploads a PDF, sends it, signs through the outbox link and downloads a sealed PDF that verifies', async () => {
    const script = quickstartScript(fs.readFileSync(path.join(root, 'README.md'), 'utf8'));
    await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: workDir, env, timeout: 120_000 });

    const sealed = path.join(workDir, 'signed.pdf');
    expect(fs.readFileSync(sealed).subarray(0, 5).toString()).to.equal('%PDF-');
    const signatures = execFileSync('pdfsig', [sealed]).toString();
    expect(signatures).to.contain('Signature #1');
    expect(signatures).to.contain('Total document signed');
    expect(signatures).to.contain('Signature is Valid.');
    execFileSync('qpdf', ['--check', sealed]);
  });
});
