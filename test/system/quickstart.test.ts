import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { allCodeBlocks, codeBlocksOf, isRun, quickstartBlock, scriptFileOf, where, type CodeBlock } from '../support/codeBlocks';
import { startOnFreePorts } from '../support/ports';

// The README and docs/ as a newcomer reads them: `npm start` on the embedded defaults in one terminal,
// and in another, in a folder of their own, the banner's own suggestion, the quickstart twice, then
// every other code block that runs (test/support/codeBlocks.ts), exactly as printed. Where a block
// waits for a signer, this test signs as one: every invitation that lands in the outbox gets signed.
const root = path.resolve(__dirname, '../..');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to its end, never throwing: its exit code, its output and how long it took. */
function runToEnd(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeout: number }) {
  const started = Date.now();
  return new Promise<Outcome>((resolve) => {
    execFile(command, args, { ...options, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - started }),
    );
  });
}

const shell = (code: string, cwd: string, env: NodeJS.ProcessEnv, timeout = 180_000) =>
  runToEnd('bash', ['-eo', 'pipefail', '-c', code], { cwd, env, timeout });

/** A code block run as its reader would: a shell block in bash, a TypeScript one saved as the file it names and run with tsx. */
async function runBlock(block: CodeBlock, cwd: string, env: NodeJS.ProcessEnv) {
  if (block.language === 'sh' || block.language === 'bash') return shell(block.code, cwd, env);
  const file = scriptFileOf(block)!;
  fs.writeFileSync(path.join(cwd, file), block.code);
  return runToEnd('npx', ['tsx', file], { cwd, env, timeout: 180_000 });
}

const report = (outcome: Outcome) => `exit ${outcome.code} after ${outcome.ms} ms\n--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}`;

