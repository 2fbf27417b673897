// @ts-check
// The child's side of the PDF pool (pool.ts): answers one job at a time with `handle(bytes, input)`, and
// exits when the parent goes. Each job is {bytes, input}; each answer is {result} or {error} (a bug, not a
// verdict on the PDF: verdicts are results).
/** @param {(bytes: Buffer, input: any) => unknown} handle */
export function serveJobs(handle) {
  // A child of the pool: process.send is there.
  /** @param {{ result: unknown } | { error: string } | { ready: true }} message */
  const answer = (message) => /** @type {Required<NodeJS.Process>} */ (process).send(message, (error) => error && process.exit(0)); // the parent has gone
  process.on('message', async ({ bytes, input }) => {
    try {
      answer({ result: await handle(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), input) });
    } catch (error) {
      answer({ error: String(/** @type {Error | undefined} */ (error)?.stack ?? error) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  answer({ ready: true });
}
