import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// pyHanko, the independent PAdES validator (scripts/provision.sh pyhanko), through test/support/pades_validate.py.
const root = path.resolve(__dirname, '../..');
export const pyhankoPython = path.join(root, '.cache/pyhanko/bin/python');

/** pyHanko's findings on a sealed file, `name: value` a line, trusting only `trustedRoot` (a PEM file) if given. */
export function pyhanko(file: string, trustedRoot?: string): Record<string, string> {
  if (!fs.existsSync(pyhankoPython)) throw new Error(`no ${pyhankoPython}: run bash scripts/provision.sh pyhanko (npm test does)`);
  const result = spawnSync(pyhankoPython, [path.join(root, 'test/support/pades_validate.py'), file, ...(trustedRoot ? [trustedRoot] : [])], {
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`pades_validate.py failed: ${result.stderr}`);
  return Object.fromEntries(
    result.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/: (.*)/s, 2)),
  );
}
