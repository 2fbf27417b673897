import type { AddressInfo } from 'node:net';
import Koa from 'koa';

// The baseline of the benchmark: the smallest Koa app that answers with a small JSON body. Run in
// its own process with the same Node flags as the service, it shows what Node + Koa alone can do on
// this machine, so the service's numbers can be read as a fraction of it.
const app = new Koa();
app.use((ctx) => {
  ctx.body = { status: 'ok' };
});

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`bare Koa server listening on 127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
