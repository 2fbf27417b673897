import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { receivedFromBytes } from '../../src/api/receivedFile';
import { loadConfig } from '../../src/config';
import { CHECK_NICENESS, createPdfInspector } from '../../src/pdf/inspect';
import { createPdfPool, PdfLimitError, PdfPoolBusyError, type PdfPoolOptions } from '../../src/pdf/pool';
import { makePdf } from '../support/pdfs';
import { eventually } from '../support/signing';

// The pool that parses untrusted PDFs, on a child program whose jobs are commands (test/support/poolChild.mjs).

const script = path.join(__dirname, '../support/poolChild.mjs');
const command = (name: string) => Buffer.from(name);
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: Error) => error,
  );

describe('the PDF pool', () => {
  const pools: { close(): Promise<void> }[] = [];
  const poolOf = (options: Partial<PdfPoolOptions> = {}) => {
    const pool = createPdfPool<number>({ script, args: [], size: 2, maxQueued: 100, timeoutMs: 5_000, maxMemoryMb: 128, ...options });
    pools.push(pool);
    return pool;
  };
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.close();
  });

  it('keeps its children warm: 40 jobs run in at most `size` processes', async () => {
    const pool = poolOf();
    const pids = await Promise.all(Array.from({ length: 40 }, () => pool.run(command('pid'))));
    expect(new Set(pids).size).to.be.within(1, 2);
    expect(pool.jobsStarted).to.equal(40);
  });

  it('kills a child whose resident memory passes the limit, memory outside the V8 heap included, and replaces it', async () => {
    const pool = poolOf({ size: 1 });
    const first = await pool.run(command('pid'));
    const error = await failureOf(pool.run(command('allocate')));
    expect(error).to.be.instanceOf(PdfLimitError);
    expect(error?.message).to.equal('content exceeds the limit of 128 MB of memory (PDF_MAX_MEMORY_MB)');
    const next = await pool.run(command('pid'));
    expect(next).to.be.a('number').and.not.equal(first);
  });

  it('kills a job that runs past the wall-clock limit, and the next job gets a fresh child', async () => {
    const pool = poolOf({ size: 1, timeoutMs: 1_000 });
    const first = await pool.run(command('pid'));
    const error = await failureOf(pool.run(command('hang')));
    expect(error).to.be.instanceOf(PdfLimitError);
    expect(error?.message).to.equal('content exceeds the limit of 1000 ms of processing (PDF_TIMEOUT_MS)');
    const next = await pool.run(command('pid'));
    expect(next).to.be.a('number').and.not.equal(first);
  });

  it("watches its children's memory only while a job runs: an idle pool keeps no timer, and the next job is watched again", async () => {
    const { setInterval: set, clearInterval: clear } = globalThis;
    const watches = new Set<unknown>();
    globalThis.setInterval = ((callback: () => void, ms?: number) => {
      const handle = set(callback, ms);
      if (ms === 50) watches.add(handle); // the pool's watch (WATCH_EVERY_MS)
      return handle;
    }) as typeof setInterval;
    globalThis.clearInterval = ((handle?: NodeJS.Timeout) => {
      watches.delete(handle);
      clear(handle);
    }) as typeof clearInterval;
    let pool: ReturnType<typeof poolOf>;
    try {
      pool = poolOf({ size: 1 });
      const running = pool.run(command('pid'));
      expect(watches.size, 'watches while a job runs').to.equal(1);
      await running;
      // The next watch finds no job, and stops.
      await eventually(async () => expect(watches.size, 'watches once idle').to.equal(0), 2_000);
    } finally {
      globalThis.setInterval = set;
      globalThis.clearInterval = clear;
    }
    const error = await failureOf(pool.run(command('allocate')));
    expect(error?.message).to.equal('content exceeds the limit of 128 MB of memory (PDF_MAX_MEMORY_MB)');
  });

  it('refuses jobs beyond its queue', async () => {
    const pool = poolOf({ size: 1, maxQueued: 1, timeoutMs: 2_000 });
    const hanging = failureOf(pool.run(command('hang')));
    const queued = pool.run(command('pid'));
    expect(await failureOf(pool.run(command('pid')))).to.be.instanceOf(PdfPoolBusyError);
    expect(await hanging).to.be.instanceOf(PdfLimitError);
    expect(await queued).to.be.a('number');
  });

  it('a child that crashes fails only its own job', async () => {
    const pool = poolOf({ size: 1 });
    const error = await failureOf(pool.run(command('crash')));
    expect(error?.message).to.equal('The PDF process exited with 3.');
    expect(await pool.run(command('pid'))).to.be.a('number');
  });

  it('replaces a child left holding more than three quarters of its memory limit after a job, and keeps one below it', async () => {
    const pool = poolOf({ size: 1, maxMemoryMb: 320 }); // retires above 240 MB
    const keeper = await pool.run(command('hold:60'));
    expect(await pool.run(command('pid'))).to.equal(keeper);
    const holder = await pool.run(command('hold:170'));
    expect(await pool.run(command('pid'))).to.not.equal(holder);
  });

  it('runs its children at the niceness asked for, the replacement of a killed one too', async () => {
    const pool = poolOf({ size: 1, niceness: 5, timeoutMs: 1_000 });
    expect(os.getPriority(await pool.run(command('pid')))).to.equal(5);
    await failureOf(pool.run(command('hang')));
    expect(os.getPriority(await pool.run(command('pid')))).to.equal(5);
  });
});

describe("the api's checks of uploads", () => {
  it('run below the event loop and above the text of uploads: niceness 5', async () => {
    const inspector = createPdfInspector(loadConfig({}));
    try {
      const facts = await inspector.inspect(receivedFromBytes(await makePdf(['Niceness'])));
      expect(facts.problem).to.equal(undefined);
      const children = fs
        .readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .filter((pid) => {
          try {
            const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
            const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            return parent === process.pid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('inspectPdf.mjs');
          } catch {
            return false; // exited meanwhile
          }
        });
      expect(children).to.have.length.at.least(1);
      for (const pid of children)
        expect(os.getPriority(Number(pid)))
          .to.equal(CHECK_NICENESS)
          .and.equal(5);
    } finally {
      await inspector.close();
    }
  });
});
