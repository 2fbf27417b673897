import { expect } from 'chai';
import { newId } from '../../src/ids';
import { createPdfInspector } from '../../src/pdf/inspect';
import { createPageRenderer } from '../../src/pdf/pageRenderer';
import { startApp } from '../support/app';
import { client } from '../support/http';
import { makeDoubledPageTree, makeManyObjectPdf, makeManyPagePdf, makeMemoryHungryPdf, makeObjectStreamBomb, makePdf } from '../support/pdfs';
import { createTestAccount, testConfig } from '../support/system';

// PDFs crafted to cost a parser minutes or gigabytes. Each is made here, sent as an upload, and must be a
// 400 naming the limit it passes, answered in seconds by the pool of child processes that parses uploads,
// while the api keeps answering and its own memory stays where it was.

const MB = 2 ** 20;

function multipart(pdf: Buffer, fileName: string) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), fileName);
  return form;
}

/**
 * Runs `work` while asking GET /healthz every 20 ms: its result and the slowest answer, in ms. The pause
 * counts too (less its 20 ms): the api under test may share this process, and a thread it holds delays the
 * probe's timer as much as its answer.
 */
async function withHealthzTimed<T>(baseUrl: string, work: () => Promise<T>): Promise<{ result: T; slowestMs: number }> {
  let done = false;
  let slowestMs = 0;
  const probe = (async () => {
    while (!done) {
      const started = performance.now();
      await fetch(`${baseUrl}/healthz`).then((response) => response.arrayBuffer());
      await new Promise((resolve) => setTimeout(resolve, 20));
      slowestMs = Math.max(slowestMs, performance.now() - started - 20);
    }
  })();
  try {
    return { result: await work(), slowestMs };
  } finally {
    done = true;
    await probe;
  }
}

const objectLimit = 'content exceeds the limit of 100000 objects (PDF_MAX_OBJECTS)';
const hostile: { name: string; make: () => Buffer; problem: string }[] = [
  {
    name: 'a 600 KB PDF whose object stream inflates to 600 MiB',
    make: () => makeObjectStreamBomb(600 * MB),
    problem: 'content exceeds the limit of 67108864 bytes decompressed (PDF_MAX_DECOMPRESSED_BYTES)',
  },
  {
    name: 'a 2.5 KB page tree listing each child twice (4,194,304 pages to a naive walk)',
    make: () => makeDoubledPageTree(22),
    problem: 'content is not a parsable PDF: its page tree lists a page or node twice, or a node under the wrong parent',
  },
  { name: 'a 10,000-page PDF', make: () => makeManyPagePdf(10_000), problem: 'content exceeds the limit of 2000 pages (PDF_MAX_PAGES)' },
  { name: 'a PDF of 120,000 objects', make: () => makeManyObjectPdf(120_000), problem: objectLimit },
  { name: 'an object stream of 500,000 objects', make: () => makeManyObjectPdf(500_000, { inObjectStream: true }), problem: objectLimit },
  {
    name: 'a 20 KB PDF holding an array of 10,000,000 numbers',
    make: () => makeMemoryHungryPdf(10_000_000),
    problem: 'content exceeds the limit of 256 MB of memory (PDF_MAX_MEMORY_MB)',
  },
];

describe('hostile PDFs (the default limits)', function () {
  this.timeout(60_000);

  for (const { name, make, problem } of hostile) {
    it(`400 for ${name}, naming the limit, within 15 s; /healthz answers meanwhile and the api's memory stays put`, async () => {
      const { request, system } = await createTestAccount();
      const pdf = make();
      const rssBefore = process.memoryUsage().rss;
      const started = Date.now();
      const { result: response, slowestMs } = await withHealthzTimed(system.url!, () =>
        request('POST', '/api/v1/documents', { body: multipart(pdf, 'hostile.pdf') }),
      );
      expect(response.status, JSON.stringify(response.body)).to.equal(400);
      expect(response.body).to.deep.include({ error: 'validation_error', details: [problem] });
      expect(Date.now() - started).to.be.below(15_000);
      expect(slowestMs, 'slowest /healthz during the upload (ms)').to.be.below(1_000);
      // The api (this process) holds the upload and no more: the parse happens in a child.
      expect(process.memoryUsage().rss - rssBefore).to.be.below(100 * MB);
    });
  }

  it('the same limits for PUT /documents/:id/file', async () => {
    const { request } = await createTestAccount();
    const pdf = makeDoubledPageTree(22);
    const created = await request('POST', '/api/v1/documents', { json: { fileName: 'tree.pdf', fileSize: pdf.length } });
    const response = await request('PUT', `/api/v1/documents/${created.body.id}/file`, { body: pdf, headers: { 'Content-Type': 'application/pdf' } });
    expect(response.status).to.equal(400);
    expect(response.body.details[0]).to.match(/page tree lists a page or node twice/);
  });
});

