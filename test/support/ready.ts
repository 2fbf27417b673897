import type { ChildProcess } from 'node:child_process';

/**
 * Polls the process's /readyz on 127.0.0.1:`port` until it answers 200. A process that exits fails at once, and one
 * not ready within `ms` fails then, each with the end of its `output` when there is one.
 */
export async function waitUntilReady(
  child: ChildProcess,
  port: number,
  { ms, name = 'the process', output }: { ms: number; name?: string; output?: () => string },
) {
  const tail = () => (output ? `:\n${output().slice(-3000)}` : '');
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited with ${child.exitCode ?? child.signalCode}${tail()}`);
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${name} not ready within ${ms / 1000} s${tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
