import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pg from 'pg';

// The baselines of the benchmark: the smallest Koa app that answers with a small JSON body (GET /),
// and the same app making one PostgreSQL query with a plain pg pool (GET /db, when DATABASE_URL is
// set). Run in its own process with the same Node flags as the service, it shows what Node + Koa
// alone, and Node + Koa + one database round trip, can do on this machine.
const pool = process.env.DATABASE_URL ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 }) : undefined;
const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path === '/db' && pool) {
    const { rows } = await pool.query('select $1::text as status', ['ok']);
    ctx.body = rows[0];
    return;
  }
  ctx.body = { status: 'ok' };
});

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`bare Koa server listening on 127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => void pool?.end().finally(() => process.exit(0))));