describe('quota and rate limits come before any parsing', () => {
  let api: Awaited<ReturnType<typeof startApp>>;
  const pdf = createPdfInspector(testConfig());

  before(async () => {
    // An app of its own, so that its PDF pool's jobs are this test's alone; free accounts get 1 upload an hour.
    api = await startApp({ RATE_LIMIT_MULTIPLIER: '0.1' }, { deps: { pdf } });
  });
  after(async () => {
    await api.close();
    await pdf.close();
  });

  const requestAs = (apiKey: string) => client(api.url, apiKey);

  it('403 quota_exceeded for an account over its quota, and the PDF pool starts no job', async () => {
    const { apiKey, db, account } = await createTestAccount('free');
    await db('documents').insert(
      Array.from({ length: 5 }, (_, i) => ({ id: newId('document'), account_id: account.id, file_name: `d${i}.pdf`, file_size: 10, status: 'awaiting_file' })),
    );
    const jobsBefore = pdf.jobsStarted;
    const response = await requestAs(apiKey)('POST', '/api/v1/documents', { body: multipart(await makePdf(), 'over.pdf') });
    expect(response.status).to.equal(403);
    expect(response.body.error).to.equal('quota_exceeded');
    expect(pdf.jobsStarted).to.equal(jobsBefore);
  });

  it('429 rate_limit_exceeded for an account over its rate, and the PDF pool starts no job', async () => {
    const { apiKey } = await createTestAccount('free');
    const upload = async () => requestAs(apiKey)('POST', '/api/v1/documents', { body: multipart(await makePdf(), 'rated.pdf') });
    const jobsBefore = pdf.jobsStarted;
    expect((await upload()).status).to.equal(201);
    expect(pdf.jobsStarted).to.equal(jobsBefore + 1);
    const limited = await upload();
    expect(limited.status).to.equal(429);
    expect(pdf.jobsStarted).to.equal(jobsBefore + 1);
  });
});

describe('an accepted PDF that is slow to read (99,000 objects)', function () {
  this.timeout(120_000);
  const field = { role: 'signer', type: 'signature', page: 1, x: 50, y: 100, width: 150, height: 40 };
  let account: Awaited<ReturnType<typeof createTestAccount>>;
  let documentId: string;
  let templateId: string;

  before(async () => {
    account = await createTestAccount();
    const uploaded = await account.request('POST', '/api/v1/documents', { body: multipart(makeManyObjectPdf(99_000), 'slow.pdf') });
    expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
    documentId = uploaded.body.id;
    const template = await account.request('POST', '/api/v1/templates', { json: { name: 'Slow', documentId, roles: [{ name: 'signer' }], fields: [field] } });
    expect(template.status, JSON.stringify(template.body)).to.equal(201);
    templateId = template.body.id;
  });

  it('renders its template previews in child processes: they cost the api no more CPU than downloading the PDF', async () => {
    // pdf-lib reads this PDF in a quarter of a second of CPU or more: eight previews on the api's own thread
    // took 2.0–2.5 s more of it than eight downloads of the same file (the same read from the database,
    // which runs in this process too on PGlite); in child processes, 0.1–0.25 s more. This process is the
    // api and the test's client: CPU time, not wall-clock time.
    const cpuOf = async (path: string) => {
      const before = process.cpuUsage();
      const responses = await Promise.all(Array.from({ length: 8 }, () => account.request('GET', path)));
      const { user, system } = process.cpuUsage(before);
      for (const response of responses) expect(response.status, `${path}: ${JSON.stringify(response.body)}`).to.equal(200);
      return { ms: (user + system) / 1000, responses };
    };
    const downloads = await cpuOf(`/api/v1/documents/${documentId}/file`);
    const previews = await cpuOf(`/api/v1/templates/${templateId}/preview.png`);
    for (const preview of previews.responses) expect(preview.headers.get('content-type')).to.equal('image/png');
    expect(previews.ms, `CPU ms of the api process: 8 previews against 8 downloads (${downloads.ms.toFixed(0)} ms)`).to.be.below(downloads.ms + 1_000);
  });

  it('400 naming PDF_TIMEOUT_MS when a page takes longer than that to render, never a 500', async () => {
    const config = testConfig({ PDF_TIMEOUT_MS: '300' });
    const pages = createPageRenderer(config);
    const api = await startApp(config, { deps: { pages } });
    try {
      const response = await client(api.url, account.apiKey)('GET', `/api/v1/templates/${templateId}/preview.png`);
      expect(response.status).to.equal(400);
      expect(response.body).to.deep.include({
        error: 'validation_error',
        details: ['page 1 could not be rendered: content exceeds the limit of 300 ms of processing (PDF_TIMEOUT_MS)'],
      });
    } finally {
      await api.close();
      await pages.close();
    }
  });
});
