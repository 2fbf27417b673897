import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { renewArchive, RenewalInput, sealDocument, SealDocumentInput } from './seal';
import type { SealService } from '../domain/signingRequests';
import { SealServiceError } from './sealServices';

// Sealing parses, rewrites and signs the whole PDF: a 25 MB file holds its thread for half a second in
// one stretch, a 2000-page one for over a second in stretches of 200 ms. It runs on a thread of its
// own, so that what shares the process (the api under `npm start`, the worker's other activities)
// goes on meanwhile, and a seal that runs out of memory ends that thread, not the process. One
// thread, started by the first seal and kept (a new one takes longer to start than a small seal).

/** The seal thread's heap, as much as the whole process had for sealing before it had a thread. */
const HEAP_MB = 384;

type Sealed = Awaited<ReturnType<typeof sealDocument>>;
type Renewed = Awaited<ReturnType<typeof renewArchive>>;
/** What both jobs answer: a PDF, as the thread's message gives it back. */
type Answered = Sealed | Renewed;

interface Waiting {
  resolve: (sealed: Answered) => void;
  reject: (error: Error) => void;
}

let thread: { worker: Worker; waiting: Map<number, Waiting> } | undefined;
let lastId = 0;

function start() {
  const worker = new Worker(path.join(__dirname, 'sealThread.cjs'), { resourceLimits: { maxOldGenerationSizeMb: HEAP_MB } });
  const started = { worker, waiting: new Map<number, Waiting>() };
  type Answer = { id: number; sealed?: Answered; error?: string; service?: SealService; url?: string };
  worker.on('message', ({ id, sealed, error, service, url }: Answer) => {
    const waiting = started.waiting.get(id);
    started.waiting.delete(id);
    if (started.waiting.size === 0) worker.unref(); // an idle thread keeps no process alive
    if (error !== undefined) waiting?.reject(service ? new SealServiceError(service, url, error) : new Error(error));
    else waiting?.resolve({ ...sealed!, pdf: Buffer.from(sealed!.pdf.buffer, sealed!.pdf.byteOffset, sealed!.pdf.byteLength) });
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
export const sealDocumentOnThread = (input: SealDocumentInput): Promise<Sealed> => onThread('seal', input);

/** renewArchive (./seal.ts), run on the seal thread. */
export const renewArchiveOnThread = (input: RenewalInput): Promise<Renewed> => onThread('renew', input);

function onThread<Result extends Answered>(job: 'seal' | 'renew', input: SealDocumentInput | RenewalInput): Promise<Result> {
  thread ??= start();
  const { worker, waiting } = thread;
  const id = ++lastId;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve: resolve as (sealed: Answered) => void, reject });
    worker.ref();
    worker.postMessage({ id, job, input });
  });
}

/** Stops the seal thread; its seals under way fail. The next seal starts a new one. */
export async function stopSealThread() {
  await thread?.worker.terminate();
}
