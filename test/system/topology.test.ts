import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { Client } from '@temporalio/client';
import { generateSelfSignedP12 } from '../../src/pdf/sealCertificate';
import { createElasticsearchClient } from '../../src/search/elasticsearch';
import { searchAttributes } from '../../workflows/definitions';
import { waitUntilReady } from '../support/ready';
import { client } from '../support/http';
import { startReceiver } from '../support/receiver';
import { eventually } from '../support/signing';
import { startOnFreePorts } from '../support/ports';
import { startTemporalServer } from '../support/temporalServer';
import { uploadDocument } from '../support/documents';

const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);

// docker-compose.yml's topology without Docker: PostgreSQL, the Temporal server itself on it (set up as
// auto-setup does, nothing pre-registered), Elasticsearch, and two api and two worker processes started
// at the same moment on an empty database, each with its own DATA_DIR, sharing only configuration.
describe('the production topology: Temporal server on PostgreSQL, two api and two worker processes', function () {
  this.timeout(600_000);
  const name = `signet_topology_${process.pid}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-topology-'));
  const processes: { name: string; child: ChildProcess; log: string }[] = [];
  let admin: Knex;
  let temporalServer: Awaited<ReturnType<typeof startTemporalServer>>;
  let smtp: SMTPServer;
  const mails: ParsedMail[] = [];
  let env: Record<string, string>;
  // Ports free a moment before the processes start: api 1 and 2, then worker 1 and 2 (their health checks),
  // then the four metrics ports (each container has 9464 to itself; on one machine each process needs its own).
  let ports: number[] = [];
  const portOf = (i: number) => ports[i];
  const metricsPortOf = (i: number) => ports[4 + i];
  const apiUrl = (n: 1 | 2) => `http://127.0.0.1:${portOf(n - 1)}`;

  before(async () => {
    const { DATABASE_URL, ELASTICSEARCH_URL } = process.env;
    if (!DATABASE_URL || !ELASTICSEARCH_URL) throw new Error('needs DATABASE_URL and ELASTICSEARCH_URL: run with npm test');
    admin = knexFactory({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
    temporalServer = await startTemporalServer({ databaseUrl: DATABASE_URL, name: `${name}_temporal`, dir });

    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream, _session, callback) => void simpleParser(stream).then((mail) => (mails.push(mail), callback()), callback),
    });
    // Workers are killed at the end with their SMTP connections open: a reset is expected, not a failure.
    smtp.on('error', () => undefined);
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const sealPath = path.join(dir, 'seal.p12');
    fs.writeFileSync(sealPath, await generateSelfSignedP12(), { mode: 0o600 });
    const databaseUrl = new URL(DATABASE_URL);
    databaseUrl.pathname = `/${name}`;
    env = {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? dir,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl.toString(),
      TEMPORAL_ADDRESS: temporalServer.address,
      TEMPORAL_TASK_QUEUE: `signet-topology-${process.pid}`,
      ELASTICSEARCH_URL,
      ELASTICSEARCH_INDEX_PREFIX: `signet-topology-${process.pid}-`,
      SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      WEBHOOK_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
      SIGNING_TOKEN_SECRET: crypto.randomBytes(32).toString('hex'),
      SEAL_P12_PATH: sealPath,
      WEBHOOK_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
      LOG_LEVEL: 'info',
    };
    await startOnFreePorts(8, startAllFour);
  });

  /** All four at the same moment, on an empty database; if one could not listen, all are stopped and the database dropped. */
  async function startAllFour(chosen: number[]) {
    ports = chosen;
    env.PUBLIC_URL = apiUrl(1); // the load balancer's address: here, api 1
    await admin.raw(`create database ${name}`);
    for (const [i, role] of (['api', 'api', 'worker', 'worker'] as const).entries()) {
      const processName = `${role}-${(i % 2) + 1}`;
      const log = path.join(dir, `${processName}.log`);
      const out = fs.openSync(log, 'w');
      const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/main.ts'], {
        cwd: root,
        env: {
          ...env,
          SIGNET_PROCESSES: role,
          PORT: String(portOf(i)),
          METRICS_PORT: String(metricsPortOf(i)),
          DATA_DIR: path.join(dir, `data-${processName}`),
        },
        stdio: ['ignore', out, out],
      });
      processes.push({ name: processName, child, log });
    }
    const ready = processes.map(({ name, child, log }, i) =>
      waitUntilReady(child, portOf(i), { ms: 300_000, name, output: () => fs.readFileSync(log, 'utf8') }),
    );
    try {
      await Promise.all(ready);
    } catch (error) {
      for (const { child } of processes) child.kill('SIGKILL');
      await Promise.allSettled(ready);
      processes.length = 0;
      await admin.raw(`drop database if exists ${name} with (force)`);
      throw error;
    }
  }

  after(async () => {
    for (const { child } of processes) child.kill('SIGKILL');
    await temporalServer?.stop();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
    if (env) {
      const elastic = createElasticsearchClient(env.ELASTICSEARCH_URL);
      await elastic.indices.delete({ index: `${env.ELASTICSEARCH_INDEX_PREFIX}*` }).catch(() => undefined);
      await elastic.close();
    }
    if (admin) {
      for (const database of [name, ...(temporalServer?.databases ?? [])]) await admin.raw(`drop database if exists ${database} with (force)`);
      await admin.destroy();
    }
    if (process.env.SIGNET_KEEP_TOPOLOGY) console.log(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  });

  it('all four processes start on the empty database: the migrations ran once, and the namespace got its search attributes', async () => {
    for (const { name: processName, child } of processes) expect(child.exitCode, processName).to.equal(null);
    const signet = knexFactory({ client: 'pg', connection: env.DATABASE_URL, pool: { min: 0, max: 1 } });
    try {
      const migrations = await signet('knex_migrations').select('name');
      expect(new Set(migrations.map((row) => row.name)).size).to.equal(migrations.length);
    } finally {
      await signet.destroy();
    }
    const listed = await temporalServer.connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(listed.customAttributes ?? {})).to.include.members(Object.values(searchAttributes).map(({ name }) => name));
  });

  it('a document made on api 1 is sent, signed through a link on api 2, sealed, announced by webhook, found by search and in Temporal', async () => {
    const { stdout } = await run(
      process.execPath,
      [path.join(root, 'src/cli/bin.js'), 'account', 'create', '--email', 'operator@example.com', '--plan', 'business'],
      {
        cwd: root,
        env: { ...env, DATA_DIR: path.join(dir, 'data-cli') },
      },
    );
    const { accountId, apiKey } = JSON.parse(stdout.trim().split('\n').pop()!);
    const api1 = client(apiUrl(1), apiKey);
    const api2 = client(apiUrl(2), apiKey);
    const receiver = await startReceiver();
    try {
      const webhook = await api1('POST', '/api/v1/webhooks', { json: { url: receiver.url, events: ['*'] } });
      expect(webhook.status, JSON.stringify(webhook.body)).to.equal(201);

      const document = await uploadDocument(api1, { fileName: 'lease.pdf', pages: ['Topology lease agreement'] });
      const created = await api1('POST', '/api/v1/signatures', {
        json: { document_id: document.id, title: 'Topology lease', signers: [{ name: 'Grace Hopper', email: 'grace@example.com' }] },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const requestId = created.body.id as string;

      // The worker's invitation e-mail carries a link to the public address; sign on api 2 instead.
      const invitation = await eventually(async () => {
        const mail = mails.find(
          (candidate) => (candidate.text ?? '').includes('/sign/') && candidate.to && JSON.stringify(candidate.to).includes('grace@example.com'),
        );
        if (!mail) throw new Error('no invitation yet');
        return mail;
      }, 60_000);
      const link = new URL(/https?:\/\/\S+\/sign\/[A-Za-z0-9_-]+/.exec(invitation.text!)![0]);
      expect(link.origin).to.equal(apiUrl(1));
      const signer = client(apiUrl(2));
      const view = await signer('GET', `${link.pathname}/request`);
      expect(view.status, `${link} ${JSON.stringify(view.body)}`).to.equal(200);
      const signed = await signer('POST', `${link.pathname}/sign`, { json: { consent: true, signature: { type: 'typed', value: 'Grace Hopper' } } });
      expect(signed.status, JSON.stringify(signed.body)).to.equal(200);

      const completed = await eventually(async () => {
        const envelope = [...receiver.unique().values()].find(
          (event) => event.type === 'signing_request.completed' && event.data.signingRequestId === requestId,
        );
        if (!envelope) throw new Error('no signing_request.completed delivered yet');
        return envelope;
      }, 120_000);
      expect(completed.data.sealedSha256).to.match(/^[0-9a-f]{64}$/);
      const final = await api2('GET', `/api/v1/signatures/${requestId}`);
      expect(final.body.status).to.equal('completed');
      expect(final.body.sealedSha256).to.match(/^[0-9a-f]{64}$/);

      const found = await eventually(async () => {
        const search = await api2('GET', `/api/v1/search?q=${encodeURIComponent('Topology lease')}&type=signing_request`);
        expect(search.status, JSON.stringify(search.body)).to.equal(200);
        const hit = search.body.data.find((item: { id: string }) => item.id === requestId);
        if (!hit)
          throw new Error(
            `not found by search yet; the workers said:\n${processes
              .filter(({ name: processName }) => processName.startsWith('worker'))
              .map(({ log }) =>
                fs
                  .readFileSync(log, 'utf8')
                  .split('\n')
                  .filter((line) => /"level":(40|50|60)/.test(line))
                  .slice(-5)
                  .join('\n'),
              )
              .join('\n')}`,
          );
        return hit;
      }, 60_000);
      expect(found.id).to.equal(requestId);

      const temporal = new Client({ connection: temporalServer.connection, namespace: 'default' });
      const workflows = await eventually(async () => {
        const listed = [];
        for await (const workflow of temporal.workflow.list({ query: `SignetAccountId = "${accountId}" AND SignetStatus = "completed"` }))
          listed.push(workflow);
        if (!listed.length) throw new Error('not visible in Temporal yet');
        return listed;
      }, 30_000);
      expect(workflows.map((workflow) => workflow.workflowId)).to.deep.equal([requestId]);
      expect(workflows[0].typedSearchAttributes.get(searchAttributes.documentId)).to.equal(document.id);
    } finally {
      await receiver.stop();
    }
    for (const { name: processName, child } of processes) expect(child.exitCode, processName).to.equal(null);
  });

  it("every process serves its own /metrics: the apis their requests (the readiness polls), the workers the Temporal SDK's metrics too", async () => {
    for (const [i, { name: processName }] of processes.entries()) {
      const text = await (await fetch(`http://127.0.0.1:${metricsPortOf(i)}/metrics`)).text();
      expect(text, processName).to.contain('signet_webhook_backlog ');
      if (processName.startsWith('api')) expect(text, processName).to.match(/^signet_http_request_duration_seconds_count\{route="\/readyz",status="200"\}/m);
      else expect(text, processName).to.match(/^temporal_\w+/m);
    }
  });
});
