import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** How long stopping waits for the requests under way before it closes their connections. */
export const DRAIN_MS = 10_000;

/**
 * The api is taking a burst (busy()) while it has this many requests under way and its event loop was
 * busy this share of the last LOOP_SAMPLE_MS. Requests alone also pile up at a steady rate the machine
 * can keep, once background work slows them: uploads at 80% of what 2 cores can take with their text
 * had 8 under way often, and the text that gave way to them fell behind (docs/benchmarks.md).
 */
export const BUSY_REQUESTS = 8;
const BUSY_LOOP = 0.9;
const LOOP_SAMPLE_MS = 100;

/**
 * The HTTP server of the api, its handler set later (`handle`), and a `close` that waits for the requests
 * under way: not only for their connections (http.Server.close does that), but for their handlers too. A
 * client may hang up while its request still runs; closing the database and the PDF pools under that
 * handler would fail it half-way. Past `drainMs` the connections left are closed and `close` returns.
 */
export async function listen(port: number, host: string, handler: http.RequestListener) {
  let handle = handler;
  const running = new Set<Promise<unknown>>();
  const server = http.createServer((req, res) => {
    // Koa's handler answers a promise; another listener answers nothing, and is done when it returns.
    const handled = Promise.resolve(handle(req, res) as unknown).catch(() => undefined);
    running.add(handled);
    void handled.finally(() => running.delete(handled));
  });
  await new Promise<void>((resolve, reject) => server.listen(port, host, resolve).once('error', reject));
  let loop = performance.eventLoopUtilization();
  let loopBusy = 0; // the share of the last LOOP_SAMPLE_MS the event loop was busy
  const sampler = setInterval(() => {
    const now = performance.eventLoopUtilization();
    loopBusy = performance.eventLoopUtilization(now, loop).utilization;
    loop = now;
  }, LOOP_SAMPLE_MS).unref();
  return {
    address: () => server.address(),
    handle: (next: http.RequestListener) => void (handle = next),
    /** Requests whose handlers are under way now. */
    underWay: () => running.size,
    /** Taking a burst: BUSY_REQUESTS under way, on an event loop BUSY_LOOP busy. Background work gives way to it. */
    busy: () => running.size >= BUSY_REQUESTS && loopBusy >= BUSY_LOOP,
    async close(drainMs = DRAIN_MS) {
      clearInterval(sampler);
      const closed = new Promise((resolve) => server.close(resolve));
      // A connection kept alive after its answer would hold close() for its keep-alive timeout: each is
      // closed once idle, while an answer still streaming (a PDF download) goes on to its end.
      const idle = setInterval(() => server.closeIdleConnections(), 100);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise((resolve) => (timer = setTimeout(resolve, drainMs)));
      await Promise.race([Promise.all([closed, ...running]), late]);
      clearInterval(idle);
      clearTimeout(timer);
      server.closeAllConnections();
    },
  };
}
