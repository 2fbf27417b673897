import fs from 'node:fs';
import { expect } from 'chai';
import { openApiFile, openApiText } from '../../scripts/openapi';
import { documentedServerUrl, openApiDocument } from '../../src/openapiDocument';

describe('the checked-in OpenAPI document (docs/openapi.json)', () => {
  it('is what the routes describe now: after changing the API, run npm run openapi', () => {
    const committed = fs.readFileSync(openApiFile, 'utf8');
    expect(committed === openApiText(), 'docs/openapi.json is stale: run npm run openapi (then npm run sdk:generate)').to.equal(true);
  });

  it('names http://localhost:3000 as its server, where an instance serves its own PUBLIC_URL: the one difference', () => {
    const { servers } = JSON.parse(fs.readFileSync(openApiFile, 'utf8'));
    expect(servers).to.deep.equal([{ url: `${documentedServerUrl}/api/v1` }]);
    const served = JSON.stringify(openApiDocument('https://sign.example.com'));
    expect(served.replaceAll('https://sign.example.com', documentedServerUrl) === JSON.stringify(openApiDocument())).to.equal(true);
  });
});
