import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { IDEMPOTENCY_KEY_TTL_MS, IDEMPOTENCY_LEASE_MS } from '../../src/api/middleware/idempotency';
import type { PdfInspector } from '../../src/pdf/inspect';
import { startApp } from '../support/app';
import { client, type Request, type TestResponse } from '../support/http';
import { makePdf } from '../support/pdfs';
import { startOnFreePorts } from '../support/ports';
import { eventually } from '../support/signing';
import { createTestAccount, databaseKind, sharedSystem, useSharedSystem } from '../support/system';
import { uploadDocument } from '../support/documents';

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const withKey = (key: string, headers: Record<string, string> = {}) => ({ 'Idempotency-Key': key, ...headers });

/** Sends until the answer is not 409 idempotency_in_progress (bounded): what a client does with Retry-After. */
async function untilSettled(send: () => Promise<TestResponse>): Promise<TestResponse> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const response = await send();
    if (response.status !== 409 || response.body.error !== 'idempotency_in_progress') return response;
    expect(response.headers.get('retry-after')).to.match(/^\d+$/);
    if (Date.now() > deadline) throw new Error('still in progress after 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const requestBody = (documentId: string, title = 'Services agreement') => ({
  document_id: documentId,
  title,
  signers: [{ name: 'Ada Lovelace', email: 'ada@example.com' }],
});

/** A multipart upload as fetch makes it: a new boundary for every request. */
function upload(pdf: Buffer, fileName = 'contract.pdf') {
  const form = new FormData();
  form.append('fileName', fileName);
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), fileName);
  return form;
}

/** A key held by another process for POST /api/v1/signatures, its lease running out `leaseMs` from now, and the hash of the body it read, if any. */
async function heldKey(account: Account, key: string, { leaseMs, bodyHash = null }: { leaseMs: number; bodyHash?: string | null }) {
  const now = new Date();
  await account.db('idempotency_keys').insert({
    account_id: account.account.id,
    key,
    method: 'POST',
    path: '/api/v1/signatures',
    holder: 'another process',
    locked_until: new Date(now.getTime() + leaseMs),
    created_at: now,
    expires_at: new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS),
    body_hash: bodyHash,
  });
}

const requestsOf = (account: Account) => account.db('signing_requests').where({ account_id: account.account.id });
const documentsOf = (account: Account) => account.db('documents').where({ account_id: account.account.id });

