#!/usr/bin/env node
// The registry this project is built from does not serve every platform build of some native
// packages (e.g. @swc/core-darwin-arm64, a dependency of Temporal's workflow bundler), so
// `npm install` leaves them out of package-lock.json and `npm ci` then refuses the lock as out of
// sync. This adds the missing optional platform packages as lock entries marked with their os/cpu:
// npm ci skips them on other platforms and fetches them where they apply.
// Run after `npm install` changes the lock: node scripts/complete-lockfile.mjs
import fs from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const osNames = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openbsd', 'sunos', 'aix'];
const cpuNames = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64'];

let added = 0;
for (const [location, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${location}/node_modules/${name}`;
    if (lock.packages[`node_modules/${name}`] || lock.packages[nested]) continue;
    const parts = name.split('/').pop().split('-');
    const os = osNames.find((candidate) => parts.includes(candidate));
    const cpu = cpuNames.find((candidate) => parts.includes(candidate));
    if (!os || !cpu) {
      console.warn(`left out ${name}: cannot tell its platform from its name`);
      continue;
    }
    lock.packages[`node_modules/${name}`] = { version, cpu: [cpu], optional: true, os: [os] };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} optional platform package(s) to package-lock.json`);
