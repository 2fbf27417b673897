import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import formidable from 'formidable';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import pg from 'pg';
import { loadConfig } from '../src/config';
import { createPdfInspector } from '../src/pdf/inspect';

// The baselines of the benchmark: the smallest Koa app that answers with a small JSON body (GET /),
// and the same app making one PostgreSQL query with a plain pg pool (GET /db, when DATABASE_URL is
// set). Run in its own process with the same Node flags as the service, it shows what Node + Koa
// alone, and Node + Koa + one database round trip, can do on this machine.
//
// The baseline of (c2) against (c): the work a create and an upload cannot do without, and nothing
// else (no key, no quota, no event, no transaction). POST /create reads a small JSON body and inserts
// one row; POST /upload reads a multipart body into memory while hashing it, has the PDF checked by
// the same pool of PDF processes as the api (the check the service must keep isolated), and inserts
// one row holding its bytes. Their ratio is what an upload costs against a create on this machine.
const pool = process.env.DATABASE_URL ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 }) : undefined;
const pdf = createPdfInspector(loadConfig({})); // the default limits, as the service runs in the bench
const json = koaBody({ json: true, text: false, urlencoded: false, multipart: false });

async function readUpload(req: Koa.Request['req']) {
  const chunks: Buffer[] = [];
  const hash = crypto.createHash('sha256');
  const form = formidable({
    maxFiles: 1,
    fileWriteStreamHandler: () =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          chunks.push(chunk);
          hash.update(chunk);
          done();
        },
      }),
  });
  const [, files] = await form.parse(req);
  return { fileName: files.file?.[0]?.originalFilename ?? 'upload.pdf', bytes: Buffer.concat(chunks), sha256: hash.digest('hex') };
}

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.path === '/db' && pool) {
    const { rows } = await pool.query('select $1::text as status', ['ok']);
    ctx.body = rows[0];
    return;
  }
  if (ctx.path === '/create' && pool) {
    await json(ctx, async () => {});
    const { fileName, fileSize } = ctx.request.body as { fileName: string; fileSize: number };
    const { rows } = await pool.query('insert into bench_bare_documents (file_name, file_size) values ($1, $2) returning *', [fileName, fileSize]);
    ctx.status = 201;
    ctx.body = rows[0];
    return;
  }
  if (ctx.path === '/upload' && pool) {
    const file = await readUpload(ctx.req);
    const { facts, problem } = await pdf.inspect(file);
    if (!facts) return ctx.throw(400, problem);
    const { rows } = await pool.query(
      'insert into bench_bare_documents (file_name, file_size, page_count, sha256, content) values ($1, $2, $3, $4, $5) returning id, file_name, file_size, page_count, sha256, created_at',
      [file.fileName, file.bytes.length, facts.pageCount, file.sha256, file.bytes],
    );
    ctx.status = 201;
    ctx.body = rows[0];
    return;
  }
  ctx.body = { status: 'ok' };
});

void (async () => {
  // A table of its own (logged, as Signet's are), dropped on exit.
  await pool?.query(
    'create table if not exists bench_bare_documents (id bigserial primary key, file_name text not null, file_size int not null, page_count int, sha256 text, content bytea, created_at timestamptz not null default now())',
  );
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    process.stdout.write(`bare Koa server listening on 127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () =>
    server.close(
      () =>
        void Promise.allSettled([pool?.query('drop table if exists bench_bare_documents'), pdf.close()]).finally(
          () => void pool?.end().finally(() => process.exit(0)),
        ),
    ),
  );
})();
