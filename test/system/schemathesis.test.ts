import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createAccount } from '../../src/accounts/service';
import { createApiKey } from '../../src/apiKeys/service';
import { createLogger } from '../../src/logger';
import { startSystem, type RunningSystem } from '../../src/system';
import { stopLeavingNothing, testConfig } from '../support/system';

const root = path.resolve(__dirname, '../..');
const schemathesis = path.join(root, '.cache/schemathesis/bin/schemathesis');

// Fixed, so a failure found once is found again; bounded, so the run takes two to three minutes on two cores.
const SEED = '20261123';
const MAX_EXAMPLES = '30';

function run(command: string, args: string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject).on('close', (code) => resolve({ code, output }));
  });
}

// The whole service (api and worker, on a PGlite database of its own, the shared Temporal and
// Elasticsearch) fuzzed from its own OpenAPI document by schemathesis (scripts/provision.sh schemathesis):
// every check, every phase, the stateful one following the document's links.
describe('the OpenAPI document tells the truth: schemathesis, every check, against the running service', function () {
  this.timeout(420_000);
  const prefix = `signet-test-schemathesis-${process.pid}-`;
  let system: RunningSystem;
  let apiKey: string;

  before(async () => {
    if (!fs.existsSync(schemathesis)) throw new Error(`no ${schemathesis}: run bash scripts/provision.sh schemathesis (npm test does)`);
    const config = testConfig({
      ELASTICSEARCH_INDEX_PREFIX: prefix,
      TEMPORAL_TASK_QUEUE: `signet-test-schemathesis-${process.pid}`,
      // Thousands of requests in minutes: the hourly limits would answer 429 to most of them.
      RATE_LIMIT_MULTIPLIER: '1000',
      // As deployed: https only, no private host allowed, retries hours apart.
      WEBHOOK_ALLOW_PRIVATE_HOSTS: '',
      WEBHOOK_RETRY_SCALE: '1',
    });
    system = await startSystem({ ...config, DATABASE_URL: undefined }, createLogger('silent'));
    // Webhook URLs come from the fuzzer, and nothing may be sent off this machine: every receiver is unreachable.
    system.webhooks.poster.post = async () => ({
      statusCode: null,
      latencyMs: 0,
      responseBody: null,
      error: 'ENETUNREACH: no receiver is reachable from this test',
      retryAfterMs: null,
    });
    const db = system.database.knex;
    const account = await createAccount(db, { email: 'fuzzer@example.com', plan: 'business' });
    apiKey = (await createApiKey(db, account.id)).secret;
  });

  after(() => stopLeavingNothing(system));

  it('finds no failure: every status, header and body as documented, schema-valid requests accepted, invalid ones refused', async () => {
    const started = Date.now();
    const { code, output } = await run(
      schemathesis,
      [
        '--config-file',
        'test/support/schemathesis.toml',
        'run',
        `${system.url}/api/v1/openapi.json`,
        '--checks',
        'all',
        '--seed',
        SEED,
        '--max-examples',
        MAX_EXAMPLES,
        '--header',
        `Authorization: Bearer ${apiKey}`,
        '--request-timeout',
        '30',
        '--no-color',
      ],
      { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    );
    const summary = output.trim().split('\n').at(-1);
    console.log(`      schemathesis: ${summary} (${Math.round((Date.now() - started) / 1000)} s)`);
    expect(code, output).to.equal(0);
  });
});
