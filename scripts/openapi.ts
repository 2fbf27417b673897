import fs from 'node:fs';
import path from 'node:path';
import { openApiDocument } from '../src/openapiDocument';

// `npm run openapi`: writes the OpenAPI document to docs/openapi.json, which is checked in (the SDK is
// generated from it: scripts/sdk-generate.ts); test/unit/openapiFile.test.ts fails when it is stale.

export const openApiFile = path.resolve(__dirname, '../docs/openapi.json');

export const openApiText = () => `${JSON.stringify(openApiDocument(), null, 2)}\n`;

if (require.main === module) {
  fs.writeFileSync(openApiFile, openApiText());
  process.stderr.write(`wrote ${path.relative(process.cwd(), openApiFile)}\n`);
}
