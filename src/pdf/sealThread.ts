import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { sealDocument, SealDocumentInput } from './seal';

// Sealing parses, rewrites and signs the whole PDF: a 25 MB file holds its thread for half a second in
// one stretch, a 2000-page one for over a second in stretches of 200 ms. It runs on a thread of its
// own, so that what shares the process (the api under `npm start`, the worker's other activities)
// goes on meanwhile, and a seal that runs out of memory ends that thread, not the process. One
// thread, started by the first seal and kept (a new one takes longer to start than a small seal).

/** The seal thread's heap, as much as the whole process had for sealing before it had a thread. */
const HEAP_MB = 384;

type Sealed = Awaited<ReturnType<typeof sealDocument>>;

interface Waiting {
  resolve: (sealed: Sealed) => void;
  reject: (error: Error) => void;
}

let thread: { worker: Worker; waiting: Map<number, Waiting> } | undefined;
let lastId = 0;

function start() {
  const worker = new Worker(path.join(__dirname, 'sealThread.cjs'), { resourceLimits: { maxOldGenerationSizeMb: HEAP_MB } });
  const started = { worker, waiting: new Map<number, Waiting>() };
  worker.on('message', ({ id, pdf, sha256, error }: { id: number; pdf?: Uint8Array; sha256?: string; error?: string }) => {
    const waiting = started.waiting.get(id);
    started.waiting.delete(id);
    if (started.waiting.size === 0) worker.unref(); // an idle thread keeps no process alive
    if (error !== undefined) waiting?.reject(new Error(error));
    else waiting?.resolve({ pdf: Buffer.from(pdf!.buffer, pdf!.byteOffset, pdf!.byteLength), sha256: sha256! });
  });
  // Out of memory, or any other end: its seals fail (the workflow retries them), the next starts a new thread.
  const end = (error: Error) => {
    if (thread === started) thread = undefined;
    for (const waiting of started.waiting.values()) waiting.reject(error);
    started.waiting.clear();
  };
  worker.on('error', end);
  worker.on('exit', (code) => end(new Error(`the seal thread stopped (exit code ${code})`)));
  return started;
}

/** sealDocument (./seal.ts), run on the seal thread. */
export function sealDocumentOnThread(input: SealDocumentInput): Promise<Sealed> {
  thread ??= start();
  const { worker, waiting } = thread;
  const id = ++lastId;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker.ref();
    worker.postMessage({ id, input });
  });
}

/** Stops the seal thread; its seals under way fail. The next seal starts a new one. */
export async function stopSealThread() {
  await thread?.worker.terminate();
}
