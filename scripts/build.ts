import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildFormBundle } from '../src/signerPortal/formBundle';

// `npm run build`: the production build in dist/, which the image runs with plain node
// (scripts/start-production.sh). TypeScript compiled by tsc (tsconfig.build.json); every other file
// the code reads beside itself copied as it is; the workflows bundled once, here, so that a worker
// started from the build loads the bundle instead of running webpack (src/worker/worker.ts).

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
// A step that fails has said why on the terminal: the build stops with its status.
function run(args: string[]) {
  const { status } = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}

fs.rmSync(dist, { recursive: true, force: true });
run([require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json']);

// Browser assets, the .mjs children and the .cjs thread are found by path.join(__dirname, …): they go beside the JavaScript.
for (const file of fs.readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })) {
  const from = path.join(root, 'src', file);
  if (file.endsWith('.ts') || !fs.statSync(from).isFile()) continue;
  fs.mkdirSync(path.dirname(path.join(dist, 'src', file)), { recursive: true });
  fs.copyFileSync(from, path.join(dist, 'src', file));
}
// The signing page's form rules, bundled for the browser now: the build holds no TypeScript for it.
buildFormBundle().then(
  (bundle) => fs.writeFileSync(path.join(dist, 'src/signerPortal/assets/form.mjs'), bundle),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
// src/webhooks/http.ts reads the version from ../../package.json.
fs.copyFileSync(path.join(root, 'package.json'), path.join(dist, 'package.json'));

run(['--require', 'tsx/cjs', 'src/worker/bundleWorkflows.ts', path.join(dist, 'src/worker/workflow-bundle.js')]);
