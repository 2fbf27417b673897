import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { allCodeBlocks, isRun, quickstartBlock, runLanguages, scriptFileOf, shownLanguages, where } from '../support/codeBlocks';
import { startBanner } from '../../src/startBanner';

// Every code block of the README and docs/ is run by test/system/quickstart.test.ts as printed (twice), or says
// it is not to be run on its own (`no-run`), or is in a language that is shown, not run. These checks
// need no server: that every block is one or the other, and that a block that waits says so and stops.
const root = path.resolve(__dirname, '../..');
const blocks = allCodeBlocks();

describe('the code blocks of the README and docs/', () => {
  it('each is in a language that is run or one that is shown, and only a runnable one says no-run', () => {
    for (const block of blocks) {
      expect([...runLanguages, ...shownLanguages], `${where(block)}: name its language`).to.include(block.language);
      if (block.flags.includes('no-run')) expect(runLanguages, `${where(block)}: no-run on a block never run`).to.include(block.language);
      expect(
        block.flags.filter((flag) => flag !== 'no-run'),
        where(block),
      ).to.deep.equal([]);
    }
  });

  it('the runnable ones are there to run: the quickstart, the SDK, the CLI and verification', () => {
    const run = blocks.filter(isRun).map((block) => `${block.file} ${block.section}`);
    expect(run).to.include.members([
      'README.md Quickstart',
      'README.md The API at a glance',
      'README.md The CLI',
      'docs/sdk.md The SDK',
      'docs/sdk.md The CLI that sends',
    ]);
  });

  it('a TypeScript or JavaScript block that runs names, first, the file a reader saves it as and how to run it', () => {
    for (const block of blocks.filter((block) => isRun(block) && (block.language === 'ts' || block.language === 'js'))) {
      const file = scriptFileOf(block);
      expect(file, `${where(block)}: start with // <name>.mts: …`).to.be.a('string');
      expect(block.code.split('\n')[0], where(block)).to.contain(`npx tsx ${file}`);
    }
  });

  it('a block that waits says what for, and stops waiting within a bound it names', () => {
    for (const block of blocks.filter(isRun)) {
      const label = where(block);
      expect(block.code, `${label}: a loop with no bound`).not.to.match(/^\s*(until|while)\b/m);
      if (block.code.includes('waitForOutcome(')) {
        expect(block.code, label).to.match(/timeoutMs: [\d_ *]+/);
        expect(block.code, `${label}: say what it waits for`).to.match(/console\.log\(`[^`]*[Ww]aiting, at most/);
      }
      for (const line of block.code.split('\n').filter((line) => / --wait\b/.test(line))) expect(line, label).to.match(/--timeout \d+/);
      for (const loop of block.code.match(/^for \w+ in \$\(seq \d+\)/gm) ?? []) expect(block.code, label).to.contain(`at most ${/\d+/.exec(loop)![0]} s`);
    }
  });

  it('the quickstart, the first block of its section, stops at the first step that fails, saying so', () => {
    const { code } = quickstartBlock();
    expect(code).to.contain('set -eo pipefail');
    expect(code).to.contain("trap 'echo");
  });

  it('the banner in the README is the one npm start prints', () => {
    const shown = blocks.find((block) => block.file === 'README.md' && block.language === 'text' && block.code.startsWith('Signet is running.'));
    expect(shown, 'the README shows the banner').to.not.equal(undefined);
    const printed = startBanner(
      { url: 'http://localhost:3000', temporalUiUrl: 'http://127.0.0.1:8233', metricsUrl: 'http://127.0.0.1:9464/metrics', embeddedDatabase: true },
      { NODE_ENV: 'development', dataDir: '/path/to/data' },
    );
    expect(printed.trim()).to.equal(shown!.code.trim());
  });

  it('the README names every address of the banner, and what pdfsig says of the development seal', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    for (const text of ['/app', '/dev/mail', '/verify', 'TEMPORAL_CLI_PATH', 'Go module proxy', 'Certificate issuer is unknown.', 'SEAL_P12_PATH']) {
      expect(readme).to.contain(text);
    }
  });
});

describe('the start banner', () => {
  const facts = { url: 'https://sign.example.com', metricsUrl: undefined, embeddedDatabase: false };

  it('lists the console, the outbox and the verification page outside production', () => {
    const banner = startBanner(facts, { NODE_ENV: 'development', dataDir: '/data' });
    expect(banner).to.contain('Console      https://sign.example.com/app');
    expect(banner).to.contain('Outbox       https://sign.example.com/dev/mail');
    expect(banner).to.contain('Verify       https://sign.example.com/verify');
    expect(banner).to.contain('Temporal UI  the UI of your Temporal cluster (TEMPORAL_ADDRESS)');
    expect(banner).to.contain('Database     DATABASE_URL');
    expect(banner).to.contain('Metrics      off (METRICS_PORT=off)');
  });

  it('names no outbox in production, nor where a mail transport is configured', () => {
    expect(startBanner(facts, { NODE_ENV: 'production', dataDir: '/data' })).not.to.contain('/dev/mail');
    expect(startBanner(facts, { NODE_ENV: 'development', dataDir: '/data', SMTP_URL: 'smtp://mail:25' })).to.contain('Mail         SMTP (SMTP_URL)');
    expect(startBanner(facts, { NODE_ENV: 'development', dataDir: '/data', SENDGRID_API_KEY: 'SG.x' })).not.to.contain('/dev/mail');
  });
});
