import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';

// A seal that cannot be made is seen at once: a worker whose seal key does not open, or whose level its
// configuration cannot reach, stops at start saying why, before it takes any work. (A seal that waits
// for a service, a timestamp authority that is down, shows in `progress`: test/system/sealArchive.test.ts.)
const root = path.resolve(__dirname, '../..');

async function startWorker(env: Record<string, string>) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-seal-refused-'));
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH, DATA_DIR: dataDir, SIGNET_PROCESSES: 'worker', PORT: '0', METRICS_PORT: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { code, output };
}

describe('a worker whose seal cannot be made', function () {
  this.timeout(60_000);

  it('refuses to start when the seal key does not open, and says so', async () => {
    const broken = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signet-broken-seal-')), 'seal.p12');
    fs.writeFileSync(broken, 'not a PKCS#12 file');
    const { code, output } = await startWorker({ SEAL_P12_PATH: broken });
    expect(code).to.equal(1);
    expect(output).to.contain('Invalid seal configuration').and.contain('the seal key does not open');
  });

  it('refuses a timestamp level without a timestamp authority, naming the setting', async () => {
    const { code, output } = await startWorker({ SEAL_LEVEL: 'B-LTA' });
    expect(code).to.equal(1);
    expect(output).to.contain('SEAL_LEVEL=B-LTA needs a timestamp authority: set SEAL_TSA_URLS');
  });
});
