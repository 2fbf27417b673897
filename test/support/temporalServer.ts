import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { findTemporalCli } from '../../src/temporal/devServer';
import { createLogger } from '../../src/logger';
import { startOnFreePorts } from './ports';
import { eventually } from './signing';

const quiet = createLogger('silent');

const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * The Temporal server itself (not the dev server), on PostgreSQL, set up the way docker-compose.yml's
 * temporalio/auto-setup image does it: the SQL tool creates and migrates the two databases, the server
 * starts, and the `default` namespace is registered. Nothing else is registered: no search attribute.
 * Binaries come from `scripts/provision.sh temporal-server` (built with Go at the compose file's version).
 * It listens on ports free a moment before it starts (under 32768), and on others if one was taken in between.
 */
export async function startTemporalServer(options: { databaseUrl: string; name: string; dir: string }) {
  const version = fs.readFileSync(path.join(root, 'scripts/provision.sh'), 'utf8').match(/^TEMPORAL_SERVER_VERSION=(\S+)/m)![1];
  const binaries = path.join(root, '.cache', `temporal-server-${version}`);
  const server = path.join(binaries, 'temporal-server');
  if (!fs.existsSync(server)) throw new Error(`no ${server}: run bash scripts/provision.sh temporal-server (npm test does)`);

  const pg = new URL(options.databaseUrl);
  const databases = { default: `${options.name}`, visibility: `${options.name}_visibility` };
  const sqlEnv = {
    ...process.env,
    SQL_PLUGIN: 'postgres12',
    SQL_HOST: pg.hostname,
    SQL_PORT: pg.port || '5432',
    SQL_USER: decodeURIComponent(pg.username),
    SQL_PASSWORD: decodeURIComponent(pg.password),
  };
  const sqlTool = (database: string, ...args: string[]) => run(path.join(binaries, 'temporal-sql-tool'), ['--db', database, ...args], { env: sqlEnv });
  for (const [kind, database] of Object.entries(databases)) {
    await sqlTool(database, 'create-database');
    await sqlTool(database, 'setup-schema', '-v', '0.0');
    await sqlTool(database, 'update-schema', '--schema-name', `postgresql/v12/${kind === 'default' ? 'temporal' : 'visibility'}`);
  }

  const store = (database: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName: database,
      connectAddr: `${pg.hostname}:${pg.port || 5432}`,
      connectProtocol: 'tcp',
      user: decodeURIComponent(pg.username),
      password: decodeURIComponent(pg.password),
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const logPath = path.join(options.dir, 'temporal-server.log');
  fs.mkdirSync(path.join(options.dir, 'config'), { recursive: true });
  fs.copyFileSync(path.join(root, 'temporal-dynamicconfig.yaml'), path.join(options.dir, 'config/dynamicconfig.yaml')); // as docker-compose.yml mounts it

  /** The server on these nine ports (each service's gRPC and membership ports, the frontend's HTTP port), once it answers. */
  async function launch([frontend, frontendHttp, history, matching, worker, ...membership]: number[]) {
    const address = `127.0.0.1:${frontend}`;
    const service = (grpcPort: number, membershipPort: number) => ({ rpc: { grpcPort, membershipPort, bindOnLocalHost: true } });
    const config = {
      log: { stdout: true, level: 'warn' },
      persistence: {
        defaultStore: 'default',
        visibilityStore: 'visibility',
        numHistoryShards: 4,
        datastores: { default: store(databases.default, 20), visibility: store(databases.visibility, 4) },
      },
      global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
      services: {
        frontend: { rpc: { ...service(frontend, membership[0]).rpc, httpPort: frontendHttp } },
        history: service(history, membership[1]),
        matching: service(matching, membership[2]),
        worker: service(worker, membership[3]),
      },
      clusterMetadata: {
        enableGlobalNamespace: false,
        failoverVersionIncrement: 10,
        masterClusterName: 'active',
        currentClusterName: 'active',
        clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: address } },
      },
      dcRedirectionPolicy: { policy: 'noop' },
      dynamicConfigClient: { filepath: path.join(options.dir, 'config/dynamicconfig.yaml'), pollInterval: '10s' },
    };
    // JSON is YAML: the server reads config/<env>.yaml.
    fs.writeFileSync(path.join(options.dir, 'config/development.yaml'), JSON.stringify(config, null, 2));
    const log = fs.openSync(logPath, 'w');
    const child = spawn(server, ['--root', options.dir, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'], {
      stdio: ['ignore', log, log],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const gone = () => child.exitCode !== null || child.signalCode !== null;
    const failure = () => new Error(`the Temporal server exited (${logPath}):\n${fs.readFileSync(logPath, 'utf8').slice(-3000)}`);
    // Polled until it answers; a server that exits (a port taken since it was chosen) fails at once, with its log.
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (gone()) {
        fs.closeSync(log);
        throw failure();
      }
      const connected = await Connection.connect({ address, connectTimeout: 1000 }).catch(() => undefined);
      const answered = await connected?.workflowService.getSystemInfo({}).then(
        () => true,
        () => false,
      );
      if (connected && answered && !gone()) return { address, connection: connected, child, exited, log };
      await connected?.close();
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        await exited;
        fs.closeSync(log);
        throw new Error(`the Temporal server did not answer within 120 s (${logPath})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  // Temporal keeps each service's membership port in a smallint column: every port under 32768.
  const { address, connection, child, exited, log } = await startOnFreePorts(9, launch, { below: 32_768 });

  // As auto-setup does, with the Temporal CLI. On a loaded machine the CLI may retry a create that went
  // through the first time, and then hear that it exists: that is the state we want.
  await run(await findTemporalCli(undefined, quiet), [
    'operator',
    'namespace',
    'create',
    '--namespace',
    'default',
    '--retention',
    '1d',
    '--address',
    address,
  ]).catch((error: Error & { stderr?: string }) => {
    if (!/already exists/.test(error.stderr ?? error.message)) throw error;
  });
  await eventually(() => connection.workflowService.describeNamespace({ namespace: 'default' }), 60_000);

  return {
    address,
    connection,
    databases: Object.values(databases),
    async stop() {
      await connection.close();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      fs.closeSync(log);
    },
  };
}
