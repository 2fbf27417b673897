import path from 'node:path';
import type { Context } from 'koa';

// The public page that verifies a PDF: a static HTML shell; /verify-assets/verify.js sends the file
// dropped or chosen to POST /api/v1/verify and shows the answer. Nothing loads from anywhere else.

const ownDir = path.join(__dirname, 'assets');

/** Every file under /verify-assets/: its path on disk and content type. */
export const verifyAssets: Record<string, { file: string; type: string }> = {
  'verify.js': { file: path.join(ownDir, 'verify.js'), type: 'text/javascript' },
  'verify.css': { file: path.join(ownDir, 'verify.css'), type: 'text/css' },
};

export const verifyAssetPath = /^\/verify-assets\/([a-z.-]+)$/;

export const verifyPageCsp = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  'img-src data:',
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function setVerifyPageHeaders(ctx: Context) {
  ctx.set('Content-Security-Policy', verifyPageCsp);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'text/html';
}

export const verifyPage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Verify a sealed PDF · Signet</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/verify-assets/verify.css">
  <script type="module" src="/verify-assets/verify.js"></script>
</head>
<body>
  <main class="page">
    <h1>Verify a sealed PDF</h1>
    <p>Check that a PDF is one Signet sealed, unchanged since, and what its seal is: its level, and who vouches for its time. The file is checked and forgotten: it is not kept.</p>
    <form id="verify-form" class="drop" novalidate>
      <label for="file">PDF to verify</label>
      <input id="file" name="file" type="file" accept="application/pdf,.pdf" required>
      <p class="hint">Or drop the PDF anywhere in this box.</p>
      <button type="submit" id="verify-button">Verify</button>
    </form>
    <div id="answer" class="answer" role="status" aria-live="polite"></div>
    <noscript><p class="notice">This page needs JavaScript. Without it, send the PDF to POST /api/v1/verify.</p></noscript>
  </main>
</body>
</html>`;
