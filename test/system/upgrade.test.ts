import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { Client, Connection } from '@temporalio/client';
import { createAccount } from '../../src/accounts/service';
import { hashKey } from '../../src/apiKeys/service';
import { openDatabase } from '../../src/db';
import { migrationSource } from '../../src/db/migrations';
import { newId } from '../../src/ids';
import { createLogger } from '../../src/logger';
import { startSystem, type RunningSystem } from '../../src/system';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { eventually, tokenOf } from '../support/signing';
import { databaseKind, stopLeavingNothing, testConfig } from '../support/system';

// Requests in flight when several documents and recipients of every kind were deployed: made on the
// schema and in the shape of before (one document per request, signers only, a workflow input without
// recipients), then the service starts on the new code, migrates in place, and finishes them.
const FIRST_NEW_MIGRATION = '20261126130900_signing_request_documents';

describe('an upgrade to several documents and recipients: requests of before finish on the new code', function () {
  this.timeout(300_000);
  const prefix = `signet-test-upgrade-${process.pid}-`;
  let system: RunningSystem | undefined;
  let dropScratch: (() => Promise<void>) | undefined;

  after(async () => {
    await stopLeavingNothing(system);
    await dropScratch?.();
  });

  /** A database of its own on the schema of before: every migration up to the first of the new ones. */
  async function oldSchema(dataDir: string): Promise<{ knex: Knex; url?: string; close(): Promise<void> }> {
    const older = { ...migrationSource, getMigrations: async () => (await migrationSource.getMigrations([])).filter((name) => name < FIRST_NEW_MIGRATION) };
    if (databaseKind === 'pglite') {
      const database = await openDatabase({ DATABASE_URL: undefined, DATABASE_POOL_MAX: 2, dataDir });
      await database.knex.migrate.latest({ migrationSource: older });
      return { knex: database.knex, close: () => database.close() };
    }
    const admin = knexFactory({ client: 'pg', connection: process.env.DATABASE_URL, pool: { min: 0, max: 1 } });
    const name = `signet_upgrade_${process.pid}`;
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.raw(`create database ${name}`);
    dropScratch = async () => {
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    };
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    const knex = knexFactory({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 2 } });
    await knex.migrate.latest({ migrationSource: older });
    return { knex, url: url.toString(), close: () => knex.destroy() };
  }

  it('a sequential request in flight and a completed one migrate in place; the first completes, sealed, on the new code', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-upgrade-'));
    const taskQueue = `signet-test-upgrade-${process.pid}`;
    const old = await oldSchema(dataDir);
    expect(await old.knex.schema.hasTable('signing_request_documents')).to.equal(false);

    // What the code of before wrote for an account, its document and two requests.
    const account = await createAccount(old.knex, { email: `upgrade-${Math.random().toString(36).slice(2)}@example.com`, plan: 'business' });
    // Its key as that code made it (no scopes, no expiry): it keeps every scope on the new code.
    const secret = `sk_live_${crypto
      .randomBytes(64)
      .toString('base64')
      .replace(/[^0-9A-Za-z]/g, '')
      .slice(0, 43)}`;
    await old.knex('api_keys').insert({ id: newId('apiKey'), account_id: account.id, name: 'default', prefix: secret.slice(0, 16), key_hash: hashKey(secret) });
    const pdf = await makePdf(['Agreement of before', 'Page two']);
    const sha256 = crypto.createHash('sha256').update(pdf).digest('hex');
    const documentId = newId('document');
    await old.knex('documents').insert({
      id: documentId,
      account_id: account.id,
      file_name: 'before.pdf',
      file_size: pdf.length,
      status: 'ready',
      page_count: 2,
      sha256,
      page_sizes: JSON.stringify([
        [612, 792],
        [612, 792],
      ]),
    });
    await old.knex('document_files').insert({ document_id: documentId, content: pdf });
    const inFlight = newId('signingRequest');
    const signerIds = [newId('signer'), newId('signer')];
    const expiresAt = new Date(Date.now() + 7 * 86_400_000);
    await old.knex('signing_requests').insert({
      id: inFlight,
      account_id: account.id,
      document_id: documentId,
      title: 'Made before the upgrade',
      signing_order: 'sequential',
      expires_at: expiresAt,
      reminder_every_days: 0,
      original_sha256: sha256,
      signer_text: 'Ada ada@example.com Alan alan@example.com',
      workflow_started_at: new Date(),
    });
    await old.knex('signers').insert([
      { id: signerIds[0], signing_request_id: inFlight, name: 'Ada Lovelace', email: 'ada@example.com', order: 1 },
      { id: signerIds[1], signing_request_id: inFlight, name: 'Alan Turing', email: 'alan@example.com', order: 2 },
    ]);
    await old.knex('audit_trail').insert({ signing_request_id: inFlight, action: 'created', actor: account.email, idempotency_key: `created:${inFlight}` });
    const completed = newId('signingRequest');
    const sealedBefore = Buffer.concat([pdf, Buffer.from('\n% sealed before the upgrade\n')]);
    const sealedSha256 = crypto.createHash('sha256').update(sealedBefore).digest('hex');
    await old.knex('signing_requests').insert({
      id: completed,
      account_id: account.id,
      document_id: documentId,
      title: 'Completed before the upgrade',
      signing_order: 'parallel',
      status: 'completed',
      expires_at: expiresAt,
      reminder_every_days: 0,
      original_sha256: sha256,
      sealed_sha256: sealedSha256,
      completed_at: new Date(),
      signer_text: 'Grace grace@example.com',
      workflow_started_at: new Date(),
    });
    await old
      .knex('signers')
      .insert({ id: newId('signer'), signing_request_id: completed, name: 'Grace Hopper', email: 'grace@example.com', order: 1, status: 'signed' });
    await old.knex('sealed_documents').insert({ signing_request_id: completed, content: sealedBefore, sha256: sealedSha256 });
    await old.close();

    // Its workflow, started as the code of before started it: no recipients in the input.
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    await new Client({ connection }).workflow.start('signingRequestWorkflow', {
      taskQueue,
      workflowId: inFlight,
      args: [{ requestId: inFlight, signingOrder: 'sequential', signerIds, expiresAt: expiresAt.toISOString(), reminderEveryMs: 0 }],
    });
    await connection.close();

    // The new code starts on that database: it migrates, and its worker takes the request on.
    const settings: Record<string, string> = { TEMPORAL_TASK_QUEUE: taskQueue, ELASTICSEARCH_INDEX_PREFIX: prefix, DATA_DIR: dataDir };
    if (old.url) settings.DATABASE_URL = old.url;
    system = await startSystem(testConfig(settings), createLogger('silent'));
    const api = client(system.url!, secret);

    const before = await api('GET', `/api/v1/signatures/${completed}`);
    expect(before.body.documents).to.deep.equal([{ documentId, fileName: 'before.pdf', pageCount: 2, originalSha256: sha256, sealedSha256: sealedSha256 }]);
    const download = await api('GET', `/api/v1/signatures/${completed}/document`);
    expect(download.bytes.equals(sealedBefore)).to.equal(true);
    expect((await api('GET', `/api/v1/signatures/${completed}/documents/${documentId}`)).bytes.equals(sealedBefore)).to.equal(true);

    const pending = await eventually(async () => {
      const got = await api('GET', `/api/v1/signatures/${inFlight}`);
      expect(got.body.signers.map((signer: { status: string }) => signer.status)).to.deep.equal(['notified', 'pending']);
      return got.body;
    }, 60_000);
    expect(pending.documents.map((document: { documentId: string }) => document.documentId)).to.deep.equal([documentId]);
    expect(pending.signers.map((signer: { recipientType: string; routingOrder: number }) => [signer.recipientType, signer.routingOrder])).to.deep.equal([
      ['signer', 1],
      ['signer', 2],
    ]);
    expect(pending.progress.waitingFor).to.deep.equal([signerIds[0]]);

    for (const signerId of signerIds) {
      const link = await api('POST', `/api/v1/signatures/${inFlight}/signers/${signerId}/link`);
      expect(link.status, JSON.stringify(link.body)).to.equal(200);
      const signed = await client(system.url!)('POST', `/sign/${tokenOf(link.body.url)}/sign`, {
        json: { consent: true, signature: { type: 'typed', value: signerId } },
      });
      expect(signed.status, JSON.stringify(signed.body)).to.equal(200);
    }
    const done = await eventually(async () => {
      const got = await api('GET', `/api/v1/signatures/${inFlight}`);
      expect(got.body.status).to.equal('completed');
      return got.body;
    }, 90_000);
    expect(done.documents[0].sealedSha256).to.equal(done.sealedSha256);
    const sealed = await api('GET', `/api/v1/signatures/${inFlight}/document`);
    const file = path.join(dataDir, 'sealed.pdf');
    fs.writeFileSync(file, sealed.bytes);
    let out = '';
    try {
      out = execFileSync('pdfsig', [file], { encoding: 'utf8' });
    } catch (error) {
      out = String((error as { stdout?: string }).stdout ?? '');
    }
    expect(out).to.include('Signature is Valid');
    const events = await system.database.knex('events').where({ account_id: account.id }).whereRaw(`data->>'signingRequestId' = ?`, [inFlight]);
    expect(events.filter((row) => row.type === 'document.signed')).to.have.length(1);
    expect(events.filter((row) => row.type === 'signing_request.completed')).to.have.length(1);
  });
});
