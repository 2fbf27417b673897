// @ts-check
// The seal thread's program (src/pdf/sealThread.ts). Plain JavaScript: a thread does not inherit the
// TypeScript loader its process registered in code (mocha's, say), so from the sources it compiles what it needs through tsx.
const parentPort = /** @type {import('node:worker_threads').MessagePort} */ (require('node:worker_threads').parentPort); // set: this runs as a thread
const fs = require('node:fs');
const path = require('node:path');

// From the build (npm run build) seal.js is compiled beside this file; from the sources tsx compiles seal.ts.
const { sealDocument } = fs.existsSync(path.join(__dirname, 'seal.js')) ? require('./seal.js') : require('tsx/cjs/api').require('./seal.ts', __filename);

parentPort.on('message', async ({ id, input }) => {
  try {
    // Buffers arrive as plain Uint8Arrays; the certificate is read as a Buffer.
    const sealCertificate = { ...input.sealCertificate, p12: Buffer.from(input.sealCertificate.p12) };
    const { pdf, sha256 } = await sealDocument({ ...input, sealCertificate });
    parentPort.postMessage({ id, pdf, sha256 });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
