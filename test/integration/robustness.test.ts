import crypto from 'node:crypto';
import net from 'node:net';
import { expect } from 'chai';
import { createUploadSlots } from '../../src/api/middleware/uploadGate';
import { createLogger } from '../../src/logger';
import { startApp } from '../support/app';
import { client } from '../support/http';
import { makeLargePdf } from '../support/pdfs';
import { createTestAccount } from '../support/system';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An app of its own on a random port whose JSON log lines land in `lines`. */
async function startLoggedApp() {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => lines.push(line) });
  const { port, close } = await startApp({}, { logger });
  const entries = () => lines.map((line) => JSON.parse(line) as { level: number; msg: string; status?: number; path?: string });
  return { port, close, entries };
}

/** Sends the head of a request and part of its body on a raw socket, then hangs up. */
async function abortMidBody(port: number, head: string, partialBody: Buffer, waitMs: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(head);
  await new Promise<void>((resolve) => socket.write(partialBody, () => resolve()));
  await sleep(waitMs); // 0: gone before the server reads the body (stream not readable); 100: gone mid-read
  socket.destroy();
}

describe('robustness', function () {
  this.timeout(60_000);

  describe('a client that hangs up mid-body', () => {
    const cases = [
      { name: 'JSON', type: 'application/json', waitMs: 100, body: Buffer.from(`{"fileName":"big.pdf","content":"${'A'.repeat(256 * 1024)}`) },
      { name: 'JSON, gone before the body is read', type: 'application/json', waitMs: 0, body: Buffer.from('{"fileName":"big.pdf"') },
      {
        name: 'multipart',
        waitMs: 100,
        type: 'multipart/form-data; boundary=XyZ',
        body: Buffer.concat([
          Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n'),
          crypto.randomBytes(256 * 1024),
        ]),
      },
    ];
    for (const { name, type, body, waitMs } of cases) {
      it(`(${name}) gets a 4xx, no error-level log line, and the server keeps answering`, async () => {
        const { port, close, entries } = await startLoggedApp();
        try {
          const { apiKey } = await createTestAccount();
          const head = [
            'POST /api/v1/documents HTTP/1.1',
            `Host: 127.0.0.1:${port}`,
            `Authorization: Bearer ${apiKey}`,
            `Content-Type: ${type}`,
            `Content-Length: ${20 * 1024 * 1024}`,
            '',
            '',
          ].join('\r\n');
          await abortMidBody(port, head, body, waitMs);

          const deadline = Date.now() + 5000;
          while (!entries().some((entry) => entry.msg === 'request') && Date.now() < deadline) await sleep(20);
          const aborted = entries().find((entry) => entry.msg === 'request');
          expect(aborted, 'an access log line for the aborted request').to.not.equal(undefined);
          expect(aborted!.status).to.be.within(400, 499);

          const after = await client(`http://127.0.0.1:${port}`, apiKey)('GET', '/api/v1/documents');
          expect(after.status).to.equal(200);
          const errors = entries().filter((entry) => entry.level >= 50);
          expect(errors, JSON.stringify(errors)).to.deep.equal([]);
        } finally {
          void close();
        }
      });
    }
  });

  describe('the upload gate', () => {
    it('lets 6 concurrent 3 MB uploads through, all 201', async () => {
      const { request } = await createTestAccount();
      const pdf = await makeLargePdf(3 * 1024 * 1024);
      expect(pdf.length).to.be.greaterThan(3 * 1024 * 1024);
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) => {
          if (i % 2) return request('POST', '/api/v1/documents', { json: { fileName: `big-${i}.pdf`, fileSize: pdf.length, content: pdf.toString('base64') } });
          const form = new FormData();
          form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), `big-${i}.pdf`);
          return request('POST', '/api/v1/documents', { body: form });
        }),
      );
      expect(responses.map((response) => response.status)).to.deep.equal([201, 201, 201, 201, 201, 201]);
      for (const response of responses) expect(response.body).to.include({ status: 'ready', fileSize: pdf.length });
    });

    it('holds at most N at once and frees a slot on errors too', async () => {
      const semaphore = createUploadSlots(2);
      const holder = (account: string) => ({ account, address: account });
      let running = 0;
      let peak = 0;
      const task = async (i: number) => {
        const release = await semaphore.acquire(holder(`account-${i}`));
        try {
          running++;
          peak = Math.max(peak, running);
          await sleep(10);
          if (i % 3 === 0) throw new Error('boom');
        } finally {
          running--;
          release();
          release(); // releasing twice is harmless
        }
      };
      const results = await Promise.allSettled(Array.from({ length: 9 }, (_, i) => task(i)));
      expect(results.filter((result) => result.status === 'rejected')).to.have.length(3);
      expect(peak).to.equal(2);
      expect(semaphore.pending).to.equal(0);
      const release = await semaphore.acquire(holder('a')); // both slots are free again
      (await semaphore.acquire(holder('b')))();
      release();
    });
  });
});