describe('Idempotency-Key on POST /api/v1/…', function () {
  this.timeout(120_000);
  useSharedSystem();

  describe('POST /api/v1/signatures', () => {
    it('10 identical requests at once make one request and one workflow, and all answer the same body', async () => {
      const account = await createTestAccount();
      const { id: documentId } = await uploadDocument(account.request);
      const key = randomUUID();
      const send = () => account.request('POST', '/api/v1/signatures', { json: requestBody(documentId), headers: withKey(key) });
      const answers = await Promise.all(Array.from({ length: 10 }, () => untilSettled(send)));
      for (const answer of answers) {
        expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
        expect(answer.body).to.deep.equal(answers[0].body);
      }
      expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true')).to.have.length(9);
      const rows = await requestsOf(account);
      expect(rows.map((row) => row.id)).to.deep.equal([answers[0].body.id]);
      // One invitation: the workflow records it once it is sent.
      await eventually(async () => {
        const events = await account.db('events').where({ account_id: account.account.id }).whereIn('type', ['signing_request.created', 'signer.notified']);
        expect(events.map((event) => event.type).sort()).to.deep.equal(['signer.notified', 'signing_request.created']);
      });
      const workflows = account.system.client.workflow;
      expect((await workflows.getHandle(rows[0].id).describe()).status.name).to.equal('RUNNING');
      await eventually(async () => {
        let runs = 0;
        for await (const _ of workflows.list({ query: `WorkflowId = '${rows[0].id}'` })) runs += 1;
        expect(runs).to.equal(1);
      });
    });

    it('a replay answers the kept status and body with Idempotent-Replayed: true', async () => {
      const account = await createTestAccount();
      const { id: documentId } = await uploadDocument(account.request);
      const first = await account.request('POST', '/api/v1/signatures', { json: requestBody(documentId), headers: withKey('order-1') });
      expect(first.status).to.equal(201);
      expect(first.headers.get('idempotent-replayed')).to.equal(null);
      const again = await account.request('POST', '/api/v1/signatures', { json: requestBody(documentId), headers: withKey('order-1') });
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect(await requestsOf(account)).to.have.length(1);
      // Without a key, the same body is a new request.
      const unkeyed = await account.request('POST', '/api/v1/signatures', { json: requestBody(documentId) });
      expect(unkeyed.status).to.equal(201);
      expect(unkeyed.body.id).not.to.equal(first.body.id);
    });

    it('422 idempotency_key_reused for the key with another body, or another path', async () => {
      const account = await createTestAccount();
      const { id: documentId } = await uploadDocument(account.request);
      const first = await account.request('POST', '/api/v1/signatures', { json: requestBody(documentId), headers: withKey('k') });
      expect(first.status).to.equal(201);
      const otherBody = await account.request('POST', '/api/v1/signatures', { json: requestBody(documentId, 'Another title'), headers: withKey('k') });
      expect(otherBody.status).to.equal(422);
      expect(otherBody.body.error).to.equal('idempotency_key_reused');
      const otherPath = await account.request('POST', '/api/v1/documents', { json: { fileName: 'x.pdf', fileSize: 1 }, headers: withKey('k') });
      expect(otherPath.status).to.equal(422);
      expect(otherPath.body.error).to.equal('idempotency_key_reused');
      expect(await requestsOf(account)).to.have.length(1);
      expect(await documentsOf(account)).to.have.length(1);
    });

    it('the same key in two accounts is two keys', async () => {
      const [one, two] = [await createTestAccount(), await createTestAccount()];
      const answers = [];
      for (const account of [one, two]) {
        const { id: documentId } = await uploadDocument(account.request);
        answers.push(await account.request('POST', '/api/v1/signatures', { json: requestBody(documentId), headers: withKey('shared-key') }));
      }
      for (const answer of answers) {
        expect(answer.status).to.equal(201);
        expect(answer.headers.get('idempotent-replayed')).to.equal(null);
      }
      expect(answers[0].body.id).not.to.equal(answers[1].body.id);
    });

    it('a 4xx is kept and replayed', async () => {
      const account = await createTestAccount();
      const send = () => account.request('POST', '/api/v1/signatures', { json: { title: 'No signers' }, headers: withKey('bad-one') });
      const first = await send();
      expect(first.status).to.equal(400);
      const again = await send();
      expect(again.status).to.equal(400);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
    });

    it('a 403 for a key without the scope is not kept: the same Idempotency-Key then runs under a key that has it', async () => {
      const account = await createTestAccount();
      const created = await account.request('POST', '/api/v1/api-keys', { json: { name: 'reader', scopes: ['documents:read'] } });
      expect(created.status).to.equal(201);
      const reader = client(account.system.url!, created.body.secret);
      const json = { fileName: 'scoped.pdf', fileSize: 10 };
      const refused = await reader('POST', '/api/v1/documents', { json, headers: withKey('scoped') });
      expect(refused.status).to.equal(403);
      expect(refused.body.error).to.equal('insufficient_scope');
      const allowed = await account.request('POST', '/api/v1/documents', { json, headers: withKey('scoped') });
      expect(allowed.status).to.equal(201);
      expect(allowed.headers.get('idempotent-replayed')).to.equal(null);
    });

    it('400 for a key that is empty, too long or not printable ASCII', async () => {
      const account = await createTestAccount();
      for (const key of ['', 'x'.repeat(256), 'clé']) {
        const response = await account.request('POST', '/api/v1/signatures', { json: {}, headers: withKey(key) });
        expect(response.status, key).to.equal(400);
        expect(response.body.error).to.equal('validation_error');
        expect(response.body.details).to.deep.equal(['Idempotency-Key must be 1 to 255 printable ASCII characters']);
      }
    });

    it('409 idempotency_in_progress with Retry-After while the first holds the key; taken over once its lease ran out', async () => {
      const account = await createTestAccount();
      const { id: documentId } = await uploadDocument(account.request);
      await heldKey(account, 'held', { leaseMs: IDEMPOTENCY_LEASE_MS });
      const send = (request: Request) => request('POST', '/api/v1/signatures', { json: requestBody(documentId), headers: withKey('held') });
      const held = await send(account.request);
      expect(held.status).to.equal(409);
      expect(held.body.error).to.equal('idempotency_in_progress');
      expect(held.headers.get('retry-after')).to.equal('1');
      const later = await startApp({}, { deps: { now: () => new Date(Date.now() + IDEMPOTENCY_LEASE_MS + 1000) } });
      try {
        const taken = await send(client(later.url, account.apiKey));
        expect(taken.status, JSON.stringify(taken.body)).to.equal(201);
      } finally {
        await later.close();
      }
    });

    it('a key taken over from a holder that died after reading its body takes that body only: another is 422, and the key stays free for it', async () => {
      const account = await createTestAccount();
      const { id: documentId } = await uploadDocument(account.request);
      const body = requestBody(documentId);
      await heldKey(account, 'died', { leaseMs: -1000, bodyHash: createHash('sha256').update(JSON.stringify(body)).digest('hex') });
      for (const title of ['Another agreement', 'Yet another']) {
        const other = await account.request('POST', '/api/v1/signatures', { json: requestBody(documentId, title), headers: withKey('died') });
        expect(other.status, JSON.stringify(other.body)).to.equal(422);
        expect(other.body.error).to.equal('idempotency_key_reused');
      }
      expect(await requestsOf(account)).to.have.length(0);
      const taken = await account.request('POST', '/api/v1/signatures', { json: body, headers: withKey('died') });
      expect(taken.status, JSON.stringify(taken.body)).to.equal(201);
      const replayed = await account.request('POST', '/api/v1/signatures', { json: body, headers: withKey('died') });
      expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
      expect(replayed.body.id).to.equal(taken.body.id);
      expect(await requestsOf(account)).to.have.length(1);
    });

    it('a key is free again 24 hours after it was claimed', async () => {
      const account = await createTestAccount();
      const { id: documentId } = await uploadDocument(account.request);
      const first = await account.request('POST', '/api/v1/signatures', { json: requestBody(documentId), headers: withKey('daily') });
      expect(first.status).to.equal(201);
      const tomorrow = await startApp({}, { deps: { now: () => new Date(Date.now() + IDEMPOTENCY_KEY_TTL_MS + 1000) } });
      try {
        const request = client(tomorrow.url, account.apiKey);
        const other = await request('POST', '/api/v1/signatures', { json: requestBody(documentId, 'Next day'), headers: withKey('daily') });
        expect(other.status, JSON.stringify(other.body)).to.equal(201);
        expect(other.headers.get('idempotent-replayed')).to.equal(null);
        expect(other.body.id).not.to.equal(first.body.id);
        expect(await account.db('idempotency_keys').where({ account_id: account.account.id })).to.have.length(1);
      } finally {
        await tomorrow.close();
      }
    });
  });

  describe('POST /api/v1/webhooks', () => {
    it('keeps its answer encrypted: the secret shown once is replayed, and is not in the database in clear', async () => {
      const account = await createTestAccount();
      const send = () => account.request('POST', '/api/v1/webhooks', { json: { url: 'http://127.0.0.1:9/hook', events: ['*'] }, headers: withKey('hook') });
      const first = await send();
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      const again = await send();
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.body.secret).to.equal(first.body.secret);
      const [kept] = await account.db('idempotency_keys').where({ account_id: account.account.id });
      expect(kept.response_body).not.to.contain(first.body.secret);
      expect(kept.response_body).not.to.contain(first.body.id);
    });
  });

  describe('POST /api/v1/documents', () => {
    it('10 identical multipart uploads at once make one document and answer the same body', async () => {
      const account = await createTestAccount();
      const pdf = await makePdf(['Contract']);
      const send = () => account.request('POST', '/api/v1/documents', { body: upload(pdf), headers: withKey('upload-1') });
      const answers = await Promise.all(Array.from({ length: 10 }, () => untilSettled(send)));
      for (const answer of answers) {
        expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
        expect(answer.body).to.deep.equal(answers[0].body);
      }
      expect(await documentsOf(account)).to.have.length(1);
    });

    it('422 for an upload of another file under the same key', async () => {
      const account = await createTestAccount();
      const first = await account.request('POST', '/api/v1/documents', { body: upload(await makePdf(['One'])), headers: withKey('upload-2') });
      expect(first.status).to.equal(201);
      const other = await account.request('POST', '/api/v1/documents', { body: upload(await makePdf(['Two'])), headers: withKey('upload-2') });
      expect(other.status).to.equal(422);
      expect(other.body.error).to.equal('idempotency_key_reused');
      expect(await documentsOf(account)).to.have.length(1);
    });

    it('a 5xx is not kept: the key is released and a retry runs the request', async () => {
      const account = await createTestAccount();
      const failing: PdfInspector = {
        inspect: async () => {
          throw new Error('the PDF checker crashed');
        },
        inspectSignatures: async () => {
          throw new Error('the PDF checker crashed');
        },
        jobsStarted: 0,
        close: async () => {},
      };
      const broken = await startApp({}, { deps: { pdf: failing } });
      const pdf = await makePdf(['Contract']);
      try {
        const failed = await client(broken.url, account.apiKey)('POST', '/api/v1/documents', { body: upload(pdf), headers: withKey('retry-me') });
        expect(failed.status).to.equal(500);
      } finally {
        await broken.close();
      }
      expect(await account.db('idempotency_keys').where({ account_id: account.account.id })).to.have.length(0);
      const retried = await account.request('POST', '/api/v1/documents', { body: upload(pdf), headers: withKey('retry-me') });
      expect(retried.status).to.equal(201);
      expect(retried.headers.get('idempotent-replayed')).to.equal(null);
      expect(await documentsOf(account)).to.have.length(1);
    });
  });
});

