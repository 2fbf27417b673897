import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import type { Connection } from '@temporalio/client';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { checkProductionSettings, loadConfig } from '../../src/config';
import { migrateLatest } from '../../src/db';
import { createLogger } from '../../src/logger';
import { startSystem } from '../../src/system';
import { findTemporalCli, startTemporalDevServer } from '../../src/temporal/devServer';
import { prepareSearchAttributes } from '../../src/temporal/searchAttributes';
import { searchAttributes } from '../../workflows/definitions';
import { client } from '../support/http';
import { startOnFreePorts } from '../support/ports';
import { createSigningRequest, eventually } from '../support/signing';

const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);
const attributeNames = Object.values(searchAttributes).map(({ name }) => name);

describe('deploying: a process refuses to start in production without the settings it must share', function () {
  this.timeout(60_000);

  it('names every missing setting and why, and exits 1 before touching anything', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-production-'));
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, NODE_ENV: 'production', DATA_DIR: dataDir, PORT: '0' };
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).to.equal(1);
    for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'PUBLIC_URL', 'WEBHOOK_SECRET_KEY', 'SIGNING_TOKEN_SECRET', 'SEAL_P12_PATH']) {
      expect(output, name).to.contain(`${name} is required with NODE_ENV=production`);
    }
    // Nothing was generated into DATA_DIR in its place (no key, no certificate, no embedded database).
    expect(fs.readdirSync(dataDir)).to.deep.equal([]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('an api alone needs no seal certificate; an unreadable one is refused by name', () => {
    const base = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://db/signet',
      TEMPORAL_ADDRESS: 'temporal:7233',
      PUBLIC_URL: 'https://sign.example.com',
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      SIGNING_TOKEN_SECRET: 'b'.repeat(64),
    };
    const check = (env: Record<string, string>) => () => checkProductionSettings(loadConfig(env));
    expect(check({ ...base, SIGNET_PROCESSES: 'api' })).not.to.throw();
    expect(check({ ...base, SIGNET_PROCESSES: 'worker' })).to.throw('SEAL_P12_PATH is required with NODE_ENV=production');
    expect(check({ ...base, SEAL_P12_PATH: '/nonexistent/seal.p12' })).to.throw('SEAL_P12_PATH=/nonexistent/seal.p12 is not a readable file');
    // A seal key on a PKCS#11 token or in a KMS needs no PKCS#12 file.
    expect(check({ ...base, SIGNET_PROCESSES: 'worker', SEAL_PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so' })).not.to.throw();
    expect(check({ ...base, SIGNET_PROCESSES: 'worker', SEAL_KMS_KEY_ID: 'alias/seal' })).not.to.throw();
  });
});

describe('deploying: Signet prepares the Temporal namespace it runs in', function () {
  this.timeout(180_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-namespace-'));
  let devServer: Awaited<ReturnType<typeof startTemporalDevServer>>;

  before(async () => {
    // A Temporal server that knows nothing of Signet: no --search-attribute flags.
    devServer = await startOnFreePorts(2, ([port, uiPort]) => startTemporalDevServer({ dataDir, port, uiPort, logger: createLogger('silent') }));
  });

  after(async () => {
    await devServer?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  let temporalCli: string;
  before(async () => {
    temporalCli = await findTemporalCli(undefined, createLogger('silent'));
  });
  const listed = async () => {
    const { stdout } = await run(temporalCli, ['operator', 'search-attribute', 'list', '--address', devServer.address, '--output', 'json']);
    return stdout;
  };

  it('npx signet temporal setup registers the search attributes, and a second run changes nothing', async () => {
    expect(await listed()).not.to.contain('SignetAccountId');
    const env = { ...process.env, TEMPORAL_ADDRESS: devServer.address, DATA_DIR: dataDir };
    const first = await run(process.execPath, [path.join(root, 'src/cli/bin.js'), 'temporal', 'setup'], { cwd: root, env });
    expect(first.stderr).to.contain('registering Temporal search attributes');
    for (const name of attributeNames) expect(await listed()).to.contain(name);
    const second = await run(process.execPath, [path.join(root, 'src/cli/bin.js'), 'temporal', 'setup'], { cwd: root, env });
    expect(second.stderr).not.to.contain('registering');
    expect(second.stderr).to.contain('namespace default is ready');
  });

  it("POST /api/v1/signatures creates the request on a server started without Signet's attributes (the reported 500)", async () => {
    // A namespace of its own on the same bare server, so this test does not depend on the one before.
    await run(temporalCli, ['operator', 'namespace', 'create', '--namespace', 'bare', '--address', devServer.address]);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: devServer.address,
      TEMPORAL_NAMESPACE: 'bare',
      DATA_DIR: path.join(dataDir, 'system'),
      PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      TEMPORAL_TASK_QUEUE: `signet-bare-${process.pid}`,
    };
    delete env.ELASTICSEARCH_URL;
    const system = await startSystem(loadConfig(env), createLogger('silent'));
    try {
      const account = await createAccount(system.database.knex, { email: `bare-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
      const { secret } = await createApiKey(system.database.knex, account.id);
      const { signingRequest } = await createSigningRequest(client(system.url!, secret));
      expect(signingRequest.id).to.match(/^sr_/);
    } finally {
      await system.stop();
    }
  });

  it('when the server refuses, start fails with the attributes to add and how', async () => {
    const refusing = {
      operatorService: {
        listSearchAttributes: async () => ({ customAttributes: {} }),
        addSearchAttributes: async () => {
          throw new Error('7 PERMISSION_DENIED: Request unauthorized.');
        },
      },
    } as unknown as Connection;
    const error = await prepareSearchAttributes(refusing, 'acme.a1b2c', { info() {} }).then(
      () => undefined,
      (failure: Error) => failure,
    );
    expect(error?.message).to.contain('PERMISSION_DENIED');
    for (const name of attributeNames) expect(error?.message).to.contain(`--name ${name} --type Keyword`).and.contain(`"${name}=Keyword"`);
    expect(error?.message).to.contain('tcld namespace search-attributes add');
  });
});

describe('deploying: processes starting at once on one empty database', function () {
  this.timeout(120_000);
  const name = `signet_migrations_${process.pid}`;
  let admin: Knex;
  const databaseUrl = () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    return url.toString();
  };

  before(async () => {
    if (!process.env.DATABASE_URL) throw new Error('needs DATABASE_URL: run with npm test');
    admin = knexFactory({ client: 'pg', connection: process.env.DATABASE_URL, pool: { min: 0, max: 1 } });
  });
  beforeEach(() => admin.raw(`create database ${name}`));
  afterEach(() => admin.raw(`drop database if exists ${name} with (force)`));
  after(() => admin?.destroy());

  it('eight migration runs at the same moment all succeed, and each migration is applied once', async () => {
    const processes = Array.from({ length: 8 }, () => knexFactory({ client: 'pg', connection: databaseUrl(), pool: { min: 0, max: 2 } }));
    try {
      const results = await Promise.all(processes.map((knex) => migrateLatest(knex)));
      expect(results.filter((applied) => applied.length > 0)).to.have.length(1);
      const rows = await processes[0]('knex_migrations').select('name');
      expect(rows.map((row) => row.name)).to.deep.equal(results.find((applied) => applied.length)!);
    } finally {
      await Promise.all(processes.map((knex) => knex.destroy()));
    }
  });

  it('a process that has to wait says so in its log, and creates nothing until the lock is free', async () => {
    const holder = knexFactory({ client: 'pg', connection: databaseUrl(), pool: { min: 1, max: 1 } });
    const waiter = knexFactory({ client: 'pg', connection: databaseUrl(), pool: { min: 0, max: 2 } });
    try {
      await holder.raw('select pg_advisory_lock(hashtext(?))', ['signet:migrations']);
      const said: string[] = [];
      const migrating = migrateLatest(waiter, { info: (_details, message) => said.push(message) });
      await eventually(async () => expect(said).to.deep.equal(['waiting for another process to finish: migrations']));
      expect(await waiter.schema.hasTable('knex_migrations')).to.equal(false);
      await holder.raw('select pg_advisory_unlock(hashtext(?))', ['signet:migrations']);
      expect(await migrating).to.have.length.greaterThan(0);
      expect(said).to.include('done waiting: migrations');
    } finally {
      await holder.destroy();
      await waiter.destroy();
    }
  });
});
