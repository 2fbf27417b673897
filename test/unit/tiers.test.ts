import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';

// The tiers of docs/architecture.md are enforced by eslint.config.mjs: an import that runs back up a tier
// fails `npm run lint`. These probes are linted as if they sat in the tree.
const root = path.resolve(__dirname, '../..');

describe('the lint rule that keeps imports going down the tiers', function () {
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: root });
  const restricted = async (file: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
    return result.messages.filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.line);
  };

  it('refuses a resource module importing the worker side or an entry point', async () => {
    const lines = await restricted(
      'src/documents/probe.ts',
      [
        "import { createWorker } from '../worker/worker';",
        "import { createActivities } from '../../activities';",
        "import { createApp } from '../app';",
        "import { consoleRoutes } from '../console/routes';",
        'export const all = [createWorker, createActivities, createApp, consoleRoutes];',
      ].join('\n'),
    );
    expect(lines).to.deep.equal([1, 2, 3, 4]);
  });

  it('refuses infrastructure importing a resource, and the domain importing anything outside it', async () => {
    expect(await restricted('src/api/probe.ts', "import { createDocument } from '../documents/service';\nexport const all = [createDocument];")).to.deep.equal([
      1,
    ]);
    expect(await restricted('src/db/probe.ts', "import { createApp } from '../app';\nexport const all = [createApp];")).to.deep.equal([1]);
    expect(
      await restricted('src/domain/probe.ts', "import { newId } from '../ids';\nimport knex from 'knex';\nexport const all = [newId, knex];"),
    ).to.deep.equal([1, 2]);
  });

  it('refuses the worker side importing an entry point', async () => {
    expect(await restricted('activities/probe.ts', "import { startSystem } from '../src/system';\nexport const all = [startSystem];")).to.deep.equal([1]);
  });

  it('allows imports that go down or sideways', async () => {
    expect(
      await restricted(
        'src/documents/probe.ts',
        [
          "import { plans } from '../domain/plans';",
          "import { newId } from '../ids';",
          "import { createEventLog } from '../events/service';",
          'export const all = [plans, newId, createEventLog];',
        ].join('\n'),
      ),
    ).to.deep.equal([]);
    expect(
      await restricted('activities/probe.ts', "import { createDocument } from '../src/documents/service';\nexport const all = [createDocument];"),
    ).to.deep.equal([]);
    expect(
      await restricted('src/temporal/probe.ts', "import { signUpdate } from '../../workflows/definitions';\nexport const all = [signUpdate];"),
    ).to.deep.equal([]);
    expect(
      await restricted('workflows/probe.ts', "import { requestStatuses } from '../src/domain/signingRequests';\nexport const all = [requestStatuses];"),
    ).to.deep.equal([]);
    expect(await restricted('src/system.ts', "import { createWorker } from './worker/worker';\nexport const all = [createWorker];")).to.deep.equal([]);
  });
});
