import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { loadConfig } from '../../src/config';
import { sweepScheduleId } from '../../src/events/sweepSchedule';
import { createLogger } from '../../src/logger';
import { startSystem, type RunningSystem } from '../../src/system';
import { client } from '../support/http';
import { startReceiver } from '../support/receiver';
import { eventually } from '../support/signing';

const root = path.resolve(__dirname, '../..');
const EVENTS = 200;

// The api runs here; the worker is its own process, killed with SIGKILL in the middle of a burst.
describe('webhook deliveries when the worker is killed mid-burst', function () {
  this.timeout(240_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-burst-'));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'error',
    TEMPORAL_TASK_QUEUE: `signet-burst-${process.pid}`,
    PORT: '0',
    HOST: '127.0.0.1',
    WEBHOOK_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    WEBHOOK_RETRY_SCALE: '0.001',
    RATE_LIMIT_MULTIPLIER: '10',
  };
  let api: RunningSystem;
  let worker: ChildProcess | undefined;
  const startWorker = () => {
    worker = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env: { ...env, SIGNET_PROCESSES: 'worker' }, stdio: 'ignore' });
  };

  before(async function () {
    if (!process.env.DATABASE_URL || !process.env.TEMPORAL_ADDRESS) throw new Error('needs DATABASE_URL and TEMPORAL_ADDRESS: run with npm test');
    api = await startSystem(loadConfig({ ...env, SIGNET_PROCESSES: 'api' }), createLogger('error'));
    startWorker();
  });

  after(async () => {
    worker?.kill('SIGKILL');
    await api?.client.schedule.getHandle(sweepScheduleId(env.TEMPORAL_TASK_QUEUE)).delete().catch(() => undefined);
    await api?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(`delivers each of ${EVENTS} events at least once, and receivers that deduplicate count exactly ${EVENTS}`, async () => {
    const db = api.database.knex;
    const account = await createAccount(db, { email: 'burst@example.com', plan: 'business' });
    const { secret } = await createApiKey(db, account.id);
    const request = client(api.url!, secret);
    const receiver = await startReceiver();
    try {
      const webhook = await request('POST', '/api/v1/webhooks', { json: { url: receiver.url, events: ['document.created'] } });
      expect(webhook.status).to.equal(201);

      // Once the worker delivers, a burst: documents created ten at a time, the worker killed when
      // some deliveries have arrived and most are still to come, then started again.
      await request('POST', '/api/v1/documents', { json: { fileName: 'warm-up.pdf', fileSize: 1000 } });
      await eventually(async () => expect(receiver.received.length).to.equal(1), 120_000);
      const burst = (async () => {
        for (let i = 0; i < EVENTS - 1; i += 10) {
          const batch = Array.from({ length: Math.min(10, EVENTS - 1 - i) }, (_, j) =>
            request('POST', '/api/v1/documents', { json: { fileName: `burst-${i + j}.pdf`, fileSize: 1000 } }),
          );
          for (const response of await Promise.all(batch)) expect(response.status).to.equal(201);
        }
      })();
      await eventually(async () => expect(receiver.unique().size).to.be.at.least(30), 60_000);
      worker!.kill('SIGKILL');
      const deliveredBeforeKill = receiver.unique().size;
      await new Promise((resolve) => setTimeout(resolve, 1500));
      startWorker();
      await burst;
      expect(deliveredBeforeKill, 'killed mid-burst').to.be.below(EVENTS);

      const eventIds: string[] = (await db('events').where({ account_id: account.id, type: 'document.created' }).select('id')).map((row) => row.id);
      expect(eventIds).to.have.length(EVENTS);
      await eventually(async () => expect(receiver.unique().size).to.equal(EVENTS), 180_000);
      expect([...receiver.unique().keys()].sort()).to.deep.equal([...eventIds].sort());
      expect(receiver.received.length).to.be.at.least(EVENTS);
    } finally {
      await receiver.stop();
    }
  });
});
