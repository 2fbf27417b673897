import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { parse } from 'yaml';
import { configSchema } from '../../src/config';

const root = path.resolve(__dirname, '../..');
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });

describe('docker-compose.yml', () => {
  it('is valid Compose: `docker-compose config` (a real implementation, no engine needed) accepts it', () => {
    // Throws with Compose's own message (e.g. an unescaped `$` in a command) when it refuses the file.
    const resolved = parse(
      execFileSync('docker-compose', ['-f', 'docker-compose.yml', 'config'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    expect(resolved.services.temporal.healthcheck.test.join(' ')).to.contain('$(hostname -i)');
    expect(resolved.services.worker.environment.SIGNET_PROCESSES).to.equal('worker');
  });

  it('has every service the code needs', () => {
    expect(compose.services).to.include.all.keys('postgres', 'elasticsearch', 'temporal', 'temporal-ui', 'api', 'worker', 'prometheus', 'grafana');
    expect(compose.services.prometheus.image).to.match(/^prom\/prometheus:v3\.\d+\.\d+$/);
    expect(compose.services.grafana.image).to.match(/^grafana\/grafana:1[12]\.\d+\.\d+$/);
    expect(compose.services.elasticsearch.image).to.match(/elasticsearch:8\./);
    expect(compose.services.temporal.image).to.match(/^temporalio\/auto-setup/);
    expect(compose.services.temporal.environment.DB).to.match(/^postgres/);
  });

  it('wires api and worker with variables the configuration schema knows, pointing at the compose services', () => {
    const known = Object.keys(configSchema.shape);
    for (const name of ['api', 'worker']) {
      const env = compose.services[name].environment;
      for (const variable of Object.keys(env)) expect(known, `${name}: ${variable}`).to.include(variable);
      expect(env.DATABASE_URL).to.contain('@postgres:5432/');
      expect(env.TEMPORAL_ADDRESS).to.equal('temporal:7233');
      expect(env.ELASTICSEARCH_URL).to.equal('http://elasticsearch:9200');
      expect(configSchema.safeParse(env).success, `${name} environment parses`).to.equal(true);
    }
    expect(compose.services.api.environment.SIGNET_PROCESSES).to.equal('api');
    expect(compose.services.worker.environment.SIGNET_PROCESSES).to.equal('worker');
    // Separate containers, separate DATA_DIRs: what production requires must be given, the same, to both.
    for (const variable of ['WEBHOOK_SECRET_KEY', 'SIGNING_TOKEN_SECRET', 'SEAL_P12_PATH', 'PUBLIC_URL']) {
      expect(compose.services.api.environment[variable], variable).to.be.a('string').and.equal(compose.services.worker.environment[variable]);
    }
    expect(compose.services.api.environment.NODE_ENV).to.equal('production');
  });

  it('deploys the Temporal server version the topology test runs', () => {
    const provision = fs.readFileSync(path.join(root, 'scripts/provision.sh'), 'utf8');
    const version = /^TEMPORAL_SERVER_VERSION=v(\S+)/m.exec(provision)![1];
    expect(compose.services.temporal.image).to.equal(`temporalio/auto-setup:${version}`);
  });
});

describe('prometheus.yml and the Grafana dashboard', () => {
  const prometheus = parse(fs.readFileSync(path.join(root, 'prometheus.yml'), 'utf8'));
  const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'grafana/dashboards/signet.json'), 'utf8'));
  const operations = fs.readFileSync(path.join(root, 'docs/operations.md'), 'utf8');

  it('is valid Prometheus configuration: `promtool check config` accepts it', () => {
    execFileSync('promtool', ['check', 'config', 'prometheus.yml'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  });

  it('scrapes every api and worker container on the METRICS_PORT they listen on, on all interfaces', () => {
    for (const name of ['api', 'worker']) {
      const env = compose.services[name].environment;
      expect(env.METRICS_HOST, name).to.equal('0.0.0.0');
      const job = prometheus.scrape_configs.find((candidate: { job_name: string }) => candidate.job_name === `signet-${name}`);
      expect(job.dns_sd_configs, name).to.deep.equal([{ names: [name], type: 'A', port: env.METRICS_PORT }]);
    }
  });

  it('mounts the configuration read-only, and Grafana gets the datasource its dashboard names', () => {
    const mounts = [...compose.services.prometheus.volumes, ...compose.services.grafana.volumes].filter((volume: string) => volume.startsWith('./'));
    expect(mounts).to.have.length(3);
    for (const mount of mounts) expect(mount, mount).to.match(/:ro$/);
    const datasources = parse(fs.readFileSync(path.join(root, 'grafana/provisioning/datasources/prometheus.yml'), 'utf8')).datasources;
    const uids = new Set(
      dashboard.panels.flatMap((panel: { targets: { datasource: { uid: string } }[] }) => panel.targets.map((target) => target.datasource.uid)),
    );
    expect([...uids]).to.deep.equal([datasources[0].uid]);
  });

  it("every metric on the dashboard exists: ours in src/metrics.ts, the default process metrics, the Temporal SDK's as docs/operations.md lists them", () => {
    const ours = [...fs.readFileSync(path.join(root, 'src/metrics.ts'), 'utf8').matchAll(/name: '(signet_\w+)'/g)].map((match) => match[1]);
    const defaults = new Registry();
    collectDefaultMetrics({ register: defaults, prefix: 'signet_' });
    const known = [...ours, ...defaults.getMetricsAsArray().map((metric) => metric.name)];
    const expressions = dashboard.panels.flatMap((panel: { targets: { expr: string }[] }) => panel.targets.map((target) => target.expr));
    const used = new Set(expressions.flatMap((expression: string) => expression.match(/\b(signet|temporal)_\w+/g) ?? []));
    expect(used.size).to.be.greaterThan(5);
    for (const name of used as Set<string>) {
      const metric = name.replace(/_(bucket|count|sum)$/, '');
      if (metric.startsWith('signet_')) expect(known, name).to.include(metric);
      else expect(operations, name).to.contain(`\`${metric}\``);
    }
    for (const name of ours) expect(operations, `${name} is documented`).to.contain(`\`${name}\``);
  });
});

describe('Dockerfile', () => {
  const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const ignored = fs
    .readFileSync(path.join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim());

  it('builds for production: no dev dependencies, a non-root user, a health check', () => {
    expect(dockerfile).to.match(/npm ci --omit=dev/);
    expect(dockerfile).to.match(/^ENV NODE_ENV=production$/m);
    expect(dockerfile).to.match(/^USER node$/m);
    expect(dockerfile).to.match(/^HEALTHCHECK .*scripts\/healthcheck\.js/m);
    expect(fs.existsSync(path.join(root, 'scripts/healthcheck.js'))).to.equal(true);
  });

  it('runs on Node 24, the LTS CI tests it on (scripts/node24.sh), while package.json still allows Node 20', () => {
    expect(dockerfile).to.match(/^FROM node:24-bookworm-slim$/m);
    const provisioned = /^VERSION=(\d+)\.\d+\.\d+$/m.exec(fs.readFileSync(path.join(root, 'scripts/node24.sh'), 'utf8'));
    expect(provisioned?.[1]).to.equal('24');
    const { engines } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    expect(engines.node).to.match(/^>=20(\.|$)/);
  });

  it('runs the build as `npm start` runs the sources: the same node flags and environment, in scripts/start-production.sh', () => {
    const start = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start as string).split(' ');
    const node = start.indexOf('node');
    expect(JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1])).to.deep.equal(['sh', 'scripts/start-production.sh']);
    const script = fs.readFileSync(path.join(root, 'scripts/start-production.sh'), 'utf8');
    expect(script).to.match(new RegExp(`^exec ${start.slice(node, start.indexOf('--require')).join(' ')} dist/src/main.js$`, 'm'));
    for (const variable of start.slice(0, node)) expect(script).to.match(new RegExp(`^export ${variable}$`, 'm'));
  });

  it('keeps local state out of the image', () => {
    expect(ignored).to.include.members(['node_modules', '.cache', 'data', '.git', 'secrets']);
  });
});

describe('configuration', () => {
  it('every configuration variable is documented in the README', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    for (const variable of Object.keys(configSchema.shape)) expect(readme, variable).to.contain(`\`${variable}\``);
  });
});
