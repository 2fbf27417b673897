import fs from 'node:fs';
import path from 'node:path';
import { createRouter } from '../api/router';

// The reference page at /docs: Swagger UI, served from the swagger-ui-dist package (no CDN), reading /api/v1/openapi.json.
// And / itself, where a browser opened on Signet's address lands: it goes on to the console.
const assetsDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const assets: Record<string, string> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'application/javascript',
};

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Signet API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

const init = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#reference', deepLinking: true, tryItOutEnabled: false });`;

export function docsRoutes() {
  const router = createRouter();
  router.get('/', (ctx) => ctx.redirect('/app'));
  // Safari and feed readers ask for /favicon.ico whatever the page's <link rel="icon"> says.
  router.get('/favicon.ico', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.redirect('/sign-assets/favicon.svg');
  });
  const csp = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; frame-ancestors 'none'";
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', csp);
    ctx.type = 'text/html';
    ctx.body = page;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'application/javascript';
    ctx.body = init;
  });
  router.get('/docs/:asset', (ctx) => {
    const type = assets[ctx.params.asset];
    if (!type) return;
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = fs.createReadStream(path.join(assetsDir, ctx.params.asset));
  });
  return router;
}
