import { expect } from 'chai';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
import { client } from '../support/http';
import { makePdf } from '../support/pdfs';
import { createTestAccount, sharedSystem, testConfig } from '../support/system';

describe('structured logs', () => {
  it('are JSON lines carrying the request id, and never the API key or PDF bytes', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const system = await sharedSystem();
    const app = createApp({ config: testConfig(), db: system.database.knex, logger, readinessChecks: {}, temporal: system.client, webhooks: system.webhooks, search: system.search });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { apiKey } = await createTestAccount();
      const request = client(`http://127.0.0.1:${(server.address() as { port: number }).port}`, apiKey);
      const pdf = await makePdf(['a secret contract']);
      const base64 = pdf.toString('base64');
      const created = await request('POST', '/api/v1/documents', { json: { fileName: 'log.pdf', fileSize: pdf.length, content: base64 } });
      expect(created.status).to.equal(201);
      await request('GET', '/api/v1/documents/doc_01jd8x3c6hf1z8k3q2v5n7m9pt');

      const entries = lines.map((line) => JSON.parse(line));
      const requests = entries.filter((entry) => entry.msg === 'request');
      expect(requests).to.have.length(2);
      expect(requests[0]).to.include({ method: 'POST', path: '/api/v1/documents', status: 201 });
      expect(requests[0].requestId).to.equal(created.headers.get('x-request-id'));
      const all = lines.join('\n');
      expect(all).not.to.contain(apiKey);
      expect(all).not.to.contain(apiKey.slice(8));
      expect(all).not.to.contain(base64.slice(0, 40));
    } finally {
      server.close();
    }
  });
});
