import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import Koa, { type Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { jsonBody, jsonOrMultipartBody, readingWhileConnected, withPdfBody } from '../../src/api/middleware/body';

// A client that sends its whole request and hangs up while the request waits (for its account's quota, an
// upload slot) before its body is read: the reader must fail, not wait forever holding what the request holds.

const boundary = 'xGoneBoundary';
const readers: { name: string; contentType: string; body: string; read: Middleware }[] = [
  {
    name: 'a multipart upload',
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7 ...\r\n--${boundary}--\r\n`,
    read: jsonOrMultipartBody(1024 * 1024, 'file', undefined),
  },
  {
    name: 'JSON where an upload may come',
    contentType: 'application/json',
    body: '{"fileName":"a.pdf"}',
    read: jsonOrMultipartBody(1024 * 1024, 'file', undefined),
  },
  { name: 'JSON', contentType: 'application/json', body: '{"name":"a"}', read: jsonBody() },
  {
    name: 'a form',
    contentType: 'application/x-www-form-urlencoded',
    body: 'name=a',
    read: readingWhileConnected(koaBody({ urlencoded: true, json: false, multipart: false })),
  },
  { name: 'a raw PDF', contentType: 'application/pdf', body: '%PDF-1.7 ...', read: (ctx) => withPdfBody(ctx, 1024 * 1024, undefined, async () => undefined) },
];

describe('a request whose client hangs up before its body is read ends', () => {
  for (const { name, contentType, body, read } of readers) {
    it(`${name}: with request_aborted, not never`, async function () {
      this.timeout(10_000);
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let arrived: (req: http.IncomingMessage) => void = () => {};
      const arrival = new Promise<http.IncomingMessage>((resolve) => (arrived = resolve));
      let ended: (outcome: string) => void = () => {};
      const ending = new Promise<string>((resolve) => (ended = resolve));
      const app = new Koa();
      app.use(async (ctx, next) => {
        try {
          await next();
          ended('answered');
        } catch (error) {
          ended(String((error as { type?: string }).type ?? (error as Error).message));
        }
      });
      app.use(async (ctx, next) => {
        arrived(ctx.req);
        await held; // the quota query, an upload slot
        await next();
      });
      app.use(read);
      app.use((ctx) => (ctx.body = { ok: true }));
      const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.write(`POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        const req = await arrival;
        socket.destroy();
        // The server has seen the connection close (a fixed wait lost this race on a busy machine).
        await new Promise((resolve) => (req.destroyed ? resolve(undefined) : req.once('close', resolve)));
        release();
        const outcome = await Promise.race([ending, new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000))]);
        expect(outcome).to.equal('request.aborted');
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });
  }
});
