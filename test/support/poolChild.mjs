// A child program for the PDF pool's own tests (test/unit/pdfPool.test.ts): each job's bytes are a command.
import { serveJobs } from '../../src/pdf/serveJobs.mjs';

const held = [];
const tick = () => new Promise((resolve) => setImmediate(resolve));

serveJobs(async (bytes) => {
  const [name, megabytes] = bytes.toString().split(':');
  switch (name) {
    case 'pid':
      return process.pid;
    case 'hang':
      for (;;);
    case 'allocate': // Buffers live outside the V8 heap: no --max-old-space-size stops this
      for (;;) {
        held.push(Buffer.alloc(16 * 2 ** 20, 1));
        await tick();
      }
    case 'hold': // keeps this much memory after the job
      held.push(Buffer.alloc(Number(megabytes) * 2 ** 20, 1));
      return process.pid;
    case 'crash':
      process.exit(3);
  }
  throw new Error('unknown command');
});
