import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { findTemporalCli } from '../../src/temporal/devServer';
import { createLogger } from '../../src/logger';
import { eventually } from './signing';

const quiet = createLogger('silent');

const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/**
 * The Temporal server itself (not the dev server), on PostgreSQL, set up the way docker-compose.yml's
 * temporalio/auto-setup image does it: the SQL tool creates and migrates the two databases, the server
 * starts, and the `default` namespace is registered. Nothing else is registered: no search attribute.
 * Binaries come from `scripts/provision.sh temporal-server` (built with Go at the compose file's version).
 */
export async function startTemporalServer(options: { databaseUrl: string; name: string; basePort: number; dir: string }) {
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

  const port = (offset: number) => options.basePort + offset;
  const address = `127.0.0.1:${port(0)}`;
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
      frontend: { rpc: { ...service(port(0), port(10)).rpc, httpPort: port(1) } },
      history: service(port(2), port(12)),
      matching: service(port(3), port(13)),
      worker: service(port(4), port(14)),
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
  fs.mkdirSync(path.join(options.dir, 'config'), { recursive: true });
  // JSON is YAML: the server reads config/<env>.yaml.
  fs.writeFileSync(path.join(options.dir, 'config/development.yaml'), JSON.stringify(config, null, 2));
  fs.copyFileSync(path.join(root, 'temporal-dynamicconfig.yaml'), path.join(options.dir, 'config/dynamicconfig.yaml')); // as docker-compose.yml mounts it
  const log = fs.openSync(path.join(options.dir, 'temporal-server.log'), 'a');
  const child = spawn(server, ['--root', options.dir, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'], {
    stdio: ['ignore', log, log],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const connection = await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`the Temporal server exited: see ${options.dir}/temporal-server.log`);
    const connected = await Connection.connect({ address, connectTimeout: 1000 });
    await connected.workflowService.getSystemInfo({});
    return connected;
  }, 120_000);
  // As auto-setup does, with the Temporal CLI. On a loaded machine the CLI may retry a create that went
  // through the first time, and then hear that it exists: that is the state we want.
  await run(findTemporalCli(undefined, quiet), ['operator', 'namespace', 'create', '--namespace', 'default', '--retention', '1d', '--address', address]).catch(
    (error: Error & { stderr?: string }) => {
      if (!/already exists/.test(error.stderr ?? error.message)) throw error;
    },
  );
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
