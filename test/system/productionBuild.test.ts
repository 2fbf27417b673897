import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { generateSelfSignedP12 } from '../../src/pdf/sealCertificate';
import { waitUntilReady } from '../support/ready';
import { client } from '../support/http';
import { startOnFreePorts } from '../support/ports';
import { createSigningRequest, eventually, signingLinkOf, tokenOf } from '../support/signing';

const root = path.resolve(__dirname, '../..');
const FORM_MARK = '// marked by the production build test';
const run = promisify(execFile);
// The image's CMD, read from the Dockerfile: the build is started here exactly as there (scripts/start-production.sh).
const [command, ...args] = JSON.parse(/^CMD (\[.*\])$/m.exec(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8'))![1]) as string[];

describe('the production build, started as the image starts it', function () {
  this.timeout(300_000);
  const name = `signet_production_build_${process.pid}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-production-build-'));
  let admin: Knex;
  let db: Knex;
  let child: ChildProcess;
  let output = '';
  let url: string;

  before(async () => {
    const { DATABASE_URL, TEMPORAL_ADDRESS } = process.env;
    if (!DATABASE_URL || !TEMPORAL_ADDRESS) throw new Error('needs DATABASE_URL and TEMPORAL_ADDRESS: run with npm test');
    await run('npm', ['run', 'build'], { cwd: root, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 }).catch((error) => {
      throw new Error(`npm run build failed:\n${error.stdout}${error.stderr}`.slice(-4000));
    });
    // Marked, so that the test can tell the built form module from one bundled on request.
    fs.appendFileSync(path.join(root, 'dist/src/signerPortal/assets/form.mjs'), `\n${FORM_MARK}\n`);
    admin = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
    await admin.raw(`create database ${name}`);
    const databaseUrl = new URL(DATABASE_URL);
    databaseUrl.pathname = `/${name}`;
    db = knexFactory({ client: 'pg', connection: databaseUrl.toString(), pool: { min: 0, max: 2 } });
    const sealPath = path.join(dir, 'seal.p12');
    fs.writeFileSync(sealPath, await generateSelfSignedP12(), { mode: 0o600 });
    // The settings production requires (docs/deploying.md), on the test's services; api and worker in one process.
    const env = {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? dir,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl.toString(),
      TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: `signet-production-build-${process.pid}`,
      WEBHOOK_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      SIGNING_TOKEN_SECRET: crypto.randomBytes(32).toString('hex'),
      SEAL_P12_PATH: sealPath,
      METRICS_PORT: 'off',
      DATA_DIR: path.join(dir, 'data'),
      LOG_LEVEL: 'info',
    };
    child = await startOnFreePorts(1, async ([port]) => {
      url = `http://127.0.0.1:${port}`;
      output = '';
      const started = spawn(command, args, { cwd: root, env: { ...env, PORT: String(port), PUBLIC_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] });
      started.stdout.on('data', (chunk) => (output += chunk));
      started.stderr.on('data', (chunk) => (output += chunk));
      try {
        await waitUntilReady(started, port, { ms: 120_000, output: () => output });
        return started;
      } catch (error) {
        started.kill('SIGKILL');
        throw error;
      }
    });
  });

  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await db?.destroy();
    await admin?.raw(`drop database if exists ${name} with (force)`);
    await admin?.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is plain node on dist/ (no tsx), with the workflows bundled by the build', () => {
    const commandLine = fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    expect(commandLine.slice(1)).to.deep.equal(['--max-old-space-size=384', '--max-semi-space-size=8', '--heap-growing-percent=75', 'dist/src/main.js']);
    expect(fs.existsSync(path.join(root, 'dist/src/worker/workflow-bundle.js'))).to.equal(true);
  });

  it('serves /readyz and runs a workflow to its end: a signing request notifies its signers, who sign, and the PDF is sealed', async () => {
    const ready = await client(url)('GET', '/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body.checks).to.deep.equal({ database: 'ok', temporal: 'ok' });

    const account = await createAccount(db, { email: `production-${process.pid}@example.com`, plan: 'business' });
    const { secret } = await createApiKey(db, account.id);
    const request = client(url, secret);
    const { signingRequest } = await createSigningRequest(request);
    await eventually(async () => {
      const shown = await request('GET', `/api/v1/signatures/${signingRequest.id}`);
      expect(shown.body.signers.map((signer: { status: string }) => signer.status)).to.deep.equal(['notified', 'notified']);
    }, 60_000);
    for (const signer of signingRequest.signers) {
      const link = await signingLinkOf(request, signingRequest.id, signer.id);
      const signed = await client(url)('POST', `/sign/${tokenOf(link)}/sign`, { json: { consent: true, signature: { type: 'typed', value: signer.name } } });
      expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    }
    await eventually(async () => expect((await request('GET', `/api/v1/signatures/${signingRequest.id}`)).body.status).to.equal('completed'), 60_000);
    expect((await request('GET', `/api/v1/signatures/${signingRequest.id}/document`)).status).to.equal(200);
  });

  it('serves the signing page’s form module as the build made it beforehand, not bundled at the first request', async () => {
    const served = await client(url)('GET', '/sign-assets/form.mjs');
    expect(served.status).to.equal(200);
    expect(served.headers.get('content-type')).to.match(/^text\/javascript/);
    expect(served.body).to.match(/export\s*\{/);
    expect(served.body.trimEnd().endsWith(FORM_MARK)).to.equal(true);
  });

  it('stops on SIGTERM with exit 0', async () => {
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });
});
