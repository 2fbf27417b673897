import http from 'node:http';
import { expect } from 'chai';
import { createTestAccount } from '../support/system';

/** One raw request: fetch refuses TRACE. */
function send(url: URL, method: string, apiKey: string) {
  return new Promise<{ status: number; allow: string; type: string; body: string }>((resolve, reject) => {
    const request = http.request(url, { method, headers: { Authorization: `Bearer ${apiKey}` } }, (response) => {
      let body = '';
      response
        .on('data', (chunk) => (body += chunk))
        .on('end', () =>
          resolve({ status: response.statusCode!, allow: String(response.headers.allow ?? ''), type: response.headers['content-type'] ?? '', body }),
        );
    });
    request.on('error', reject).end();
  });
}

// The README's promise, on every path the OpenAPI document lists: a method the path does not have is a
// 405 JSON error whose Allow header names the methods it does have (HEAD with GET).
describe('405 with Allow on every path of the OpenAPI document', function () {
  this.timeout(120_000);

  it('TRACE on each path answers 405 and lists exactly the documented methods', async () => {
    const account = await createTestAccount();
    type Servers = { url: string }[] | undefined;
    const openapi = (await account.request('GET', '/api/v1/openapi.json')).body as {
      servers: Servers;
      paths: Record<string, Record<string, { servers?: Servers }>>;
    };
    const paths = Object.entries(openapi.paths);
    expect(paths).to.have.length.greaterThan(10);
    const wrong: string[] = [];
    for (const [template, operations] of paths) {
      const path = template.replace(/\{[^}]+\}/g, 'x_00000000000000000000000000');
      const documented = Object.keys(operations)
        .filter((key) => ['get', 'put', 'post', 'delete', 'patch'].includes(key))
        .map((method) => method.toUpperCase());
      const expected = [...documented, ...(documented.includes('GET') ? ['HEAD'] : [])].sort();
      // A path is served under its operations' servers where they say (the signer portal), else the document's.
      const server = Object.values(operations).find((operation) => operation.servers)?.servers ?? openapi.servers;
      const url = new URL(`${new URL(server![0].url).pathname.replace(/\/$/, '')}${path}`, account.system.url!);
      const { status, allow, type, body } = await send(url, 'TRACE', account.apiKey);
      const allowed = allow.split(', ').filter(Boolean).sort();
      if (status !== 405 || allowed.join() !== expected.join() || !/application\/json/.test(type) || typeof JSON.parse(body).error !== 'string') {
        wrong.push(`${template}: ${status}, Allow: ${allow} (documented: ${expected.join(', ')})`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });
});
