import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { archiveRenewalScheduleId } from '../../src/temporal/client';
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

/** In front of the TSA: `down` refuses, `hold` keeps each request waiting (counting them) until set back to `pass`. */
async function startTsaProxy(target: string) {
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
      // Every B-LTA file is due for renewal at once: the test cannot wait years for a certificate to near its end.
      SEAL_ARCHIVE_RENEWAL_DAYS: '36500',
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
    const rows = await db()('sealed_documents').where({ signing_request_id: requestId }).select('document_id', 'seal_level', 'archive_renew_after');
    expect(rows.map((row) => row.document_id).sort()).to.deep.equal([...documentIds].sort());
    expect(rows.every((row) => row.seal_level === 'B-LTA' && row.archive_renew_after !== null)).to.equal(true);
    const events = await db()('events').whereRaw(`data->>'signingRequestId' = ?`, [requestId]).select('type');
    expect(events.filter((event) => event.type === 'document.signed')).to.have.length(2);
    expect(events.filter((event) => event.type === 'signing_request.completed')).to.have.length(1);
    for (const documentId of documentIds) {
      const file = path.join(dir, `${documentId}.pdf`);
      fs.writeFileSync(file, await download(documentId));
      expect(pyhanko(file, pki.rootPem)).to.include({ 'PAdES baseline level': 'B-LTA', 'document timestamps': '1', trusted: 'True' });
    }
  });

  it('the schedule renews each archive once per run: a new document timestamp, an audit step, an event, and the old copy still verifies', async () => {
    const before = await Promise.all(documentIds.map(download));
    await system.api.client.schedule.getHandle(archiveRenewalScheduleId(system.api.config.TEMPORAL_TASK_QUEUE)).trigger();
    await eventually(async () => {
      const rows = await db()('sealed_documents').where({ signing_request_id: requestId }).select('archive_renewals');
      expect(rows.map((row) => row.archive_renewals)).to.deep.equal([1, 1]);
    }, 120_000);
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
