// How `npm start` runs the service, read from package.json so that every bench starts it the same way:
// the node flags (heap caps included) and the environment it sets (`NAME=value` before `node`).
import fs from 'node:fs';
import path from 'node:path';

const words = (JSON.parse(fs.readFileSync(path.join(__dirname, '../package.json'), 'utf8')).scripts.start as string).split(/\s+/);
const node = words.indexOf('node');

export const NODE_FLAGS: string[] = words.filter(
  (word, i) => i > node && (word.startsWith('--') || words[i - 1] === '--import' || words[i - 1] === '--require'),
);

export const START_ENV: Record<string, string> = Object.fromEntries(
  words.slice(0, node).map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
);

/** The command as the benchmark's report shows it. */
export const START_COMMAND = [...words.slice(0, node), 'node', ...NODE_FLAGS].join(' ');
