import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers its nth request (1-based): a status, optional headers, or a delay first. */
export type Responder = (n: number, received: Received) => { status: number; headers?: Record<string, string>; delayMs?: number; body?: string | Buffer };

/**
 * A webhook receiver on loopback that keeps every request as received (raw body, headers) and answers
 * as `respond` says. `stop()` closes it; `start()` may bring it back on the same port.
 */
export async function startReceiver(respond: Responder = () => ({ status: 200 }), port = 0) {
  const received: Received[] = [];
  const sockets = new Set<import('node:net').Socket>();
  let server: http.Server;
  const listen = (onPort: number) =>
    new Promise<void>((resolve, reject) => {
      server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {
          const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
          received.push(entry);
          const answer = respond(received.length, entry);
          const send = () => res.writeHead(answer.status, answer.headers).end(answer.body ?? 'ok');
          if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
          else send();
        });
      });
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      server.once('error', reject).listen(onPort, '127.0.0.1', () => resolve());
    });
  await listen(port);
  const boundPort = (server!.address() as AddressInfo).port;
  return {
    port: boundPort,
    url: `http://127.0.0.1:${boundPort}/hooks`,
    received,
    /** The envelopes received, one per event id (receivers deduplicate by webhook-id). */
    unique: () => new Map(received.map((entry) => [entry.headers['webhook-id'] as string, JSON.parse(entry.body)])),
    start: () => listen(boundPort),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * A receiver that answers every request 200 with a body that never ends (a repeating pattern, written as
 * fast as the client takes it). `written` counts what it managed to write; `closed` resolves when a
 * client closes a response's connection.
 */
export async function startEndlessReceiver() {
  const pattern = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz'.repeat(2000));
  let resolveClosed: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const state = { written: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.on('close', () => resolveClosed());
    const pump = () => {
      while (!res.destroyed) {
        state.written += pattern.length;
        if (!res.write(pattern)) return void res.once('drain', pump);
      }
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    pattern,
    state,
    closed,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
