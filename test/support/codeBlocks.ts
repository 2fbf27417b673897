import fs from 'node:fs';
import path from 'node:path';

// The fenced code blocks of the README and docs/*.md. A block in a language a reader runs (sh, bash,
// ts, js) is run by test/system/quickstart.test.ts exactly as printed, unless its info string says
// `no-run` (a fragment that needs the reader's own values, or a command that is the test run itself).
// The other languages are shown, never run: output, data, markup, diagrams.

const root = path.resolve(__dirname, '../..');

export const runLanguages = ['sh', 'bash', 'ts', 'js'];
export const shownLanguages = ['text', 'json', 'yaml', 'html', 'mermaid'];

export interface CodeBlock {
  /** The markdown file, relative to the repository. */
  file: string;
  /** The line of its opening fence, from 1. */
  line: number;
  language: string;
  /** The words of the info string after the language, such as `no-run`. */
  flags: string[];
  code: string;
  /** The heading of the section it is in. */
  section: string;
}

export const documentationFiles = () => [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

export function codeBlocksOf(file: string): CodeBlock[] {
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  const blocks: CodeBlock[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const heading = /^#+ (.*)/.exec(lines[i]);
    if (heading) section = heading[1];
    const fence = /^```(.*)$/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && line === '```');
    if (end === -1) throw new Error(`${file}:${i + 1}: a code block that never ends`);
    const [language = '', ...flags] = fence[1].trim().split(/\s+/).filter(Boolean);
    blocks.push({ file, line: i + 1, language, flags, code: lines.slice(i + 1, end).join('\n') + '\n', section });
    i = end;
  }
  return blocks;
}

export const allCodeBlocks = () => documentationFiles().flatMap(codeBlocksOf);

export const isRun = (block: CodeBlock) => runLanguages.includes(block.language) && !block.flags.includes('no-run');

export const where = (block: CodeBlock) => `${block.file}:${block.line}`;

/** A TypeScript block names the file a reader saves it as in its first line, `// example.mts: …`. */
export const scriptFileOf = (block: CodeBlock) => /^\/\/ ([\w-]+\.m[tj]s)\b/.exec(block.code)?.[1];

/** The README's quickstart: the first block that runs in its "Quickstart" section. */
export function quickstartBlock(): CodeBlock {
  const block = codeBlocksOf('README.md').find((candidate) => candidate.section === 'Quickstart' && isRun(candidate));
  if (!block) throw new Error('the README has no quickstart block');
  return block;
}
