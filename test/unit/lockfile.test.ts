import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

describe('package-lock.json', () => {
  it('lists every optional platform package, so `npm ci` accepts it (see scripts/complete-lockfile.mjs)', () => {
    const lock = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package-lock.json'), 'utf8'));
    const missing: string[] = [];
    for (const [location, entry] of Object.entries<any>(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        if (!lock.packages[`node_modules/${name}`] && !lock.packages[`${location}/node_modules/${name}`]) missing.push(name);
      }
    }
    expect(missing, 'run: node scripts/complete-lockfile.mjs').to.deep.equal([]);
  });
});
