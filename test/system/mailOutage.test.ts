import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startSystem, type RunningSystem } from '../../src/system';
import { client } from '../support/http';
import { createSigningRequest, eventually } from '../support/signing';

// An SMTP server on loopback that refuses the first messages, as a mail provider having an outage would.
describe('an e-mail transport failing for a while', function () {
  this.timeout(120_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-smtp-'));
  const received: { messageId: string; to: string }[] = [];
  let refusals = 3;
  let smtp: SMTPServer;
  let system: RunningSystem;

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, _session, callback) {
        simpleParser(stream).then((mail) => {
          if (refusals-- > 0) return callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
          received.push({ messageId: mail.messageId ?? '', to: (mail.to as { text: string }).text });
          callback();
        }, callback);
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as { port: number };
    system = await startSystem(
      loadConfig({
        ...process.env,
        DATA_DIR: dataDir,
        PORT: '0',
        METRICS_PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        TEMPORAL_TASK_QUEUE: `signet-smtp-${process.pid}`,
      }),
      createLogger('silent'),
    );
  });

  after(async () => {
    await system?.stop();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Whether the request's workflow has run its sendInvitations activity to completion, with no activity left pending. */
  async function invitationsCompleted(requestId: string) {
    const handle = system.client.workflow.getHandle(requestId);
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'sendInvitations');
    const completed = events.some((event) => scheduled && String(event.activityTaskCompletedEventAttributes?.scheduledEventId) === String(scheduled.eventId));
    const { raw } = await handle.describe();
    return completed && (raw.pendingActivities ?? []).length === 0;
  }

  it('sends every invitation once the transport recovers, and none twice', async () => {
    const account = await createAccount(system.database.knex, { email: `outage-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
    const { secret } = await createApiKey(system.database.knex, account.id);
    const { signingRequest } = await createSigningRequest(client(system.url!, secret));
    await eventually(async () => expect(received).to.have.length(2), 60_000);
    expect(refusals).to.be.below(0);
    // Only the sendInvitations activity sends them, retried until it succeeds: once it has completed,
    // no retry is left to send one twice.
    await eventually(async () => expect(await invitationsCompleted(signingRequest.id)).to.equal(true), 60_000);
    expect(received.map((mail) => mail.to).sort()).to.deep.equal(['"Ada Lovelace" <ada@example.com>', '"Alan Turing" <alan@example.com>'].sort());
    expect(new Set(received.map((mail) => mail.messageId)).size).to.equal(2);
  });
});