/** A TCP proxy in front of Temporal that can hold: bytes sent while it holds are never forwarded. */
async function holdingProxy(target: string) {
  const [host, port] = target.split(':');
  let holding = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const upstream = net.connect(Number(port), host);
    for (const socket of [inbound, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.on('data', (chunk) => holding || upstream.write(chunk));
    upstream.on('data', (chunk) => holding || inbound.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hold: () => void (holding = true),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Idempotency-Key: a replay after the api was killed (SIGKILL) between its commit and its answer', function () {
  this.timeout(180_000);
  useSharedSystem();

  it('takes the key over once its lease ran out, finds the request the first try made, and starts one workflow', async () => {
    const system = await sharedSystem();
    const account = await createTestAccount();
    const { id: documentId } = await uploadDocument(account.request);
    // The api in a process of its own, reaching Temporal through a proxy that will hold its workflow start.
    const temporal = await holdingProxy(process.env.TEMPORAL_ADDRESS!);
    const [port] = await startOnFreePorts(1, async (ports) => ports);
    const env: Record<string, string | undefined> = {
      ...process.env,
      NODE_ENV: 'test',
      SIGNET_PROCESSES: 'api',
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: 'off',
      LOG_LEVEL: 'error',
      DATA_DIR: system.config.dataDir, // PGlite's socket, and the signing-token secret
      TEMPORAL_TASK_QUEUE: system.config.TEMPORAL_TASK_QUEUE,
      TEMPORAL_ADDRESS: temporal.address,
    };
    if (databaseKind === 'pglite') delete env.DATABASE_URL;
    const api = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/main.ts'], { cwd: path.resolve(__dirname, '../..'), env, stdio: 'ignore' });
    const exited = new Promise((resolve) => api.once('exit', resolve));
    const killed = client(`http://127.0.0.1:${port}`, account.apiKey);
    try {
      await eventually(async () => expect((await killed('GET', '/api/v1/signatures')).status).to.equal(200), 60_000);
      temporal.hold();
      const body = requestBody(documentId);
      void killed('POST', '/api/v1/signatures', { json: body, headers: withKey('crash-1') }).catch(() => undefined);
      // Committed; its workflow start is held at the proxy, its answer not sent: now the process dies.
      const [made] = await eventually(async () => {
        const rows = await requestsOf(account);
        expect(rows).to.have.length(1);
        return rows;
      });
      api.kill('SIGKILL');
      await exited;
      expect(made.workflow_started_at).to.equal(null);
      const [held] = await account.db('idempotency_keys').where({ account_id: account.account.id });
      expect(held.status).to.equal(null);
      expect(held.body_hash, 'the body read, its hash recorded before the commit').to.match(/^[0-9a-f]{64}$/);

      // A fresh api, once the dead one's lease has run out.
      const fresh = await startApp({}, { deps: { now: () => new Date(Date.now() + IDEMPOTENCY_LEASE_MS + 1000) } });
      try {
        const request = client(fresh.url, account.apiKey);
        // Another body under the key is refused, as it would be once answered, and leaves the key to the first's retry.
        const other = await request('POST', '/api/v1/signatures', { json: requestBody(documentId, 'Another agreement'), headers: withKey('crash-1') });
        expect(other.status, JSON.stringify(other.body)).to.equal(422);
        expect(other.body.error).to.equal('idempotency_key_reused');
        const [still] = await account.db('idempotency_keys').where({ account_id: account.account.id });
        expect([still.status, still.body_hash]).to.deep.equal([null, held.body_hash]);
        const retried = await request('POST', '/api/v1/signatures', { json: body, headers: withKey('crash-1') });
        expect(retried.status, JSON.stringify(retried.body)).to.equal(201);
        expect(retried.body.id).to.equal(made.id);
        const replayed = await request('POST', '/api/v1/signatures', { json: body, headers: withKey('crash-1') });
        expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
        expect(replayed.body).to.deep.equal(retried.body);
      } finally {
        await fresh.close();
      }
      expect((await requestsOf(account)).map((row) => row.id)).to.deep.equal([made.id]);
      const workflows = account.system.client.workflow;
      expect((await workflows.getHandle(made.id).describe()).status.name).to.equal('RUNNING');
      await eventually(async () => {
        let runs = 0;
        for await (const _ of workflows.list({ query: `WorkflowId = '${made.id}'` })) runs += 1;
        expect(runs).to.equal(1);
      });
    } finally {
      api.kill('SIGKILL');
      await temporal.close();
    }
  });
});
