import net from 'node:net';
import { expect } from 'chai';
import { startApp } from '../support/app';
import { signedUp } from '../support/consoleClient';
import { client } from '../support/http';
import { makeLargePdf } from '../support/pdfs';
import { eventually } from '../support/signing';
import { createTestAccount } from '../support/system';

// Slow senders against the upload gate, on real sockets: a body over 64 KiB must keep up
// BODY_MIN_BYTES_PER_SECOND over BODY_RATE_WINDOW_MS or end with 408, and accounts holding upload
// slots never take the last one, which is kept for an account holding none.

const ANNOUNCED = 2 * 1024 * 1024;

/** A document of a fresh account, created without its file of `fileSize` bytes, and the account's key. */
async function documentAwaitingFile(url: string, fileSize = ANNOUNCED) {
  const account = await createTestAccount();
  const created = await client(url, account.apiKey)('POST', '/api/v1/documents', { json: { fileName: 'slow.pdf', fileSize } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return { apiKey: account.apiKey, documentId: created.body.id as string };
}

/**
 * An upload announcing 2 MB on a raw socket, sent `bytes` every `everyMs` (a byte every so often: a
 * trickle). `pace` changes that while it runs; `events` records, in order, when it was answered.
 */
async function slowUpload(port: number, head: string, events: string[], name: string, pace = { bytes: 1, everyMs: 100 }, from = '127.0.0.1') {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(`${head}\r\nHost: 127.0.0.1\r\nContent-Length: ${ANNOUNCED}\r\n\r\n%PDF-1.7\n`);
  let answer = '';
  let closed = false;
  socket.on('data', (chunk) => {
    if (!answer) events.push(`${name} answered`);
    answer += chunk;
  });
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  let timer: NodeJS.Timeout;
  const send = () => {
    if (closed || !socket.writable) return;
    socket.write('0'.repeat(pace.bytes));
    timer = setTimeout(send, pace.everyMs);
  };
  timer = setTimeout(send, pace.everyMs);
  socket.on('close', () => clearTimeout(timer));
  return {
    pace,
    answered: () => answer,
    closed: () => closed,
    close: () => socket.destroy(),
  };
}

/** A whole request on a raw socket from the loopback address `from`, and its answer's status line and body. */
async function sendFrom(from: string, port: number, head: string, body: Buffer) {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  socket.on('error', () => undefined);
  socket.write(`${head}\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.write(body);
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk));
  await new Promise((resolve) => socket.once('close', resolve));
  return answer;
}

/** Above the minimum rate of 8 KiB/s, as a slow but legal client sends: 12 KiB/s. */
const legalButSlow = () => ({ bytes: 1228, everyMs: 100 });

const apiUploadHead = ({ apiKey, documentId }: { apiKey: string; documentId: string }) =>
  `PUT /api/v1/documents/${documentId}/file HTTP/1.1\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/pdf`;

function expectEndedUnderTheMinimumRate(upload: { answered(): string; closed(): boolean }) {
  expect(upload.answered()).to.match(/^HTTP\/1\.1 408 /);
  expect(upload.answered()).to.match(/[Cc]onnection: close/);
  expect(upload.answered()).to.include('"error":"request_timeout"').and.include('under the minimum of 8192 bytes/s');
  expect(upload.closed()).to.equal(true);
}

describe('slow uploads', function () {
  this.timeout(60_000);
  const opened: { close(): void }[] = [];
  afterEach(() => {
    for (const one of opened.splice(0)) one.close();
  });

  it('two accounts trickling a byte at a time into both slots end with 408 under the minimum rate, and a third account’s 1.1 MB upload then succeeds', async () => {
    // The reproduction: two slots, a trickle each from two accounts (one through the console),
    // a third account's upload waiting. Before, the trickles kept the idle timer alive for minutes.
    const api = await startApp({ MAX_CONCURRENT_UPLOADS: '2', BODY_RATE_WINDOW_MS: '1000' });
    try {
      const events: string[] = [];
      const first = await documentAwaitingFile(api.url);
      const { browser } = await signedUp(api.url);
      await browser.request('GET', '/app/documents');
      const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      const boundary = 'slowboundary';
      const consoleHead = `POST /app/documents HTTP/1.1\r\nCookie: ${cookie}\r\nX-CSRF-Token: ${browser.csrf}\r\nAccept: application/json\r\nContent-Type: multipart/form-data; boundary=${boundary}`;
      const trickles = [
        await slowUpload(api.port, apiUploadHead(first), events, 'api trickle'),
        await slowUpload(api.port, consoleHead, events, 'console trickle'),
      ];
      opened.push(...trickles);
      await eventually(async () => expect(api.uploads.holding).to.equal(2));

      const pdf = await makeLargePdf(1.1 * 1024 * 1024);
      const third = await documentAwaitingFile(api.url, pdf.length);
      const upload = await client(api.url, third.apiKey)('PUT', `/api/v1/documents/${third.documentId}/file`, {
        body: pdf,
        headers: { 'Content-Type': 'application/pdf' },
      });
      events.push('third account answered');
      expect(upload.status, JSON.stringify(upload.body)).to.equal(200);
      expect(upload.body).to.include({ status: 'ready', fileSize: pdf.length });
      await eventually(async () => trickles.forEach(expectEndedUnderTheMinimumRate));
      // The third upload waited for a slot that a trickle had to give back.
      expect(events.indexOf('third account answered')).to.be.greaterThan(
        Math.min(events.indexOf('api trickle answered'), events.indexOf('console trickle answered')),
      );
    } finally {
      await api.close();
    }
  });

  it('an upload whose client hangs up while it waits for a slot gives the slot back as soon as it has it', async () => {
    const api = await startApp({ MAX_CONCURRENT_UPLOADS: '2' });
    try {
      const a = await documentAwaitingFile(api.url);
      const holder = await slowUpload(api.port, apiUploadHead(a), [], 'a1', { bytes: 4096, everyMs: 50 });
      opened.push(holder);
      await eventually(async () => expect([api.uploads.holding, api.uploads.pending]).to.deep.equal([1, 0]));
      // a's second upload, whole (a small body sent chunked, so of unknown length: gated), waits, as a
      // holds its share; then its client hangs up. Its body arrived before it waited, so no read deadline
      // runs for it: only its reader can end it.
      const boundary = 'xWaitingBoundary';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\r\n--${boundary}--\r\n`;
      const waiting = net.connect(api.port, '127.0.0.1');
      waiting.on('error', () => undefined);
      waiting.write(
        `POST /api/v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${a.apiKey}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      await eventually(async () => expect([api.uploads.holding, api.uploads.pending]).to.deep.equal([1, 1]));
      waiting.destroy();
      holder.close();
      await eventually(async () => expect([api.uploads.holding, api.uploads.pending]).to.deep.equal([0, 0]));
    } finally {
      await api.close();
    }
  });

  it('accounts holding slots leave the last one to an account holding none; once under the minimum rate they end with 408', async () => {
    const api = await startApp({ MAX_CONCURRENT_UPLOADS: '4', BODY_RATE_WINDOW_MS: '1000' });
    try {
      const events: string[] = [];
      // Slow but above the minimum rate (80 KiB/s against 8 KiB/s): two uploads of each of two accounts.
      const steady = () => ({ bytes: 4096, everyMs: 50 });
      const [a, b] = [await documentAwaitingFile(api.url), await documentAwaitingFile(api.url)];
      const holders = [
        await slowUpload(api.port, apiUploadHead(a), events, 'a1', steady()),
        await slowUpload(api.port, apiUploadHead(a), events, 'a2', steady()),
        await slowUpload(api.port, apiUploadHead(b), events, 'b1', steady()),
        await slowUpload(api.port, apiUploadHead(b), events, 'b2', steady()),
      ];
      opened.push(...holders);
      // a holds two of the four slots (its share), b one; b's second waits, as the last slot is kept.
      await eventually(async () => expect([api.uploads.holding, api.uploads.pending]).to.deep.equal([3, 1]));

      const pdf = await makeLargePdf(1.1 * 1024 * 1024);
      const third = await documentAwaitingFile(api.url, pdf.length);
      const upload = await client(api.url, third.apiKey)('PUT', `/api/v1/documents/${third.documentId}/file`, {
        body: pdf,
        headers: { 'Content-Type': 'application/pdf' },
      });
      expect(upload.status, JSON.stringify(upload.body)).to.equal(200);
      expect(events, 'no slow upload was answered before the third account').to.deep.equal([]);

      // Now they trickle: each ends with 408 within a window of being read (b's second once it has a slot).
      for (const one of holders) Object.assign(one.pace, { bytes: 1, everyMs: 100 });
      await eventually(async () => holders.forEach(expectEndedUnderTheMinimumRate));
      expect([api.uploads.holding, api.uploads.pending]).to.deep.equal([0, 0]);
    } finally {
      await api.close();
    }
  });

  describe('pools and client addresses', () => {
    it('a public /verify and an account’s upload, both slow but legal, leave another account’s upload a slot: /verify has a pool of its own', async () => {
      // The reproduction: before, these two held both slots and the third got no answer in 45 s.
      const api = await startApp({ MAX_CONCURRENT_UPLOADS: '2', MAX_CONCURRENT_VERIFY_UPLOADS: '1', MAX_UPLOADS_PER_CLIENT_ADDRESS: '1' });
      try {
        const events: string[] = [];
        const slow = [
          await slowUpload(api.port, 'POST /api/v1/verify HTTP/1.1\r\nContent-Type: application/pdf', events, 'verify', legalButSlow(), '127.0.0.2'),
          await slowUpload(api.port, apiUploadHead(await documentAwaitingFile(api.url)), events, 'upload', legalButSlow(), '127.0.0.3'),
        ];
        opened.push(...slow);
        await eventually(async () => expect([api.verifyUploads.holding, api.uploads.holding]).to.deep.equal([1, 1]));
        const pdf = await makeLargePdf(1.1 * 1024 * 1024);
        const third = await documentAwaitingFile(api.url, pdf.length);
        const answer = await sendFrom('127.0.0.4', api.port, apiUploadHead(third), pdf);
        expect(answer).to.match(/^HTTP\/1\.1 200 /);
        expect(events, 'the slow ones still run').to.deep.equal([]);
      } finally {
        // Its slow senders first: the server closes once its connections have.
        for (const one of opened.splice(0)) one.close();
        await api.close();
      }
    });

    it('one client address holds one slot of each pool, whatever the accounts it sends for', async () => {
      const api = await startApp({ MAX_CONCURRENT_UPLOADS: '4', MAX_CONCURRENT_VERIFY_UPLOADS: '2', MAX_UPLOADS_PER_CLIENT_ADDRESS: '1' });
      try {
        const events: string[] = [];
        const from = '127.0.0.5';
        const uploads = [];
        for (let i = 0; i < 3; i++)
          uploads.push(await slowUpload(api.port, apiUploadHead(await documentAwaitingFile(api.url)), events, `upload ${i}`, legalButSlow(), from));
        for (let i = 0; i < 2; i++)
          uploads.push(
            await slowUpload(api.port, 'POST /api/v1/verify HTTP/1.1\r\nContent-Type: application/pdf', events, `verify ${i}`, legalButSlow(), from),
          );
        opened.push(...uploads);
        await eventually(async () => {
          expect([api.uploads.holding, api.uploads.pending], 'uploads').to.deep.equal([1, 2]);
          expect([api.verifyUploads.holding, api.verifyUploads.pending], 'verify').to.deep.equal([1, 1]);
        });
        // Another address still gets a slot at once.
        const other = await slowUpload(api.port, apiUploadHead(await documentAwaitingFile(api.url)), events, 'other', legalButSlow(), '127.0.0.6');
        opened.push(other);
        await eventually(async () => expect([api.uploads.holding, api.uploads.pending]).to.deep.equal([2, 2]));
      } finally {
        // Its slow senders first: the server closes once its connections have.
        for (const one of opened.splice(0)) one.close();
        await api.close();
      }
    });

    it('a waiter is answered 503 server_busy with Retry-After once it has waited UPLOAD_SLOT_WAIT_MS, and its slot count is left as it was', async () => {
      const api = await startApp({ MAX_CONCURRENT_UPLOADS: '1', UPLOAD_SLOT_WAIT_MS: '1000', MAX_UPLOADS_PER_CLIENT_ADDRESS: '1' });
      try {
        const holder = await slowUpload(api.port, apiUploadHead(await documentAwaitingFile(api.url)), [], 'holder', legalButSlow(), '127.0.0.7');
        opened.push(holder);
        await eventually(async () => expect(api.uploads.holding).to.equal(1));
        const pdf = await makeLargePdf(1.1 * 1024 * 1024);
        const waiter = await documentAwaitingFile(api.url, pdf.length);
        const started = Date.now();
        const answer = await sendFrom('127.0.0.8', api.port, apiUploadHead(waiter), pdf);
        expect(Date.now() - started).to.be.at.least(900);
        expect(answer).to.match(/^HTTP\/1\.1 503 /);
        expect(answer).to.match(/\r\nRetry-After: \d+\r\n/i);
        expect(answer).to.include('"error":"server_busy"');
        expect([api.uploads.holding, api.uploads.pending]).to.deep.equal([1, 0]);
        holder.close();
        await eventually(async () => expect(api.uploads.holding).to.equal(0));
        // Now free, the same upload goes through.
        expect(await sendFrom('127.0.0.8', api.port, apiUploadHead(waiter), pdf)).to.match(/^HTTP\/1\.1 200 /);
      } finally {
        // Its slow senders first: the server closes once its connections have.
        for (const one of opened.splice(0)) one.close();
        await api.close();
      }
    });
  });
});
