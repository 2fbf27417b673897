// Run as a short-lived child process: `node --require tsx/cjs src/worker/bundleWorkflows.ts <out.js>`.
// Bundles workflows/ with webpack and writes the bundle to <out.js>: once by `npm run build` (scripts/build.ts),
// or at each start of a worker from the sources, in a child so that webpack's memory is given back to the
// system when it exits instead of staying in the heap of the server.
import fs from 'node:fs';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

async function main() {
  const out = process.argv[2];
  if (!out) throw new Error('usage: bundleWorkflows.ts <output file>');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: new DefaultLogger('WARN'), // its info level prints the whole webpack report
  });
  fs.writeFileSync(out, code);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
