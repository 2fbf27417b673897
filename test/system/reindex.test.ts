import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createElasticsearchClient } from '../../src/search/elasticsearch';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');

// `npx signet reindex` on the PostgreSQL server of the test services, into indices of its own.
describe('npx signet reindex', function () {
  this.timeout(180_000);
  const prefix = `signet-test-reindex-${process.pid}-`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-reindex-'));

  before(function () {
    if (!process.env.DATABASE_URL || !process.env.ELASTICSEARCH_URL) throw new Error('DATABASE_URL and ELASTICSEARCH_URL must be set: run with npm test.');
  });

  after(async () => {
    const client = createElasticsearchClient(process.env.ELASTICSEARCH_URL!);
    await client.indices.delete({ index: `${prefix}*` }).catch(() => undefined);
    await client.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const reindex = async () => {
    const { stdout, stderr } = await run('npx', ['signet', 'reindex'], {
      cwd: root,
      env: { ...process.env, ELASTICSEARCH_INDEX_PREFIX: prefix, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      timeout: 150_000,
    });
    return { result: JSON.parse(stdout), stderr };
  };

  it('builds every index (documents, signing requests, templates) from PostgreSQL, then builds new ones and flips the aliases to them', async () => {
    const client = createElasticsearchClient(process.env.ELASTICSEARCH_URL!);
    try {
      const first = await reindex();
      expect(first.result.rebuilt.map((entry: { type: string }) => entry.type)).to.deep.equal(['document', 'signing_request', 'template']);
      const firstIndex = first.result.rebuilt[0].index;
      const aliased = await client.indices.getAlias({ name: `${prefix}documents` });
      expect(Object.keys(aliased)).to.deep.equal([firstIndex]);
      const { count } = await client.count({ index: `${prefix}documents` });
      expect(count).to.equal(first.result.rebuilt[0].documents);

      const second = await reindex();
      const secondIndex = second.result.rebuilt[0].index;
      expect(secondIndex).to.not.equal(firstIndex);
      expect(Object.keys(await client.indices.getAlias({ name: `${prefix}documents` }))).to.deep.equal([secondIndex]);
      expect(await client.indices.exists({ index: firstIndex })).to.equal(false);
    } finally {
      await client.close();
    }
  });
});
