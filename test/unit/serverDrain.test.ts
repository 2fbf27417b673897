import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { BUSY_REQUESTS, listen } from '../../src/api/server';
import { eventually } from '../support/signing';

// Stopping the api closes the database and the PDF pools right after its server: a handler still running
// then (its client gone, or not) would fail half-way. close() waits for handlers, not only connections.

/** A request sent on a connection of its own, its answer left to the caller. */
function sendRequest(server: { address: () => AddressInfo | string | null }) {
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return socket;
}

async function serverWithHeldHandler() {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let started: () => void = () => {};
  const start = new Promise<void>((resolve) => (started = resolve));
  let noteGone: () => void = () => {};
  const gone = new Promise<void>((resolve) => (noteGone = resolve)); // the server has seen the connection close
  const steps: string[] = [];
  const server = await listen(0, '127.0.0.1', async (req, res) => {
    req.socket.once('close', noteGone);
    started();
    await held; // a database transaction, a PDF check
    steps.push('handler done');
    res.end('ok');
  });
  const socket = sendRequest(server);
  await start;
  return { server, socket, release, steps, gone };
}

describe('the api server: close() waits for the requests under way', () => {
  it('waits for a handler whose client has gone, then returns', async () => {
    const { server, socket, release, steps, gone } = await serverWithHeldHandler();
    socket.destroy();
    await gone;
    const closing = server.close(10_000).then(() => steps.push('closed'));
    // With no connection left, the HTTP server closes within this turn of the event loop: close() would
    // have returned by the next one, were it not waiting for the handler.
    await new Promise(setImmediate);
    expect(steps, 'closed while the handler still ran').to.deep.equal([]);
    release();
    await closing;
    expect(steps).to.deep.equal(['handler done', 'closed']);
  });

  it('answers a request under way before it closes', async () => {
    const { server, socket, release } = await serverWithHeldHandler();
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    const closing = server.close(10_000);
    release();
    await closing;
    expect(answer).to.match(/^HTTP\/1\.1 200 OK/);
    expect(answer).to.match(/ok$/);
  });

  it('returns after drainMs when a handler never ends, and closes its connection', async () => {
    const { server, socket } = await serverWithHeldHandler();
    const gone = new Promise((resolve) => socket.once('close', resolve));
    await server.close(300);
    await gone;
  });

  it('counts the handlers under way (the text of uploads gives way to them), a handler whose client has gone among them', async () => {
    const { server, socket, release, gone } = await serverWithHeldHandler();
    expect(server.underWay()).to.equal(1);
    socket.destroy();
    await gone;
    expect(server.underWay(), 'its client gone, the handler still runs').to.equal(1);
    release();
    await eventually(async () => expect(server.underWay()).to.equal(0), 2_000);
    await server.close(1_000);
  });

  it('is busy (background work gives way) only with BUSY_REQUESTS under way on a busy event loop', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const server = await listen(0, '127.0.0.1', async (_req, res) => {
      started++;
      await held;
      res.end('ok');
    });
    const hold = (count: number) => Array.from({ length: count }, () => sendRequest(server));
    /** Keeps the event loop busy for `ms`, letting timers run between slices; `busy()` as it ends. */
    const busyLoopFor = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const end = performance.now() + ms;
        const slice = () => {
          const sliceEnd = performance.now() + 10;
          while (performance.now() < sliceEnd); // work on the event loop, as a burst's handlers do
          if (performance.now() < end) setImmediate(slice);
          else resolve(server.busy());
        };
        slice();
      });
    const sockets = hold(BUSY_REQUESTS - 1);
    try {
      await eventually(async () => expect(started).to.equal(BUSY_REQUESTS - 1), 2_000);
      expect(await busyLoopFor(300), `${BUSY_REQUESTS - 1} under way, the loop busy`).to.equal(false);
      sockets.push(...hold(1));
      await eventually(async () => expect(started).to.equal(BUSY_REQUESTS), 2_000);
      // The loop's business is sampled now and then: once a sample finds it idle, busy() says so.
      await eventually(
        async () => expect(server.busy(), `${BUSY_REQUESTS} under way, the loop idle: a steady rate's requests slowed by background work`).to.equal(false),
        2_000,
      );
      expect(await busyLoopFor(300), `${BUSY_REQUESTS} under way, the loop busy: a burst`).to.equal(true);
      await eventually(async () => expect(server.busy(), 'the loop idle again').to.equal(false), 2_000);
    } finally {
      release();
      for (const socket of sockets) socket.destroy();
      await server.close(1_000);
    }
  });
});
