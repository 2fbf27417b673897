import { expect } from 'chai';
import SwaggerParser from '@apidevtools/swagger-parser';
import { client } from '../support/http';
import { sharedSystem } from '../support/system';

describe('GET /healthz and /readyz', () => {
  it('healthz answers while the process is up', async () => {
    const request = client((await sharedSystem()).url!);
    const response = await request('GET', '/healthz');
    expect(response.status).to.equal(200);
    expect(response.body).to.deep.equal({ status: 'ok' });
  });

  it('readyz checks the database, Temporal and, when configured, Elasticsearch', async () => {
    const request = client((await sharedSystem()).url!);
    const response = await request('GET', '/readyz');
    expect(response.status).to.equal(200);
    expect(response.body.status).to.equal('ready');
    expect(response.body.checks).to.include({ database: 'ok', temporal: 'ok' });
    if (process.env.ELASTICSEARCH_URL) expect(response.body.checks.search).to.equal('ok');
  });
});

describe('GET /api/v1/openapi.json and /docs', () => {
  it('is a valid OpenAPI 3.1 document (checked by swagger-parser) describing every endpoint', async () => {
    const request = client((await sharedSystem()).url!);
    const response = await request('GET', '/api/v1/openapi.json');
    expect(response.status).to.equal(200);
    expect(response.body.openapi).to.equal('3.1.0');
    await SwaggerParser.validate(structuredClone(response.body));
    expect(Object.keys(response.body.paths)).to.include.members(['/documents', '/documents/{id}', '/documents/{id}/file', '/account']);
    const { paths, components } = response.body;
    expect(paths['/documents'].post.responses).to.include.keys('201', '400', '401', '403', '413', '415', '429');
    expect(paths['/documents'].post.requestBody.required).to.equal(true);
    expect(paths['/signatures/{id}/cancel'].post.requestBody.required, 'every field of a cancel is optional').to.equal(false);
    expect(components.schemas.DocumentUpload.required).to.deep.equal(['file']);
    expect(components.schemas.WebhookCreate.properties.events.items.enum).to.include.members(['*', 'document.created']);
    expect(components.schemas.WebhookCreate.properties.url.pattern).to.match(/^\^https:/);
    expect(paths['/documents'].post.responses['201'].links.GetDocument).to.deep.equal({
      operationId: 'getDocument',
      parameters: { id: '$response.body#/id' },
    });
  });

  it('serves a readable reference page with its assets, without a CDN', async () => {
    const request = client((await sharedSystem()).url!);
    const page = await request('GET', '/docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.contain('text/html');
    expect(page.headers.get('content-security-policy')).to.contain("default-src 'self'");
    expect(page.body).to.contain('/docs/swagger-ui-bundle.js');
    const script = await request('GET', '/docs/swagger-ui-bundle.js');
    expect(script.status).to.equal(200);
    expect(script.bytes.length).to.be.greaterThan(100_000);
    expect((await request('GET', '/docs/init.js')).body).to.contain('/api/v1/openapi.json');
  });
});
