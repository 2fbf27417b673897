import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

// The embedded default: PGlite, served on a Unix socket inside DATA_DIR so that every client
// (the server's pool, the CLI while the server runs) talks the ordinary PostgreSQL protocol.
// pglite-socket queues protocol messages from all connections onto PGlite's one session and, while
// one client is inside a transaction, runs only that client's messages (see keepPipelinesWhole).

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
  const server = new PGLiteSocketServer({ db: keepPipelinesWhole(db), path: socket, maxConnections: 64 });
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

// Extended-protocol message types that continue a pipeline which only Sync ends: Parse, Bind,
// Describe, Execute, Close, Flush, and CopyData.
const PIPELINE_MESSAGES = new Set(['P', 'B', 'D', 'E', 'C', 'H', 'd'].map((type) => type.charCodeAt(0)));

/**
 * pglite-socket keeps a client's turn only while PGlite is inside a transaction. Outside one, it
 * would let another client's Parse run between this client's Parse and Bind, replacing the unnamed
 * statement of the shared session ("unnamed prepared statement does not exist"). This view of the
 * database reports "in a transaction" from a pipeline's first message until its Sync, so every
 * query runs whole.
 */
function keepPipelinesWhole(db: PGlite): PGlite {
  let pipelineOpen = false;
  return new Proxy(db, {
    get(target, property) {
      if (property === 'isInTransaction') return () => pipelineOpen || target.isInTransaction();
      if (property === 'execProtocolRawStream') {
        return (message: Uint8Array, options: Parameters<PGlite['execProtocolRawStream']>[1]) => {
          pipelineOpen = PIPELINE_MESSAGES.has(message[0]);
          return target.execProtocolRawStream(message, options);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
