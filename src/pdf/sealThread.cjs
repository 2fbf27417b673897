// @ts-check
// The seal thread's program (src/pdf/sealThread.ts). Plain JavaScript: a thread does not inherit the
// TypeScript loader its process registered in code (mocha's, say), so from the sources it compiles what it needs through tsx.
const parentPort = /** @type {import('node:worker_threads').MessagePort} */ (require('node:worker_threads').parentPort); // set: this runs as a thread
const fs = require('node:fs');
const path = require('node:path');

// From the build (npm run build) seal.js is compiled beside this file; from the sources tsx compiles seal.ts.
const { sealDocument, renewArchive } = fs.existsSync(path.join(__dirname, 'seal.js'))
  ? require('./seal.js')
  : require('tsx/cjs/api').require('./seal.ts', __filename);

parentPort.on('message', async ({ id, job, input }) => {
  try {
    // Buffers arrive as plain Uint8Arrays, which the seal reads as they are.
    parentPort.postMessage({ id, sealed: await (job === 'renew' ? renewArchive(input) : sealDocument(input)) });
  } catch (error) {
    // A SealServiceError's service and url say what the seal waits for (the workflow's progress shows it).
    const { service, url } = /** @type {{ service?: string, url?: string }} */ (error ?? {});
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error), service, url });
  }
});
