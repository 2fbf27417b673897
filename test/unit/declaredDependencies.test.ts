import fs from 'node:fs';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { expect } from 'chai';

const root = path.resolve(__dirname, '../..');
// The code that runs (the tests may use devDependencies too, but nothing here may rely on a package
// that only happens to be installed as another package's dependency).
const codeFolders = ['src', 'activities', 'workflows', 'scripts', 'bench'];
const sourceFile = /\.(ts|js|mjs|cjs)$/;
// `import … from 'x'`, `export … from 'x'`, `import('x')`, `require('x')`, `require.resolve('x')`, `import 'x'`;
// not `import type` (erased, never loaded), nor the URLs the browser scripts import.
const specifier =
  /^\s*(?:import(?!\s+type\b)[^;]*?\bfrom\s*|export[^;]*?\bfrom\s*|import\s+)['"]([@\w][^'"\s]*)['"]|\b(?:import|require|require\.resolve)\s*\(\s*['"]([@\w][^'"\s]*)['"]/gm;

function sourceFiles(folder: string): string[] {
  return fs
    .readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && sourceFile.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** `@scope/name/deep/path` → `@scope/name`, `name/deep` → `name`. */
function packageOf(spec: string) {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

describe('declared dependencies', () => {
  it('every package the code loads is in package.json', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    const declared = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies), manifest.name]);
    const builtins = new Set(builtinModules);
    const undeclared: string[] = [];
    for (const file of codeFolders.flatMap((folder) => sourceFiles(path.join(root, folder)))) {
      for (const [, fromSpec, callSpec] of fs.readFileSync(file, 'utf8').matchAll(specifier)) {
        const spec = fromSpec ?? callSpec;
        if (spec.startsWith('node:') || builtins.has(spec)) continue;
        if (!declared.has(packageOf(spec))) undeclared.push(`${path.relative(root, file)}: ${spec}`);
      }
    }
    expect(undeclared).to.deep.equal([]);
  });
});
