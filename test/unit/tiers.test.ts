import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';

// The tiers of docs/architecture.md are enforced by eslint.config.mjs: an import that runs back up a tier
// fails `npm run lint`. These probes are linted as if they sat in the tree.
const root = path.resolve(__dirname, '../..');

describe('the lint rule that keeps imports going down the tiers', function () {
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: root });
  const tierRules = ['no-restricted-imports', 'tiers/import-calls'];
  const restricted = async (file: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
    return result.messages.filter((message) => tierRules.includes(message.ruleId ?? '')).map((message) => message.line);
  };

  it('refuses a resource module importing the worker side or an entry point', async () => {
    const lines = await restricted(
      'src/documents/probe.ts',
      [
        "import { createWorker } from '../worker/worker';",
        "import { createActivities } from '../../activities';",
        "import { createApp } from '../app';",
        "import { consoleRoutes } from '../console/routes';",
        "import { webhookWorkflow } from '../../workflows/webhook';",
        'export const all = [createWorker, createActivities, createApp, consoleRoutes, webhookWorkflow];',
      ].join('\n'),
    );
    expect(lines).to.deep.equal([1, 2, 3, 4, 5]);
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

  it('checks .mjs and .cjs files, and imports that name the file with its extension', async () => {
    expect(
      await restricted(
        'src/pdf/probe.mjs',
        ["import { createApp } from '../app.ts';", "import { serveWorker } from '../worker/pool.mjs';", 'export const all = [createApp, serveWorker];'].join(
          '\n',
        ),
      ),
    ).to.deep.equal([1, 2]);
    expect(await restricted('src/pdf/probe.cjs', "const { createApp } = require('../app.js');\nmodule.exports = { createApp };")).to.deep.equal([1]);
  });

  it('refuses require() and import() calls that run back up', async () => {
    expect(
      await restricted(
        'src/documents/probe.ts',
        [
          "const { createWorker } = require('../worker/worker');",
          "export const loadApp = () => import('../app');",
          "export const all = [createWorker, tsx.require('../console/routes', __filename)];",
        ].join('\n'),
      ),
    ).to.deep.equal([1, 2, 3]);
    expect(await restricted('src/db/probe.ts', "export const load = () => import('../documents/service');")).to.deep.equal([1]);
    expect(await restricted('workflows/probe.ts', "export const load = () => import('node:fs');")).to.deep.equal([1]);
  });

  it('refuses a resource importing one that comes after it in the resource order', async () => {
    const lines = await restricted(
      'src/documents/probe.ts',
      [
        "import { createSigningRequest } from '../signingRequests/create';",
        "import type { Template } from '../templates/store';",
        "const { describeUsage } = require('../dashboard/usage');",
        'export const all = [createSigningRequest, describeUsage];',
        'export type All = Template;',
      ].join('\n'),
    );
    expect(lines).to.deep.equal([1, 2, 3]);
    expect(await restricted('src/accounts/probe.ts', "import { describeUsage } from '../dashboard/usage';\nexport const all = [describeUsage];")).to.deep.equal(
      [1],
    );
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
      await restricted(
        'src/webhooks/probe.ts',
        [
          "import { wakeSignal } from '../../workflows/definitions';",
          "import type { webhookWorkflow } from '../../workflows/webhook';",
          'export const all = [wakeSignal];',
          'export type All = typeof webhookWorkflow;',
        ].join('\n'),
      ),
    ).to.deep.equal([]);
    expect(
      await restricted('workflows/probe.ts', "import { requestStatuses } from '../src/domain/signingRequests';\nexport const all = [requestStatuses];"),
    ).to.deep.equal([]);
    expect(await restricted('src/system.ts', "import { createWorker } from './worker/worker';\nexport const all = [createWorker];")).to.deep.equal([]);
  });

  it('allows a resource importing those before it, by import, require() or import()', async () => {
    expect(
      await restricted(
        'src/signingRequests/probe.ts',
        [
          "import { findTemplate } from '../templates/store';",
          "import type { Account } from '../accounts/service';",
          "const { createDocumentFromCopy } = require('../documents/service');",
          "export const loadSeal = () => import('../pdf/sealThread');",
          "const { PDFDocument } = require('pdf-lib');",
          'export const all = [findTemplate, createDocumentFromCopy, PDFDocument];',
          'export type All = Account;',
        ].join('\n'),
      ),
    ).to.deep.equal([]);
    expect(await restricted('src/pdf/probe.mjs', "import { readText } from './readText.mjs';\nexport const all = [readText];")).to.deep.equal([]);
  });
});
