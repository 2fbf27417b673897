import net from 'node:net';

const listening = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net
      .createServer()
      .once('error', reject)
      .listen(port, '127.0.0.1', () => resolve(server));
  });

/**
 * `count` distinct ports the OS says are free now (each held until all are found); another process may
 * still take one before the caller binds it. `below`: ports under that number, outside the OS's ephemeral
 * range, tried at random from 10000, for a server that cannot store a larger one.
 */
async function freePorts(count: number, below?: number): Promise<number[]> {
  const held: net.Server[] = [];
  try {
    while (held.length < count) {
      const candidate = below ? 10_000 + Math.floor(Math.random() * (below - 10_000)) : 0;
      const server = await listening(candidate).catch((error: NodeJS.ErrnoException) => {
        if (below && error.code === 'EADDRINUSE') return undefined; // taken: another at random
        throw error;
      });
      if (server) held.push(server);
    }
    return held.map((server) => (server.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/**
 * Starts something that must be told its ports (a server that cannot listen on port 0 and say which it
 * got): on `count` ports free a moment ago, and again on others if a port was taken in between.
 */
export async function startOnFreePorts<T>(
  count: number,
  start: (ports: number[]) => Promise<T>,
  { attempts = 5, below }: { attempts?: number; below?: number } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports = await freePorts(count, below);
    try {
      return await start(ports);
    } catch (error) {
      if (attempt === attempts || !/address already in use|EADDRINUSE/i.test(String(error))) throw error;
    }
  }
}
