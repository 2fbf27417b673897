import path from 'node:path';
import { openApiFile } from './openapi';

// `npm run sdk:generate`: the SDK's generated layer (sdk/src/generated/) from the checked-in OpenAPI
// document, docs/openapi.json (npm run openapi writes it), by @hey-api/openapi-ts (pinned).
// `npm run sdk:generate -- <dir>` generates into <dir> instead; test/unit/sdkGenerated.test.ts compares
// that with what is committed.

export const generatedDir = path.resolve(__dirname, '../sdk/src/generated');

export async function generateSdk(outputDir: string) {
  // An ES module only: imported, not required.
  const { createClient } = await import('@hey-api/openapi-ts');
  await createClient({
    input: openApiFile,
    output: { path: outputDir, clean: true },
    plugins: ['@hey-api/client-fetch', '@hey-api/typescript', { name: '@hey-api/sdk', operations: { strategy: 'flat' } }],
    logs: { level: 'silent', file: false },
  });
}

if (require.main === module) {
  const target = path.resolve(process.argv[2] ?? generatedDir);
  generateSdk(target).then(
    () => process.stderr.write(`generated ${path.relative(process.cwd(), target)}\n`),
    (error) => {
      process.stderr.write(`sdk:generate: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
