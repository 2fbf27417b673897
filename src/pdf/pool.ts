import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/** A job stopped by one of the pool's own limits; the message names the limit and its setting. */
export class PdfLimitError extends Error {}

/** Every child busy and the queue full. */
export class PdfPoolBusyError extends Error {}

export interface PdfPoolOptions {
  /** The child program: plain JavaScript that answers jobs through serveJobs.mjs. */
  script: string;
  /** Its arguments (its own limits, as JSON). */
  args: string[];
  /** Children at most. Each starts when first needed and is kept for the jobs after. */
  size: number;
  /** Jobs that may wait for a child; more are refused with PdfPoolBusyError. */
  maxQueued: number;
  /** Wall-clock limit of a job, from the moment a child is chosen for it. */
  timeoutMs: number;
  /** Resident memory of a child, read from /proc every 50 ms: a child above it is killed. Also its V8 heap cap. */
  maxMemoryMb: number;
  /** CPU niceness of the children: 10 lets background work yield to the api. */
  niceness?: number;
}

interface Job {
  bytes: Uint8Array;
  /** What the child needs besides the PDF (structured-cloneable). */
  input?: unknown;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

interface Child {
  process: ChildProcess;
  ready: boolean;
  job?: Job;
  timer?: NodeJS.Timeout;
  /** Why the pool killed it, for the job it was running. */
  killedFor?: Error;
}

const WATCH_EVERY_MS = 50;
/** The share of maxMemoryMb a child may keep between jobs. */
const RETIRE_ABOVE = 0.75;

function setNiceness(pid: number, niceness: number) {
  try {
    os.setPriority(pid, niceness);
  } catch {
    // the child has already exited; its 'exit' says why
  }
}

/** Resident memory of a process in MB, from /proc (Linux); undefined elsewhere or once it has exited. */
export function residentMemoryMb(pid: number | undefined): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A pool of child processes that parse PDFs, one job at a time each, so that a hostile PDF costs a
 * child, never the caller's event loop or memory. Limits are enforced from outside the parser: a job
 * that runs past `timeoutMs` or a child whose resident memory passes `maxMemoryMb` is killed with
 * SIGKILL and its job fails with a PdfLimitError. A killed or crashed child is replaced when the next
 * job needs one; a child left holding more than three quarters of the memory limit after a job is replaced
 * too (pdf.js settles at about half of the default 256 MB, and must not be restarted after every PDF).
 */
export function createPdfPool<Result>(options: PdfPoolOptions) {
  const children = new Set<Child>();
  const queue: Job[] = [];
  let closed = false;
  let jobsStarted = 0;
  // Reads the memory of busy children, only while there are some: an idle pool wakes nobody up.
  let watchdog: NodeJS.Timeout | undefined;

  function run(bytes: Uint8Array, input?: unknown): Promise<Result> {
    if (closed) return Promise.reject(new Error('The PDF pool is closed.'));
    if (queue.length >= options.maxQueued) return Promise.reject(new PdfPoolBusyError(`${queue.length} PDFs are waiting for a PDF process.`));
    return new Promise((resolve, reject) => {
      queue.push({ bytes, input, resolve: resolve as (result: unknown) => void, reject });
      dispatch();
    });
  }

  function dispatch() {
    while (queue.length > 0) {
      let child = [...children].find((candidate) => !candidate.job);
      if (!child && children.size < options.size) child = startChild();
      if (!child) return;
      const chosen = child;
      chosen.job = queue.shift();
      jobsStarted++;
      watchdog ??= setInterval(killChildrenOverMemory, WATCH_EVERY_MS).unref();
      chosen.timer = setTimeout(
        () => kill(chosen, new PdfLimitError(`content exceeds the limit of ${options.timeoutMs} ms of processing (PDF_TIMEOUT_MS)`)),
        options.timeoutMs,
      );
      if (chosen.ready) chosen.process.send({ bytes: chosen.job!.bytes, input: chosen.job!.input });
    }
  }

  function startChild(): Child {
    const subprocess = fork(options.script, options.args, {
      execArgv: [`--max-old-space-size=${options.maxMemoryMb}`],
      serialization: 'advanced', // bytes go over as bytes, not as JSON
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const child: Child = { process: subprocess, ready: false };
    children.add(child);
    if (options.niceness && subprocess.pid) setNiceness(subprocess.pid, options.niceness);
    // Idle children never keep the parent alive; a job's timer does while it runs.
    subprocess.unref();
    subprocess.channel?.unref();
    subprocess.on('message', (message: { ready?: true; result?: unknown; error?: string; rssMb?: number }) => {
      if (message.ready) {
        child.ready = true;
        if (child.job) subprocess.send({ bytes: child.job.bytes, input: child.job.input });
        return;
      }
      const job = finish(child);
      if (message.error !== undefined) job?.reject(new Error(`The PDF process failed: ${message.error}`));
      else job?.resolve(message.result);
      // The child says how much it holds now (serveJobs.mjs): no /proc read on this event loop after every job.
      if ((message.rssMb ?? residentMemoryMb(subprocess.pid) ?? 0) > options.maxMemoryMb * RETIRE_ABOVE) retire(child);
      dispatch();
    });
    let gone = false;
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      if (gone) return;
      gone = true;
      children.delete(child);
      // V8 aborts when the heap cap is reached, which the watchdog did not see coming.
      const outOfHeap = signal === 'SIGABRT' || code === 134;
      finish(child)?.reject(child.killedFor ?? (outOfHeap ? memoryLimitError() : new Error(`The PDF process exited with ${signal ?? code}.`)));
      dispatch();
    };
    subprocess.on('exit', exited);
    // A child that could not start, or a message to one that has just died.
    subprocess.on('error', (error) => {
      child.killedFor ??= error;
      if (!subprocess.pid) exited(null, null);
    });
    return child;
  }

  function memoryLimitError() {
    return new PdfLimitError(`content exceeds the limit of ${options.maxMemoryMb} MB of memory (PDF_MAX_MEMORY_MB)`);
  }

  function finish(child: Child): Job | undefined {
    const job = child.job;
    child.job = undefined;
    clearTimeout(child.timer);
    return job;
  }

  function kill(child: Child, reason: Error) {
    child.killedFor ??= reason;
    child.process.kill('SIGKILL'); // its 'exit' fails the job and starts a replacement if one is needed
  }

  function retire(child: Child) {
    children.delete(child);
    child.process.kill('SIGKILL');
  }

  function killChildrenOverMemory() {
    let busy = false;
    for (const child of children) {
      if (!child.job) continue;
      busy = true;
      if (!child.killedFor && (residentMemoryMb(child.process.pid) ?? 0) > options.maxMemoryMb) kill(child, memoryLimitError());
    }
    if (!busy) stopWatchdog();
  }

  function stopWatchdog() {
    clearInterval(watchdog);
    watchdog = undefined;
  }

  async function close() {
    closed = true;
    stopWatchdog();
    for (const job of queue.splice(0)) job.reject(new Error('The PDF pool is closed.'));
    await Promise.all(
      [...children].map((child) => {
        const exited = new Promise((resolve) => child.process.once('exit', resolve));
        kill(child, new Error('The PDF pool is closed.'));
        return child.process.exitCode === null && child.process.signalCode === null ? exited : undefined;
      }),
    );
  }

  return {
    run,
    close,
    /** Jobs handed to a child so far (tests check that refused requests start none). */
    get jobsStarted() {
      return jobsStarted;
    },
  };
}
