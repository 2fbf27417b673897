import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { listen } from '../../src/api/server';

// Stopping the api closes the database and the PDF pools right after its server: a handler still running
// then (its client gone, or not) would fail half-way. close() waits for handlers, not only connections.

async function serverWithHeldHandler() {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let started: () => void = () => {};
  const start = new Promise<void>((resolve) => (started = resolve));
  const steps: string[] = [];
  const server = await listen(0, '127.0.0.1', async (_req, res) => {
    started();
    await held; // a database transaction, a PDF check
    steps.push('handler done');
    res.end('ok');
  });
  const port = (server.address() as AddressInfo).port;
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await start;
  return { server, socket, release, steps };
}

describe('the api server: close() waits for the requests under way', () => {
  it('waits for a handler whose client has gone, then returns', async () => {
    const { server, socket, release, steps } = await serverWithHeldHandler();
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = server.close(10_000).then(() => steps.push('closed'));
    await new Promise((resolve) => setTimeout(resolve, 200));
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
    const { server, socket, release } = await serverWithHeldHandler();
    expect(server.underWay()).to.equal(1);
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.underWay(), 'its client gone, the handler still runs').to.equal(1);
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.underWay()).to.equal(0);
    await server.close(1_000);
  });
});
