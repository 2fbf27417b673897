import { expect } from 'chai';
import { PDFDocument } from 'pdf-lib';
import { newId } from '../../src/ids';
import { createPdfInspector } from '../../src/pdf/inspect';
import { createPageRenderer, type PageRenderer } from '../../src/pdf/pageRenderer';
import { startApp } from '../support/app';
import { client } from '../support/http';
import { assemblePdf, makeDoubledPageTree, makeManyObjectPdf, makeManyPagePdf, makeMemoryHungryPdf, makeObjectStreamBomb, makePdf } from '../support/pdfs';
import { createTestAccount, testConfig } from '../support/system';

// PDFs crafted to cost a parser minutes or gigabytes. Each is made here, sent as an upload, and must be a
// 400 naming the limit it passes, parsed by the pool of child processes that parses uploads, while the api
// keeps answering, and the pool serves the next upload after it. How fast each is refused, /healthz's
// latency and the service's memory meanwhile are measured by `BENCH_ONLY=hostile npm run bench`
// (bench/hostilePdfs.ts), not asserted against a shared machine's clock.

const MB = 2 ** 20;
/** Only against a hang: an answer that never comes fails the test here rather than at mocha's timeout. */
const HANG_GUARD_MS = 20_000;

function multipart(pdf: Buffer, fileName: string) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), fileName);
  return form;
}

const healthz = (baseUrl: string) => fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(HANG_GUARD_MS) }).then((response) => response.status);

/** Runs `work` while asking GET /healthz again and again (20 ms apart, not to flood the api): its result and every status /healthz answered. */
async function withHealthzProbed<T>(baseUrl: string, work: () => Promise<T>): Promise<{ result: T; statuses: number[] }> {
  let done = false;
  const statuses: number[] = [];
  const probe = (async () => {
    while (!done) {
      statuses.push(await healthz(baseUrl));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    return { result: await work(), statuses };
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
  let api: Awaited<ReturnType<typeof startApp>>;
  const pdf = createPdfInspector(testConfig());

  before(async function () {
    this.timeout(120_000); // the shared system may be starting for this file alone
    // An app of its own, so that its PDF pool's jobs are this describe's alone.
    api = await startApp({}, { deps: { pdf } });
  });
  after(async () => {
    await api?.close();
    await pdf.close();
  });

  for (const { name, make, problem } of hostile) {
    it(`400 for ${name}, naming the limit, from a child process; /healthz answers meanwhile and the pool serves the next upload`, async () => {
      const request = client(api.url, (await createTestAccount()).apiKey);
      const hostilePdf = make();
      const jobsBefore = pdf.jobsStarted;
      const { result: response, statuses } = await withHealthzProbed(api.url, () =>
        request('POST', '/api/v1/documents', { body: multipart(hostilePdf, 'hostile.pdf') }),
      );
      expect(response.status, JSON.stringify(response.body)).to.equal(400);
      expect(response.body).to.deep.include({ error: 'validation_error', details: [problem] });
      expect(pdf.jobsStarted, 'PDFs handed to a child process').to.equal(jobsBefore + 1);
      expect(statuses, '/healthz during the upload').to.have.length.above(0);
      expect(
        statuses.every((status) => status === 200),
        `/healthz during the upload: ${statuses}`,
      ).to.equal(true);
      // Whatever the limit did to the child (a kill, for time and memory), the pool parses the next upload.
      const next = await request('POST', '/api/v1/documents', { body: multipart(await makePdf(), 'next.pdf') });
      expect(next.status, JSON.stringify(next.body)).to.equal(201);
      expect(pdf.jobsStarted).to.equal(jobsBefore + 2);
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

describe("the names of a PDF, as its check reads them (a faster reader than pdf-lib's own)", () => {
  const pdf = createPdfInspector(testConfig());
  after(() => pdf.close());

  it('reads escaped (#xx), long and undelimited names as pdf-lib does', async () => {
    const bytes = assemblePdf([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /#54ype /P#61ges /Kids [3 0 R 4 0 R] /Count 2 >>',
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /${'Long'.repeat(100)} 1 /A#20B /#43#44 >>`,
      '<</Type/Page/Parent 2 0 R/MediaBox[0 0 500 600]>>',
    ]);
    const inspection = await pdf.inspect({ sha256: 'names', bytes });
    expect(inspection.problem).to.equal(undefined);
    const byPdfLib = (await PDFDocument.load(bytes)).getPages().map((page) => [page.getWidth(), page.getHeight()]);
    expect(byPdfLib).to.deep.equal([
      [300, 400],
      [500, 600],
    ]);
    expect(inspection.facts?.pageSizes).to.deep.equal(byPdfLib);
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

  /** An app of its own with its own page renderer (its child processes), closed after `work`. */
  async function withOwnRenderer(settings: Record<string, string>, work: (request: ReturnType<typeof client>, pages: PageRenderer) => Promise<void>) {
    const config = testConfig(settings);
    const pages = createPageRenderer(config);
    const api = await startApp(config, { deps: { pages } });
    try {
      await work(client(api.url, account.apiKey), pages);
    } finally {
      await api.close();
      await pages.close();
    }
  }

  it('renders its template previews in child processes: each preview is a page handed to the page renderer', async () => {
    // pdf-lib takes a quarter of a second of CPU or more over this PDF, which the api's own thread must not
    // spend. What a preview costs is for the benchmarks; the generous PDF_TIMEOUT_MS only keeps a loaded
    // machine from failing the render.
    await withOwnRenderer({ PDF_TIMEOUT_MS: '60000' }, async (request, pages) => {
      for (let i = 1; i <= 2; i++) {
        const preview = await request('GET', `/api/v1/templates/${templateId}/preview.png`);
        expect(preview.status, JSON.stringify(preview.body)).to.equal(200);
        expect(preview.headers.get('content-type')).to.equal('image/png');
        expect(pages.jobsStarted, 'pages handed to a child process').to.equal(i);
      }
    });
  });

  it('400 naming PDF_TIMEOUT_MS when a page takes longer than that to render, never a 500', async () => {
    await withOwnRenderer({ PDF_TIMEOUT_MS: '300' }, async (request) => {
      const response = await request('GET', `/api/v1/templates/${templateId}/preview.png`);
      expect(response.status).to.equal(400);
      expect(response.body).to.deep.include({
        error: 'validation_error',
        details: ['page 1 could not be rendered: content exceeds the limit of 300 ms of processing (PDF_TIMEOUT_MS)'],
      });
    });
  });
});
