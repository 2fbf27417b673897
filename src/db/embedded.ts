import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

// The embedded default: PGlite, served on a Unix socket inside DATA_DIR so that every client
// (the server's pool, the CLI while the server runs) talks the ordinary PostgreSQL protocol.
// pglite-socket queues queries and, while one client is inside a transaction, runs only that
// client's queries, so transactions from different connections never interleave.

export interface EmbeddedDatabase {
  /** Directory holding the socket; pass as `host` to pg. */
  socketDir: string;
  /** True when this process opened PGlite (and must close it); false when another process serves it. */
  owned: boolean;
  close(): Promise<void>;
}

export function socketPath(dataDir: string) {
  return path.join(dataDir, '.s.PGSQL.5432');
}

function canConnect(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const connection = net.connect(socket);
    connection.once('connect', () => {
      connection.end();
      resolve(true);
    });
    connection.once('error', () => resolve(false));
  });
}

export async function openEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  fs.mkdirSync(dataDir, { recursive: true });
  const socket = socketPath(dataDir);
  if (fs.existsSync(socket)) {
    if (await canConnect(socket)) return { socketDir: dataDir, owned: false, close: async () => {} };
    fs.rmSync(socket); // left behind by a process that died
  }
  const db = await PGlite.create(path.join(dataDir, 'pg'));
  const server = new PGLiteSocketServer({ db, path: socket, maxConnections: 64 });
  await server.start();
  return {
    socketDir: dataDir,
    owned: true,
    async close() {
      await server.stop();
      await db.close();
      fs.rmSync(socket, { force: true });
    },
  };
}
