import path from 'node:path';
import { expect } from 'chai';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../..');

describe('the lint rule that keeps workflows deterministic', function () {
  this.timeout(60_000);
  const lint = async (code: string) => {
    const [result] = await new ESLint({ cwd: root }).lintText(code, { filePath: path.join(root, 'workflows/probe.ts') });
    return result.messages.map((message) => message.message);
  };

  it('refuses Node built-ins, I/O libraries, runtime imports from src/ and timers', async () => {
    const messages = await lint(
      [
        "import fs from 'node:fs';",
        "import crypto from 'crypto';",
        "import knex from 'knex';",
        "import { createApp } from '../src/app';",
        'export const all = [fs, crypto, knex, createApp];',
        'setTimeout(() => 1, 1);',
      ].join('\n'),
    );
    expect(messages.filter((m) => m.includes('Node built-ins'))).to.have.length(2);
    expect(messages.some((m) => m.includes("'knex'"))).to.equal(true);
    expect(messages.some((m) => m.includes('Import only types from outside workflows/'))).to.equal(true);
    expect(messages.some((m) => m.includes('setTimeout'))).to.equal(true);
  });

  it('allows the workflow SDK, type imports and its own modules', async () => {
    const messages = await lint(
      [
        "import { proxyActivities } from '@temporalio/workflow';",
        "import type { Activities } from '../activities';",
        "import { something } from './shared';",
        'export const ok: [typeof proxyActivities, Activities | undefined, unknown] = [proxyActivities, undefined, something];',
      ].join('\n'),
    );
    expect(messages).to.deep.equal([]);
  });
});
