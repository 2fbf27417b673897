import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { generatedDir, generateSdk } from '../../scripts/sdk-generate';

/** Every file under `dir`, by its path relative to it, with its text. */
function filesOf(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, full)] = fs.readFileSync(full, 'utf8');
  }
  return files;
}

describe('the SDK’s generated code (sdk/src/generated)', function () {
  this.timeout(120_000);

  it('is what docs/openapi.json generates: after changing the API, run npm run openapi, then npm run sdk:generate', async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'signet-sdk-'));
    try {
      await generateSdk(scratch);
      const fresh = filesOf(scratch);
      const committed = filesOf(generatedDir);
      expect(Object.keys(committed).sort(), 'the generated files').to.deep.equal(Object.keys(fresh).sort());
      for (const [name, text] of Object.entries(fresh)) expect(committed[name] === text, `${name} differs: run npm run sdk:generate`).to.equal(true);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});
