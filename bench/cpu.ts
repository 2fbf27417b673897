// CPU time of the processes behind a scenario (the service, the Temporal server, PostgreSQL,
// Elasticsearch), read from /proc: with it, a closed-loop latency can be told apart from the CPU each
// request costs. On a saturated machine, n requests in flight each wait about n × (CPU per request) /
// cores (Little's law), whatever the code does in between.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** The pid that listens on a loopback TCP port, if this machine lets us see it. */
export function pidListeningOn(port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
    const match = /pid=(\d+)/.exec(out);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

function stat(pid: number) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // fields[1] = ppid; [11..14] = utime, stime, cutime, cstime (man 5 proc, counted from field 3)
    return { ppid: Number(fields[1]), own: Number(fields[11]) + Number(fields[12]), children: Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU ms used so far by each named process and its descendants (the live ones, and the waited-for
 * ones through the root's cutime: PostgreSQL's backends that have exited, say); `{ alone: pid }` is
 * that process without its live children, and `{ childrenOf: pid }` its live children with theirs (the
 * service's PDF processes, told apart from its own event loop).
 */
export function cpuMeter(roots: Record<string, number | { alone: number } | { childrenOf: number } | undefined>) {
  return (): Record<string, number> => {
    const stats = new Map<number, NonNullable<ReturnType<typeof stat>>>();
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const found = stat(Number(entry));
      if (found) stats.set(Number(entry), found);
    }
    const own = (pid: number) => (stats.get(pid)?.own ?? 0) + (stats.get(pid)?.children ?? 0);
    const childrenOf = (root: number): number => {
      let ticks = 0;
      for (const [pid, { ppid }] of stats) if (ppid === root) ticks += below(pid);
      return ticks;
    };
    const below = (root: number): number => own(root) + childrenOf(root);
    const ticksOf = (root: number | { alone: number } | { childrenOf: number }) =>
      typeof root === 'number' ? below(root) : 'alone' in root ? own(root.alone) : childrenOf(root.childrenOf);
    return Object.fromEntries(
      Object.entries(roots)
        .filter((entry): entry is [string, NonNullable<(typeof entry)[1]>] => entry[1] !== undefined)
        .map(([name, root]) => [name, (ticksOf(root) * 1000) / TICKS_PER_SECOND]),
    );
  };
}

/** CPU ms per label between two readings of a cpuMeter. */
export const cpuBetween = (before: Record<string, number>, after: Record<string, number>) =>
  Object.fromEntries(Object.keys(after).map((name) => [name, after[name] - (before[name] ?? 0)]));

export const cores = () => os.cpus().length;

/** Busy share of the whole machine (0–1) over `ms`, from /proc/stat. */
async function machineBusy(ms: number) {
  const read = () => {
    const [, ...ticks] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const idle = ticks[3] + ticks[4]; // idle, iowait
    return { idle, total: ticks.reduce((sum, value) => sum + value, 0) };
  };
  const before = read();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = read();
  return after.total === before.total ? 0 : 1 - (after.idle - before.idle) / (after.total - before.total);
}

/**
 * Waits until the machine has settled (under `busy` of its CPU for a quarter of a second), up to
 * `maxMs`: what one scenario leaves running (an index catching up, a batch lingering, a merge in
 * Elasticsearch) must not be billed to the next one. Returns how long it waited.
 */
export async function settle(busy = 0.2, maxMs = 15_000) {
  const start = Date.now();
  while (Date.now() - start < maxMs && (await machineBusy(250)) > busy);
  return Date.now() - start;
}
