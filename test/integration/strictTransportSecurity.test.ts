import { expect } from 'chai';
import type { Config } from '../../src/config';
import { startApp } from '../support/app';
import { client } from '../support/http';
import { testConfig } from '../support/system';

const HSTS = 'max-age=31536000; includeSubDomains';

async function withApp(config: Config, use: (baseUrl: string) => Promise<void>) {
  const api = await startApp(config);
  try {
    await use(api.url);
  } finally {
    void api.close();
  }
}

// Answers of every kind: JSON, HTML, a redirect, a static asset, errors from a router, a guard, a body parser
// and the path check before the routers.
const requests: [string, string, { body?: Buffer; headers?: Record<string, string> }?][] = [
  ['GET', '/healthz'],
  ['GET', '/docs'],
  ['GET', '/app/login'],
  ['GET', '/app/settings/api-keys'],
  ['GET', '/app/assets/console.css'],
  ['GET', `/sign/${'a'.repeat(43)}`],
  ['GET', '/api/v1/documents'],
  ['GET', '/nowhere'],
  ['GET', '/a//b'],
  ['POST', '/api/v1/documents', { body: Buffer.from('{}'), headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'x-weird' } }],
];

describe('Strict-Transport-Security', () => {
  it('is on every response in production with an https PUBLIC_URL', async () => {
    await withApp({ ...testConfig({ NODE_ENV: 'production' }), publicUrl: 'https://sign.example.com' }, async (baseUrl) => {
      const request = client(baseUrl);
      for (const [method, path, options] of requests) {
        const response = await request(method, path, options);
        expect(response.headers.get('strict-transport-security'), `${method} ${path} ${response.status}`).to.equal(HSTS);
      }
    });
  });

  it('is not sent in development, nor in production with an http PUBLIC_URL', async () => {
    for (const config of [testConfig({ NODE_ENV: 'development' }), { ...testConfig({ NODE_ENV: 'production' }), publicUrl: 'http://sign.internal' }]) {
      await withApp(config, async (baseUrl) => {
        const request = client(baseUrl);
        for (const [method, path, options] of requests) {
          expect((await request(method, path, options)).headers.get('strict-transport-security'), `${config.NODE_ENV} ${path}`).to.equal(null);
        }
      });
    }
  });
});
