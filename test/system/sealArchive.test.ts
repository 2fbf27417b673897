import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { findArchivesDue } from '../../src/signingRequests/archive';
import { archivePolicyOf } from '../../src/signingRequests/sealing';
import { archiveRenewalScheduleId } from '../../src/temporal/client';
import type { ArchiveRenewalResult } from '../../workflows/archiveRenewal';
import { uploadDocument } from '../support/documents';
import { client } from '../support/http';
import { eventually, tokenOf } from '../support/signing';
import { startSplitSystem } from '../support/splitSystem';
import { pyhanko } from '../support/pyhanko';
import { startTestPki, type TestPki } from '../support/testPki';

// The seal at B-LTA as deployed (api and worker apart), against a real PKI on loopback behind a proxy
// the test controls: a timestamp authority that is down makes the seal wait, visibly, never a lower
// level; a worker killed mid-seal or mid-renewal loses nothing and seals nothing twice; the archive
// renewal, run by its Temporal Schedule, appends a new document timestamp, and the copy handed out
// before still verifies as Signet's.

/** In front of a TSA (`target` switches it): `down` refuses, `hold` keeps each request waiting (counting them) until set back to `pass`. */
async function startTsaProxy(initialTarget: string) {
  let target = initialTarget;
  let mode: 'pass' | 'down' | 'hold' = 'pass';
  let held = 0;
  const waiting = new Set<() => void>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      if (mode === 'down') return response.socket?.destroy();
      if (mode === 'hold') {
        held++;
        await new Promise<void>((resolve) => waiting.add(resolve));
      }
      const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/timestamp-query' }, body: Buffer.concat(chunks) });
      response.writeHead(answer.status, { 'content-type': 'application/timestamp-reply' }).end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/tsa`,
    held: () => held,
    target: (url: string) => (target = url),
    set(next: typeof mode) {
      mode = next;
      if (next !== 'hold') for (const release of waiting) release();
      if (next !== 'hold') waiting.clear();
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('the B-LTA seal as deployed: waiting for its authority, kill -9, the archive renewal', function () {
  this.timeout(300_000);
  let pki: TestPki;
  let tsa: Awaited<ReturnType<typeof startTsaProxy>>;
  let system: Awaited<ReturnType<typeof startSplitSystem>>;
  let request: ReturnType<typeof client>;
  let requestId: string;
  let documentIds: string[];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-seal-archive-'));

  before(async () => {
    pki = await startTestPki();
    // The renewal run renews every file of the database that is due: those an earlier run of this test
    // left (sealed against a PKI long gone, due at once by the margin below) would wait for it first.
    await clearLeftovers();
    tsa = await startTsaProxy(pki.tsaUrl);
    system = await startSplitSystem('seal-archive', {
      SEAL_P12_PATH: pki.seal.p12,
      SEAL_P12_PASSWORD: pki.seal.password,
      SEAL_TSA_URLS: tsa.url,
      SEAL_TSA_TIMEOUT_MS: '3000',
      SEAL_TRUST_ANCHORS_PATH: pki.rootPem,
      // The test TSA's RSA 2048 key weakens tomorrow: every file it timestamps is due for renewal at
      // once, by an authority with a stronger key (the test cannot wait years for a certificate to end).
      SEAL_ALGORITHM_SUNSETS: `rsa-2048=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`,
      VERIFY_REQUESTS_PER_HOUR: '100000', // its limit is tested elsewhere (verification.test.ts)
    });
    const account = await createAccount(system.api.database.knex, { email: `seal-archive-${Date.now()}@example.com`, plan: 'business' });
    request = client(system.api.url!, (await createApiKey(system.api.database.knex, account.id)).secret);
  });
  after(async () => {
    if (system) await clearLeftovers();
    await system?.stop();
    await tsa?.close();
    await pki?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const db = () => system.api.database.knex;
  async function clearLeftovers() {
    const knex = system?.api.database.knex ?? (await import('knex')).default({ client: 'pg', connection: process.env.DATABASE_URL });
    if (await knex.schema.hasTable('sealed_documents'))
      await knex('sealed_documents').whereNotNull('archive_renew_after').update({ archive_renew_after: null });
    if (!system) await knex.destroy();
  }
  const get = async () => (await request('GET', `/api/v1/signatures/${requestId}`)).body;
  const verify = (pdf: Buffer) => client(system.api.url!)('POST', '/api/v1/verify', { body: pdf, headers: { 'content-type': 'application/pdf' } });
  const download = async (documentId: string) => {
    const response = await request('GET', `/api/v1/signatures/${requestId}/documents/${documentId}`);
    expect(response.status).to.equal(200);
    return response.bytes;
  };

  it('waits for a timestamp authority that is down, and says so in progress; never seals without it', async () => {
    tsa.set('down');
    const [contract, annex] = [await uploadDocument(request), await uploadDocument(request)];
    const created = await request('POST', '/api/v1/signatures', {
      json: { title: 'Lease', documents: [{ document_id: contract.id }, { document_id: annex.id }], signers: [{ name: 'Ada', email: 'ada@example.com' }] },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    requestId = created.body.id;
    documentIds = [contract.id, annex.id];
    const link = await request('POST', `/api/v1/signatures/${requestId}/signers/${created.body.signers[0].id}/link`);
    const signed = await client(system.api.url!)('POST', `/sign/${tokenOf(link.body.url)}/sign`, {
      json: { consent: true, signature: { type: 'typed', value: 'Ada' } },
    });
    expect(signed.status).to.equal(200);

    const waiting = await eventually(async () => {
      const body = await get();
      expect(body.progress.sealing?.attempts).to.be.at.least(2);
      return body;
    }, 60_000);
    expect(waiting.status).to.equal('pending');
    expect(waiting.progress.sealing.waitingOn).to.include({ service: 'timestamp authority', url: tsa.url });
    expect(Date.parse(waiting.progress.sealing.waitingOn.since)).to.be.below(Date.now());
    expect(waiting.progress.sealing.lastError).to.contain(tsa.url);
    expect(await db()('sealed_documents').where({ signing_request_id: requestId })).to.have.length(0);
  });

  it('a worker killed while its seal waits on the authority: after a restart, each document is sealed once, at B-LTA', async () => {
    tsa.set('hold');
    await eventually(async () => expect(tsa.held()).to.be.at.least(1), 60_000);
    await system.killWorker();
    tsa.set('pass');
    system.startWorker();
    const done = await eventually(async () => {
      const body = await get();
      expect(body.status).to.equal('completed');
      return body;
    }, 120_000);
    expect(done.progress.sealing).to.equal(null);
    const rows = await db()('sealed_documents')
      .where({ signing_request_id: requestId })
      .select('document_id', 'seal_level', 'archive_renew_after', 'archive_algorithms');
    expect(rows.map((row) => row.document_id).sort()).to.deep.equal([...documentIds].sort());
    for (const row of rows) {
      expect(row.seal_level).to.equal('B-LTA');
      expect(row.archive_algorithms).to.have.members(['sha256', 'rsa-2048']);
      expect(row.archive_renew_after.getTime()).to.be.below(Date.now()); // the day the key weakens, less 90 days
    }
    const events = await db()('events').whereRaw(`data->>'signingRequestId' = ?`, [requestId]).select('type');
    expect(events.filter((event) => event.type === 'document.signed')).to.have.length(2);
    expect(events.filter((event) => event.type === 'signing_request.completed')).to.have.length(1);
    for (const documentId of documentIds) {
      const file = path.join(dir, `${documentId}.pdf`);
      fs.writeFileSync(file, await download(documentId));
      expect(pyhanko(file, pki.rootPem)).to.include({ 'PAdES baseline level': 'B-LTA', 'document timestamps': '1', trusted: 'True' });
    }
  });

  /** Triggers the schedule, and waits for the run it started to end: its result. */
  async function renewalRun(): Promise<ArchiveRenewalResult> {
    const schedule = system.api.client.schedule.getHandle(archiveRenewalScheduleId(system.api.config.TEMPORAL_TASK_QUEUE));
    const before = (await schedule.describe()).info.recentActions.length;
    await schedule.trigger();
    const started = await eventually(async () => {
      const actions = (await schedule.describe()).info.recentActions;
      expect(actions.length).to.be.greaterThan(before);
      return actions[actions.length - 1].action.workflow.workflowId;
    }, 60_000);
    return system.api.client.workflow.getHandle(started).result();
  }

  it('renews nothing with an authority whose timestamp would be as weak: the run ends at the first file, which stays as it was', async () => {
    const result = await renewalRun();
    expect(result).to.deep.equal({ renewed: 0, failed: 1 });
    const rows = await db()('sealed_documents').where({ signing_request_id: requestId }).select('archive_renewals', 'archive_algorithms');
    expect(rows.map((row) => row.archive_renewals)).to.deep.equal([0, 0]);
    expect(await db()('events').where({ type: 'document.archive_renewed' }).whereRaw(`data->>'signingRequestId' = ?`, [requestId])).to.have.length(0);
  });

  it('the schedule renews each archive once per run, by an authority with a stronger key: a new document timestamp, an audit step, an event, and the old copy still verifies', async () => {
    const before = await Promise.all(documentIds.map(download));
    tsa.target(pki.strongTsaUrl);
    expect(await renewalRun()).to.deep.equal({ renewed: 2, failed: 0 });
    const rows = await db()('sealed_documents')
      .where({ signing_request_id: requestId })
      .select('archive_renewals', 'archive_algorithms', 'archive_renew_after');
    expect(rows.map((row) => row.archive_renewals)).to.deep.equal([1, 1]);
    for (const row of rows) {
      expect(row.archive_algorithms).to.have.members(['sha256', 'rsa-3072']);
      expect(row.archive_renew_after.getTime()).to.be.above(Date.now()); // its certificate's end, less 90 days
    }
    // A day configured later for what the file now rests on makes it due, whatever its noted day.
    const policy = (sunsets: string) => archivePolicyOf({ SEAL_ARCHIVE_RENEWAL_DAYS: 90, SEAL_ALGORITHM_SUNSETS: sunsets });
    const due = async (sunsets: string) =>
      (await findArchivesDue(db(), policy(sunsets), { limit: 1000, since: new Date() })).filter((one) => one.requestId === requestId);
    const inAMonth = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    expect(await due(`rsa-2048=${inAMonth}`)).to.have.length(0);
    expect(await due(`rsa-3072=${inAMonth}`)).to.have.length(2);
    const audit = (await request('GET', `/api/v1/signatures/${requestId}/audit-trail`)).body.data.filter(
      (step: { action: string }) => step.action === 'archive_renewed',
    );
    expect(audit).to.have.length(2);
    const events = await db()('events').where({ type: 'document.archive_renewed' }).whereRaw(`data->>'signingRequestId' = ?`, [requestId]).select('data');
    expect(events).to.have.length(2);
    for (const [index, documentId] of documentIds.entries()) {
      const after = await download(documentId);
      expect(after.subarray(0, before[index].length).equals(before[index])).to.equal(true); // an incremental update: the old copy is its start
      const file = path.join(dir, `${documentId}-renewed.pdf`);
      fs.writeFileSync(file, after);
      expect(pyhanko(file, pki.rootPem)).to.include({ 'PAdES baseline level': 'B-LTA', 'document timestamps': '2', trusted: 'True', intact: 'True' });
      const event = events.find((row) => (typeof row.data === 'string' ? JSON.parse(row.data) : row.data).documentId === documentId)!;
      expect((typeof event.data === 'string' ? JSON.parse(event.data) : event.data).sealedSha256).to.equal(
        crypto.createHash('sha256').update(after).digest('hex'),
      );
      for (const copy of [before[index], after]) {
        const verified = await verify(copy);
        expect(verified.body.result, `${verified.status} ${JSON.stringify(verified.body)}`).to.equal('sealed_unmodified');
      }
    }
  });

  it('a worker killed mid-renewal: the run goes on, renews each file once, and records nothing twice', async () => {
    // Years later: the stronger authority's certificate nears its end.
    await db()('sealed_documents').where({ signing_request_id: requestId }).update({ archive_renew_after: new Date() });
    tsa.set('hold');
    const heldBefore = tsa.held();
    await system.api.client.schedule.getHandle(archiveRenewalScheduleId(system.api.config.TEMPORAL_TASK_QUEUE)).trigger();
    await eventually(async () => expect(tsa.held()).to.be.greaterThan(heldBefore), 60_000);
    await system.killWorker();
    tsa.set('pass');
    system.startWorker();
    await eventually(async () => {
      const rows = await db()('sealed_documents').where({ signing_request_id: requestId }).select('archive_renewals');
      expect(rows.map((row) => row.archive_renewals)).to.deep.equal([2, 2]);
    }, 180_000);
    const steps = await db()('audit_trail').where({ signing_request_id: requestId, action: 'archive_renewed' });
    expect(steps).to.have.length(4);
    expect(await db()('sealed_document_versions').where({ signing_request_id: requestId })).to.have.length(4);
    const events = await db()('events').where({ type: 'document.archive_renewed' }).whereRaw(`data->>'signingRequestId' = ?`, [requestId]);
    expect(events).to.have.length(4);
  });
});
