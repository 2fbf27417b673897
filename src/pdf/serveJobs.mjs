// @ts-check
// The child's side of the PDF pool (pool.ts): answers one job at a time with `handle(bytes, input)`, and
// exits when the parent goes. Each job is {bytes, input}; each answer is {result} or {error} (a bug, not a
// verdict on the PDF: verdicts are results), with the child's resident memory in MB after the job (rssMb),
// which the pool would otherwise read from /proc on its own event loop after every job.
/** @param {(bytes: Buffer, input: any) => unknown} handle */
export function serveJobs(handle) {
  // A child of the pool: process.send is there.
  /** @param {{ result: unknown, rssMb: number } | { error: string, rssMb: number } | { ready: true }} message */
  const answer = (message) => /** @type {Required<NodeJS.Process>} */ (process).send(message, (error) => error && process.exit(0)); // the parent has gone
  process.on('message', async ({ bytes, input }) => {
    try {
      const result = await handle(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), input);
      answer({ result, rssMb: process.memoryUsage.rss() / 2 ** 20 });
    } catch (error) {
      answer({ error: String(/** @type {Error | undefined} */ (error)?.stack ?? error), rssMb: process.memoryUsage.rss() / 2 ** 20 });
    }
  });
  process.on('disconnect', () => process.exit(0));
  answer({ ready: true });
}
