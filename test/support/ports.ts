import net from 'node:net';

/** A port the OS says is free now; another process may still take it before the caller binds it. */
function freePort() {
  return new Promise<number>((resolve, reject) => {
    const server = net
      .createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
  });
}

/**
 * Starts something that must be told its ports (a server that cannot listen on port 0 and say which it
 * got): on `count` ports free a moment ago, and again on others if a port was taken in between.
 */
export async function startOnFreePorts<T>(count: number, start: (ports: number[]) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports = await Promise.all(Array.from({ length: count }, freePort));
    try {
      return await start(ports);
    } catch (error) {
      if (attempt === attempts || !/address already in use|EADDRINUSE/i.test(String(error))) throw error;
    }
  }
}
