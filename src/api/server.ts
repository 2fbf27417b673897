import http from 'node:http';

/** How long stopping waits for the requests under way before it closes their connections. */
export const DRAIN_MS = 10_000;

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
  return {
    address: () => server.address(),
    handle: (next: http.RequestListener) => void (handle = next),
    /** Requests whose handlers are under way now. */
    underWay: () => running.size,
    async close(drainMs = DRAIN_MS) {
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
