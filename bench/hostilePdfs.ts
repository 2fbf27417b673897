// The safety of uploads: hostile PDFs (made by test/support/pdfs.ts) uploaded one at a time to the
// running service, with GET /healthz asked every 10 ms meanwhile and the resident memory of the service
// and its child processes (the PDF pools) sampled every 10 ms.
import fs from 'node:fs';
import { makeDoubledPageTree, makeManyObjectPdf, makeManyPagePdf, makeMemoryHungryPdf, makeObjectStreamBomb } from '../test/support/pdfs';
import { multipartBody } from './pdf';
import { stats, type Stats } from './stats';

const SAMPLE_EVERY_MS = 10;
const ANSWER_WITHIN_MS = 15_000;

export const hostilePdfs: { name: string; make: () => Buffer }[] = [
  { name: 'object stream inflating to 600 MiB', make: () => makeObjectStreamBomb(600 * 2 ** 20) },
  { name: 'page tree listing each child twice (2^22 pages)', make: () => makeDoubledPageTree(22) },
  { name: '10,000 pages', make: () => makeManyPagePdf(10_000) },
  { name: '120,000 objects', make: () => makeManyObjectPdf(120_000) },
  { name: 'array of 10,000,000 numbers', make: () => makeMemoryHungryPdf(10_000_000) },
];

export interface HostileResult {
  name: string;
  bytes: number;
  status: number;
  problem: string;
  seconds: number;
  healthz: Stats;
  /** Peak of (service + children) RSS during the upload, minus that sum just before it. */
  memoryGrowthMb: number;
}

/** Resident memory of a process, MB; 0 once it has gone. */
function residentMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The process and its children (by their parent pid in /proc/<pid>/stat). */
function familyOf(pid: number): number[] {
  const children = fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    });
  return [pid, ...children.map(Number)];
}

/**
 * Samples the RSS of a process plus its children (the PDF pools' processes) every 10 ms, looking the
 * children up again every 20 samples: `peak()` is the largest sum so far, in MB.
 */
export function sampleFamilyMemory(pid: number) {
  let members = familyOf(pid);
  const sum = () => members.reduce((total, member) => total + residentMb(member), 0);
  const start = sum();
  let peak = start;
  let samples = 0;
  const timer = setInterval(() => {
    if (++samples % 20 === 0) members = familyOf(pid);
    peak = Math.max(peak, sum());
  }, SAMPLE_EVERY_MS);
  return {
    start,
    peak: () => peak,
    stop: () => clearInterval(timer),
  };
}

export async function hostileUploads(options: {
  baseUrl: string;
  auth: Record<string, string>;
  pid: number;
  log: (message: string) => void;
}): Promise<HostileResult[]> {
  const results: HostileResult[] = [];
  for (const { name, make } of hostilePdfs) {
    const pdf = make();
    options.log(`hostile upload: ${name} (${(pdf.length / 1024).toFixed(0)} KB)`);
    const { body, contentType } = multipartBody(pdf, 'hostile.pdf');
    await new Promise((resolve) => setTimeout(resolve, 1000)); // let the previous one's children settle
    const memory = sampleFamilyMemory(options.pid);
    let done = false;
    const latencies: number[] = [];
    const probe = (async () => {
      while (!done) {
        const started = performance.now();
        await fetch(`${options.baseUrl}/healthz`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) }).then(
          (response) => response.arrayBuffer(),
          () => undefined,
        );
        latencies.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
      }
    })();
    const started = performance.now();
    const response = await fetch(`${options.baseUrl}/api/v1/documents`, {
      method: 'POST',
      headers: { ...options.auth, 'Content-Type': contentType },
      body,
      signal: AbortSignal.timeout(60_000),
    }).catch((error: Error) => ({ status: 0, json: async () => ({ details: [error.message] }) }));
    const seconds = (performance.now() - started) / 1000;
    const answer = (await response.json().catch(() => ({}))) as { details?: string[]; message?: string };
    done = true;
    await probe;
    memory.stop();
    results.push({
      name,
      bytes: pdf.length,
      status: response.status,
      problem: answer.details?.join('; ') ?? answer.message ?? '',
      seconds,
      healthz: stats(latencies),
      memoryGrowthMb: memory.peak() - memory.start,
    });
  }
  return results;
}
