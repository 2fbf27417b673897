import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@elastic/elasticsearch';
import { expect } from 'chai';
import type { Db } from '../../src/db';
import { createLogger } from '../../src/logger';
import { startApp } from '../support/app';
import { consoleClient, newEmail, PASSWORD, signedUp } from '../support/consoleClient';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { createSigningRequest, eventually, tokenOf } from '../support/signing';
import { createTestAccount, sharedSystem } from '../support/system';

/** The paths of the links in the e-mails sent to `email` (the outbox), newest first. */
async function linksMailedTo(db: Db, email: string) {
  const rows: { text: string }[] = await db('mail_outbox').whereLike('to_address', `%${email}%`).orderBy('id', 'desc').select('text');
  return rows.flatMap((row) => [...row.text.matchAll(/https?:\/\/[^\s<>"]+/g)].map(([url]) => new URL(url).pathname));
}

describe('structured logs', () => {
  it('are JSON lines carrying the request id, and never the API key or PDF bytes', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const api = await startApp({}, { logger });
    try {
      const { apiKey } = await createTestAccount();
      const request = client(api.url, apiKey);
      const pdf = await makePdf(['a secret contract']);
      const base64 = pdf.toString('base64');
      const created = await request('POST', '/api/v1/documents', { json: { fileName: 'log.pdf', fileSize: pdf.length, content: base64 } });
      expect(created.status).to.equal(201);
      await request('GET', '/api/v1/documents/doc_01jd8x3c6hf1z8k3q2v5n7m9pt');

      const entries = lines.map((line) => JSON.parse(line));
      const requests = entries.filter((entry) => entry.msg === 'request');
      expect(requests).to.have.length(2);
      expect(requests[0]).to.include({ method: 'POST', path: '/api/v1/documents', status: 201 });
      expect(requests[0].requestId).to.equal(created.headers.get('x-request-id'));
      const all = lines.join('\n');
      expect(all).not.to.contain(apiKey);
      expect(all).not.to.contain(apiKey.slice(8));
      expect(all).not.to.contain(base64.slice(0, 40));
    } finally {
      void api.close();
    }
  });
});

describe('logged errors', () => {
  it('show type, message and stack, never the request an Elasticsearch error carries', async () => {
    // A search server that takes requests and never answers: the client's TimeoutError holds the bulk it sent.
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const es = new Client({ node: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, requestTimeout: 200, maxRetries: 0 });
    const text = 'the confidential clause of a contract';
    try {
      const error = await es.bulk({ operations: [{ index: { _index: 'signet-documents', _id: 'doc_1' } }, { text }] }).catch((caught: unknown) => caught);
      expect(error).to.be.instanceOf(Error);
      expect(JSON.stringify(error)).to.contain(text); // what pino's default would have written
      logger.warn({ err: error }, 'ours');
      logger.warn({ error }, 'as the Temporal SDK logs a failed activity');
      logger.warn({ err: new Error('outer', { cause: error }) }, 'wrapped');
    } finally {
      await es.close();
      silent.closeAllConnections();
      silent.close();
    }
    const entries = lines.map((line) => JSON.parse(line));
    expect(entries).to.have.length(3);
    expect(entries[0].err).to.include({ type: 'TimeoutError', message: 'Request timed out' });
    expect(entries[0].err.stack).to.contain('TimeoutError');
    expect(entries[1].error).to.include({ type: 'TimeoutError', message: 'Request timed out' });
    expect(entries[2].err.cause).to.include({ type: 'TimeoutError' });
    expect(lines.join('\n')).not.to.contain('confidential');
  });
});

describe('structured logs of a whole flow', () => {
  it('hold no signing token, API key, reset or e-mailed token, or session cookie, though every request is logged', async function () {
    this.timeout(90_000);
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const system = await sharedSystem();
    const db = system.database.knex;
    const api = await startApp({}, { logger });
    const baseUrl = api.url;
    const secrets: string[] = [];
    try {
      // The API, with a key.
      const { apiKey } = await createTestAccount();
      secrets.push(apiKey);
      const request = client(baseUrl, apiKey);
      const signerEmail = newEmail();
      const { signingRequest } = await createSigningRequest(request, { signers: [{ name: 'Ada Lovelace', email: signerEmail }] });
      expect((await request('GET', `/api/v1/signatures/${signingRequest.id}`)).status).to.equal(200);
      const link = await request('POST', `/api/v1/signatures/${signingRequest.id}/signers/${signingRequest.signers[0].id}/link`);
      const embedded = tokenOf(link.body.url);
      // The e-mailed link (sent by the worker) and the embedded one, opened and used as a signer would.
      const [mailed] = await eventually(async () => {
        const paths = (await linksMailedTo(db, signerEmail)).filter((path) => path.startsWith('/sign/'));
        expect(paths).to.have.length.greaterThan(0);
        return paths;
      });
      secrets.push(embedded, tokenOf(`http://x${mailed}`));
      const signer = client(baseUrl);
      for (const path of [
        mailed,
        `/sign/${embedded}`,
        `/sign/${embedded}/request`,
        `/sign/${embedded}/document`,
        `/sign/${embedded}/nothing`,
        `/SIGN/${embedded}/request`,
        `/sign/${embedded}/../request`,
      ]) {
        await signer('GET', path);
      }
      const signed = await signer('POST', `/sign/${embedded}/sign`, { json: { consent: true, signature: { type: 'typed', value: 'Ada Lovelace' } } });
      expect(signed.status, JSON.stringify(signed.body)).to.equal(200);

      // The console: sign up (opening whatever link that mails), make a key, then reset the password by e-mail.
      const { browser, email } = await signedUp(baseUrl);
      for (const path of await linksMailedTo(db, email)) await browser.request('GET', path);
      const created = await browser.submit('/app/settings/api-keys', '/app/settings/api-keys', { name: 'ci' });
      const consoleKey = /id="new-key"[^>]*value="([^"]+)"/.exec(created.text)?.[1];
      expect(consoleKey, created.text).to.be.a('string');
      secrets.push(consoleKey!, ...browser.cookies.values());
      await browser.post('/app/logout');
      const stranger = consoleClient(baseUrl);
      await stranger.submit('/app/password/forgot', '/app/password/forgot', { email });
      const reset = await eventually(async () => {
        const [path] = (await linksMailedTo(db, email)).filter((candidate) => candidate.startsWith('/app/password/reset/'));
        expect(path).to.be.a('string');
        return path;
      });
      const changed = await stranger.submit(reset, reset, { password: `${PASSWORD} again` });
      expect(changed.status, changed.text).to.be.below(400);
      secrets.push(...(await linksMailedTo(db, email)).map((path) => path.split('/').pop()!).filter((last) => last.length >= 32));
      secrets.push(...stranger.cookies.values());

      const requests = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
      expect(requests.length).to.be.greaterThan(15);
      expect(requests.map((entry) => entry.path)).to.include.members([`/sign/[redacted]/request`, `/app/password/reset/[redacted]`]);
      const all = lines.join('\n');
      for (const secret of new Set(secrets.filter((value) => value.length >= 20))) {
        expect(all).not.to.contain(secret);
        expect(all).not.to.contain(secret.slice(-20));
      }
    } finally {
      void api.close();
    }
  });
});
