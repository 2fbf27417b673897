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

describe('package.json', () => {
  it('pins sanitize-html, which rebuilds uploaded SVG logos, to one exact version that the lockfile installs', () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8'));
    const lock = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package-lock.json'), 'utf8'));
    const wanted: string = pkg.dependencies['sanitize-html'];
    expect(wanted).to.match(/^\d+\.\d+\.\d+$/);
    expect(lock.packages['node_modules/sanitize-html'].version).to.equal(wanted);
    expect(pkg['//sanitize-html']).to.include(wanted);
  });
});
