import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { configSchema } from '../../src/config';

const root = path.resolve(__dirname, '../..');
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true });

describe('docker-compose.yml', () => {
  it('has every service the code needs', () => {
    expect(compose.services).to.include.all.keys('postgres', 'elasticsearch', 'temporal', 'temporal-ui', 'api', 'worker');
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
    // Separate containers, separate DATA_DIRs: the webhook secret key must be given to both.
    expect(compose.services.api.environment.WEBHOOK_SECRET_KEY).to.be.a('string').and.equal(compose.services.worker.environment.WEBHOOK_SECRET_KEY);
  });

  it('every configuration variable is documented in the README', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    for (const variable of Object.keys(configSchema.shape)) expect(readme, variable).to.contain(`\`${variable}\``);
  });
});