function waitForOutput(child: ChildProcess, text: string, ms: number) {
  return new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no "${text}" within ${ms} ms:\n${output}`)), ms);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes(text)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`exited with ${code} before "${text}":\n${output}`)));
  });
}

/** Signs, as the person it was sent to, every invitation or reminder that lands in the outbox from now on. */
async function signEveryInvitation(baseUrl: string) {
  const mailIds = async () => new Set((await (await fetch(`${baseUrl}/dev/mail`)).text()).match(/\/dev\/mail\/\d+/g) ?? []);
  const seen = await mailIds();
  const signed: string[] = [];
  let stopped = false;
  const signNew = async () => {
    for (const id of await mailIds()) {
      if (seen.has(id)) continue;
      seen.add(id);
      const page = await (await fetch(`${baseUrl}${id}`)).text();
      if (!/Idempotency key: <code>(invitation|reminder):/.test(page)) continue;
      const link = /https?:\/\/[^\s"<&]+\/sign\/[A-Za-z0-9_-]+/.exec(page)?.[0];
      if (!link) continue;
      const answer = await fetch(`${link}/sign`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ consent: true, signature: { type: 'typed', value: 'Signed in the test' } }),
      });
      if (answer.ok) signed.push(id);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await signNew().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  })();
  return {
    signed,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

describe('the README and docs/, run as printed against npm start', function () {
  this.timeout(600_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-quickstart-data-'));
  // The newcomer's folder: the checkout as npm ci leaves it, without the files the quickstart writes.
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-quickstart-'));
  let child: ChildProcess;
  let env: NodeJS.ProcessEnv;
  let ports: { api: number; temporal: number; ui: number };
  let output: string;
  let baseUrl: string;
  /** The key the quickstart's last line prints, as its reader exports it. */
  let apiKey: string;

  before(async () => {
    for (const name of ['package.json', 'node_modules', 'src', 'sdk', 'tsconfig.json']) fs.symlinkSync(path.join(root, name), path.join(workDir, name));
    ({ ports, child, output } = await startOnFreePorts(3, async ([api, temporal, ui]) => {
      env = {
        ...process.env,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        METRICS_PORT: '0',
        PORT: String(api),
        TEMPORAL_PORT: String(temporal),
        TEMPORAL_UI_PORT: String(ui),
      };
      for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'ELASTICSEARCH_URL', 'PUBLIC_URL', 'SMTP_URL', 'SENDGRID_API_KEY', 'NODE_ENV']) delete env[name];
      const child = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        return { ports: { api, temporal, ui }, child, output: await waitForOutput(child, 'Create an account:', 150_000) };
      } catch (error) {
        if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
        throw error;
      }
    }));
    baseUrl = `http://localhost:${ports.api}`;
    env.SIGNET_URL = baseUrl;
  });

  after(() => {
    if (child && child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('prints the banner the README shows, with this machine’s addresses; / opens the console; the outbox and /verify answer', async () => {
    const banner = output.slice(output.indexOf('Signet is running.'), output.indexOf('\n', output.indexOf('Create an account:')));
    const metricsPort = /Metrics +http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(banner)![1];
    const asInReadme = banner
      .replaceAll(baseUrl, 'http://localhost:3000')
      .replaceAll(`http://127.0.0.1:${ports.ui}`, 'http://127.0.0.1:8233')
      .replaceAll(`http://127.0.0.1:${metricsPort}/metrics`, 'http://127.0.0.1:9464/metrics')
      .replaceAll(dataDir, '/path/to/data');
    const shown = codeBlocksOf('README.md').find((block) => block.language === 'text' && block.code.startsWith('Signet is running.'))!;
    expect(asInReadme).to.equal(shown.code.trim());

    const home = await fetch(`${baseUrl}/`, { redirect: 'manual' });
    expect(home.status).to.equal(302);
    expect(home.headers.get('location')).to.equal('/app');
    const landing = await fetch(`${baseUrl}/`);
    expect(new URL(landing.url).pathname).to.equal('/app/login');
    expect(landing.status).to.equal(200);
    expect((await fetch(`${baseUrl}/dev/mail`)).status).to.equal(200);
    expect((await fetch(`${baseUrl}/verify`)).status).to.equal(200);
  });

  describe('the quickstart', () => {
    it('runs the banner’s own suggestion, then the quickstart twice; each run seals a PDF that pdfsig finds valid, from the development seal', async () => {
      const suggestion = /Create an account: +(.*)/.exec(output)![1];
      const created = await shell(suggestion, workDir, env, 60_000);
      expect(created.code, report(created)).to.equal(0);
      expect(JSON.parse(created.stdout).accountId).to.match(/^acct_/);

      const accounts = new Set<string>();
      for (const run of [1, 2]) {
        fs.rmSync(path.join(workDir, 'signed.pdf'), { force: true });
        const outcome = await shell(quickstartBlock().code, workDir, env, 150_000);
        expect(outcome.code, `run ${run}: ${report(outcome)}`).to.equal(0);
        for (const step of [1, 2, 3, 4, 5, 6, 7]) expect(outcome.stdout, `run ${run}`).to.match(new RegExp(`^${step}\\. `, 'm'));
        expect(outcome.stdout).to.match(/^ {3}http:\/\/localhost:\d+\/sign\/\S+ \(open it in a browser/m);
        accounts.add(/^ {3}account (acct_\w+)$/m.exec(outcome.stdout)![1]);
        apiKey = /^export SIGNET_API_KEY=(sk_live_\w+)$/m.exec(outcome.stdout)![1];

        const sealed = path.join(workDir, 'signed.pdf');
        expect(fs.readFileSync(sealed).subarray(0, 5).toString()).to.equal('%PDF-');
        const signatures = await runToEnd('pdfsig', [sealed], { cwd: workDir, env, timeout: 30_000 });
        expect(signatures.stdout).to.contain('Total document signed');
        expect(signatures.stdout).to.contain('Signature Validation: Signature is Valid.');
        // What the README says of the development seal: no trust store knows its self-signed certificate.
        expect(signatures.stdout).to.contain('Certificate Validation: Certificate issuer is unknown.');
        expect((await runToEnd('qpdf', ['--check', sealed], { cwd: workDir, env, timeout: 30_000 })).code).to.equal(0);
      }
      expect(accounts.size, 'a new account each run').to.equal(2);
      expect((await fetch(`${baseUrl}/api/v1/account`, { headers: { Authorization: `Bearer ${apiKey}` } })).status).to.equal(200);
    });

    it('stops at the step that fails, with its error, at once', async () => {
      const unreachable = { ...env, SIGNET_URL: 'http://127.0.0.1:9' };
      const outcome = await shell(quickstartBlock().code, workDir, unreachable, 60_000);
      expect(outcome.code, report(outcome)).to.not.equal(0);
      expect(outcome.stdout.trim().split('\n').pop(), report(outcome)).to.equal('3. Uploading it');
      expect(outcome.stderr).to.contain('curl: (7)');
      expect(outcome.stderr).to.contain('expected id in: nothing');
      expect(outcome.stderr).to.contain('quickstart.sh stopped: the step above failed');
      expect(outcome.ms).to.be.lessThan(30_000);
    });
  });

  describe('a lost API key, replaced from the CLI', () => {
    const signet = (args: string) => shell(`npx signet ${args}`, workDir, env, 60_000);
    const json = (outcome: Outcome) => {
      expect(outcome.code, report(outcome)).to.equal(0);
      return JSON.parse(outcome.stdout);
    };

    it('account list and account show find the account by its e-mail; key create --email makes it a key that works', async () => {
      const listed = json(await signet('account list')) as { accountId: string; email: string; plan: string }[];
      const mine = listed.find((account) => account.email === 'you@example.com')!;
      expect(mine).to.include({ plan: 'business' });
      expect(mine.accountId).to.match(/^acct_/);

      const shown = json(await signet('account show you@example.com'));
      expect(shown).to.include({ accountId: mine.accountId, email: 'you@example.com', plan: 'business' });
      expect(shown.apiKeys.map((key: { name: string }) => key.name)).to.deep.equal(['default']);
      expect(JSON.stringify(shown), 'a key prefix, never a key').not.to.match(/sk_live_\w{43}/);
      expect(json(await signet(`account show ${mine.accountId}`)).email).to.equal('you@example.com');

      const made = json(await signet('key create --email you@example.com --name laptop'));
      expect(made).to.include({ accountId: mine.accountId, name: 'laptop' });
      const account = await fetch(`${baseUrl}/api/v1/account`, { headers: { Authorization: `Bearer ${made.apiKey}` } });
      expect(account.status).to.equal(200);
      expect(json(await signet('key list --email you@example.com')).map((key: { name: string }) => key.name)).to.include('laptop');
    });

    it('account create with a taken address names the account and the command that makes it a key; an unknown one is a clear error', async () => {
      const taken = await signet('account create --email you@example.com');
      expect(taken.code).to.equal(1);
      expect(taken.stderr).to.match(/The account acct_\w+ has the e-mail you@example.com already/);
      expect(taken.stderr).to.contain('npx signet key create --email you@example.com');
      const unknown = await signet('key create --email nobody@example.com');
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.contain('No account has the e-mail nobody@example.com');
    });
  });

  describe('the other code blocks', () => {
    it('run as printed, each twice (as a reader pastes it again), a signer signing what they wait for', async () => {
      expect(apiKey, 'the quickstart ran').to.be.a('string');
      const quickstart = quickstartBlock();
      const blocks = allCodeBlocks().filter((block) => isRun(block) && where(block) !== where(quickstart));
      const signer = await signEveryInvitation(baseUrl);
      try {
        for (const block of blocks) {
          for (const run of [1, 2]) {
            const outcome = await runBlock(block, workDir, { ...env, SIGNET_API_KEY: apiKey });
            expect(outcome.code, `${where(block)} (${block.section}), run ${run}: ${report(outcome)}`).to.equal(0);
          }
        }
      } finally {
        await signer.stop();
      }
      expect(signer.signed.length, 'invitations the blocks waited for').to.be.greaterThan(4);
      expect(fs.existsSync(path.join(workDir, 'contract-signed.pdf'))).to.equal(true);
      expect(fs.existsSync(path.join(workDir, 'nda-signed.pdf'))).to.equal(true);
    });
  });
});
