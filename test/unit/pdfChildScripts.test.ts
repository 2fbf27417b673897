import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const root = path.resolve(__dirname, '../..');
const pdfFolder = path.join(root, 'src/pdf');

// The PDF pool's children and the seal thread are plain JavaScript (they start without a TypeScript
// loader). tsc reads them (allowJs, src included) but checks only the files that opt in with `// @ts-check`
// on their first line: a new or changed script that leaves it out would go unchecked without a word.
describe('the plain-JavaScript scripts under src/pdf', () => {
  const scripts = fs
    .readdirSync(pdfFolder, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(mjs|cjs|js)$/.test(file))
    .sort();

  it('are read by the type check', () => {
    const tsconfig = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
    expect(tsconfig.compilerOptions.allowJs).to.equal(true);
    expect(tsconfig.include).to.include('src');
    expect(scripts).to.include.members(['removeTextTags.mjs', 'findTextTags.mjs', 'sealThread.cjs']);
  });

  it('each opt in with // @ts-check on the first line, and none opts out', () => {
    const unchecked = scripts.filter((file) => {
      const text = fs.readFileSync(path.join(pdfFolder, file), 'utf8');
      return text.split('\n', 1)[0].trim() !== '// @ts-check' || /@ts-nocheck/.test(text);
    });
    expect(unchecked).to.deep.equal([]);
  });
});
