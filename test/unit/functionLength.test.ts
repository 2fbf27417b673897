import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';

// A function a reader holds in their head: none of the code's runs past ~150 lines, but a table of
// routes, which is a list of declarations rather than one thread of logic.
const MAX_LINES = 150;
const root = path.resolve(__dirname, '../..');
const isRouteTable = (name: string) => /Routes$/.test(name);

function longFunctions(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, /\.m?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - start + 1;
      const name = node.name?.getText(source) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : '(anonymous)');
      if (lines > MAX_LINES && !isRouteTable(name)) found.push(`${file}:${start + 1} ${name}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the length of functions', () => {
  it(`none in src/, activities/ or workflows/ is over ${MAX_LINES} lines, route tables aside`, () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'src', 'activities', 'workflows'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => /\.(ts|mjs|js)$/.test(file) && !file.endsWith('.d.ts') && fs.existsSync(path.join(root, file)));
    expect(files.length).to.be.greaterThan(100);
    const long = files.flatMap(longFunctions);
    expect(long, long.join('\n')).to.deep.equal([]);
  });
});
