// The child's side of the PDF pool (pool.ts): answers one job at a time with `handle(bytes, input)`, and
// exits when the parent goes. Each job is {bytes, input}; each answer is {result} or {error} (a bug, not a
// verdict on the PDF: verdicts are results).
export function serveJobs(handle) {
  const answer = (message) => process.send(message, (error) => error && process.exit(0)); // the parent has gone
  process.on('message', async ({ bytes, input }) => {
    try {
      answer({ result: await handle(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), input) });
    } catch (error) {
      answer({ error: String(error?.stack ?? error) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  answer({ ready: true });
}
