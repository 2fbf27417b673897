import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Context } from 'koa';
import { DEFAULT_BRAND_NAME, defaultBrand, type SignerBrand } from '../domain/brand';
import { escapeHtml } from '../mail/templates';

// The page a signer opens from their link: a static HTML shell; /sign-assets/signing.js fills it from the JSON endpoints.
// The PDF is drawn by pdf.js and signatures by signature_pad, both served from their npm packages (no CDN)
// like Swagger UI at /docs.

const pdfjsDir = path.join(path.dirname(require.resolve('pdfjs-dist/package.json')), 'build');
const signaturePadDir = path.dirname(require.resolve('signature_pad')); // its dist/ folder
const ownDir = path.join(__dirname, 'assets');

/** Every file under /sign-assets/: its path on disk and content type. */
export const signingAssets: Record<string, { file: string; type: string }> = {
  'signing.js': { file: path.join(ownDir, 'signing.js'), type: 'text/javascript' },
  'signing.css': { file: path.join(ownDir, 'signing.css'), type: 'text/css' },
  'embed.js': { file: path.join(ownDir, 'embed.js'), type: 'text/javascript' },
  'embed-open.js': { file: path.join(ownDir, 'embed-open.js'), type: 'text/javascript' },
  'embed-expired.js': { file: path.join(ownDir, 'embed-expired.js'), type: 'text/javascript' },
  'favicon.svg': { file: path.join(ownDir, 'favicon.svg'), type: 'image/svg+xml' },
  'pdf.min.mjs': { file: path.join(pdfjsDir, 'pdf.min.mjs'), type: 'text/javascript' },
  'pdf.worker.min.mjs': { file: path.join(pdfjsDir, 'pdf.worker.min.mjs'), type: 'text/javascript' },
  'signature-pad.min.mjs': { file: path.join(signaturePadDir, 'signature_pad.min.js'), type: 'text/javascript' },
};

export const signingAssetPath = /^\/sign-assets\/([a-z.-]+)$/;

// pdf.js needs a module worker (worker-src 'self') and draws pages on canvases; nothing else loads from anywhere.
// A brand's accent colour is the one inline style, allowed by its hash. No page may be framed, but an
// embedded page by the origins its URL was made for, and the page of a used one, which shows nothing, by any.
const signingPageCspWith = (styleHashes: string[], frameAncestors = "'none'") =>
  [
    "default-src 'none'",
    "script-src 'self'",
    ["style-src 'self'", ...styleHashes.map((hash) => `'${hash}'`)].join(' '),
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "frame-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');

export const signingPageCsp = signingPageCspWith([]);

// The accent colour (#rrggbb, checked when it was set) as a CSS variable that signing.css reads.
const accentStyle = (brand: SignerBrand) => (brand.accentColor ? `:root{--accent:${brand.accentColor}}` : undefined);
const styleHash = (css: string) => `sha256-${createHash('sha256').update(css).digest('base64')}`;

/**
 * The headers of every signing page: the token is in the URL, so nothing may leak it or keep it. An
 * embedded page names the origins that may frame it (validated origins, or `*`: nothing in them can end
 * the directive); no X-Frame-Options says otherwise.
 */
export function setSigningPageHeaders(ctx: Context, brand: SignerBrand = defaultBrand, frameAncestors?: string[]) {
  const accent = accentStyle(brand);
  ctx.set('Content-Security-Policy', signingPageCspWith(accent ? [styleHash(accent)] : [], frameAncestors?.join(' ')));
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'text/html';
}

// A brand's logo (or its name) above the page, and its support address below; nothing without a brand.
const brandHeader = (brand: SignerBrand) =>
  brand.logoPath || brand.name !== DEFAULT_BRAND_NAME
    ? `
    <header class="brand-bar">${
      brand.logoPath
        ? `<img class="brand-logo" src="${escapeHtml(brand.logoPath)}" alt="${escapeHtml(brand.name)}">`
        : `<span class="brand-name">${escapeHtml(brand.name)}</span>`
    }</header>`
    : '';
const brandFooter = (brand: SignerBrand) =>
  brand.supportEmail
    ? `
    <footer class="brand-footer"><p>Questions? Write to <a href="mailto:${escapeHtml(brand.supportEmail)}">${escapeHtml(brand.supportEmail)}</a>.</p></footer>`
    : '';

const shell = (title: string, main: string, script = '', brand: SignerBrand = defaultBrand) => {
  const accent = accentStyle(brand);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <meta name="application-name" content="${escapeHtml(brand.name)}">
  <title>${escapeHtml(title)} · ${escapeHtml(brand.name)}</title>
  <link rel="icon" href="/sign-assets/favicon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/sign-assets/signing.css">${accent ? `\n  <style>${accent}</style>` : ''}${script}
</head>
<body>${brandHeader(brand)}
  <main class="page">
${main}
  </main>${brandFooter(brand)}
</body>
</html>`;
};

const signingMain = `    <p id="loading" class="notice" aria-live="polite">Loading the document…</p>
    <div id="alert" class="alert" role="alert" hidden></div>

    <section id="verify" class="verify" aria-labelledby="verify-heading" hidden>
      <h1 id="verify-heading">Confirm it is you</h1>
      <p id="verify-text"></p>
      <p id="verify-status" class="verify-status" role="status" hidden></p>
      <form id="verify-form" class="verify-form" novalidate>
        <label for="verify-code">Code</label>
        <input id="verify-code" name="code" type="text" autocomplete="one-time-code" spellcheck="false" maxlength="12" required>
        <div class="actions">
          <button type="submit" id="verify-button" class="primary">Continue</button>
          <button type="button" id="resend-button" class="secondary" hidden>Send a new code</button>
        </div>
      </form>
    </section>

    <header id="summary" hidden>
      <h1 id="title"></h1>
      <p class="sender">From <span id="sender-name"></span> <span id="sender-email"></span></p>
      <p id="message" class="message" hidden></p>
    </header>

    <section id="outcome" class="outcome" hidden aria-live="polite">
      <h2 id="outcome-title" tabindex="-1"></h2>
      <p id="outcome-text"></p>
    </section>

    <section id="document" class="document" aria-labelledby="document-heading" hidden>
      <h2 id="document-heading">Document: <span id="file-name"></span></h2>
      <div id="zoom" class="zoom" role="group" aria-label="Zoom" hidden>
        <button type="button" id="zoom-out" class="secondary" aria-label="Zoom out">−</button>
        <output id="zoom-level" aria-live="polite"></output>
        <button type="button" id="zoom-in" class="secondary" aria-label="Zoom in">+</button>
        <button type="button" id="zoom-fit" class="secondary" aria-pressed="true">Fit to width</button>
      </div>
      <div id="pages" class="pages" role="region" aria-label="Pages" tabindex="0"></div>
      <p><a id="download" class="download" download>Download the PDF</a></p>
    </section>

    <section id="sign" class="sign" aria-labelledby="sign-heading" hidden>
      <div id="fields" class="fields" hidden>
        <h2>Your fields</h2>
        <p class="hint">Each is marked on the document above. Fields the sender filled in are fixed.</p>
        <div id="field-list" class="field-list"></div>
      </div>
      <h2 id="sign-heading">Your signature</h2>
      <p id="signature-places" class="hint signature-part"></p>
      <fieldset class="modes signature-part">
        <legend>How do you want to sign?</legend>
        <label><input type="radio" name="mode" value="drawn" checked> Draw</label>
        <label><input type="radio" name="mode" value="typed"> Type</label>
      </fieldset>
      <div id="drawn" class="drawn signature-part">
        <canvas id="pad" class="pad" role="img" aria-label="Signature pad: draw your signature with a finger, pen or mouse"></canvas>
        <button type="button" id="clear" class="secondary">Clear</button>
      </div>
      <div id="typed" class="typed signature-part" hidden>
        <label for="typed-name">Your full name</label>
        <input id="typed-name" type="text" autocomplete="name" maxlength="200" aria-describedby="typed-other-name">
        <p id="typed-other-name" class="hint" hidden></p>
        <p id="typed-preview" class="typed-preview" aria-hidden="true"></p>
      </div>
      <div id="initials" class="initials" hidden>
        <h3>Your initials</h3>
        <div id="initials-drawn" class="drawn">
          <canvas id="initials-pad" class="pad initials-pad" role="img" aria-label="Initials pad: draw your initials with a finger, pen or mouse"></canvas>
          <button type="button" id="clear-initials" class="secondary" aria-label="Clear the initials">Clear</button>
        </div>
        <div id="initials-typed" class="typed" hidden>
          <label for="typed-initials">Your initials</label>
          <input id="typed-initials" type="text" autocomplete="off" maxlength="20">
        </div>
      </div>
      <label class="consent signature-part"><input type="checkbox" id="consent"> I agree to sign this document electronically</label>
      <p id="missing" class="missing" aria-live="polite" hidden></p>
      <div class="actions">
        <button type="button" id="sign-button" class="primary" aria-describedby="missing" disabled>Sign</button>
        <button type="button" id="decline-button" class="secondary">Decline</button>
      </div>
      <div id="decline" class="decline" hidden>
        <label for="reason">Why are you declining? (required)</label>
        <textarea id="reason" rows="3" maxlength="1000" required></textarea>
        <div class="actions">
          <button type="button" id="decline-confirm" class="danger" disabled>Decline to sign</button>
          <button type="button" id="decline-cancel" class="secondary">Cancel</button>
        </div>
      </div>
    </section>

    <noscript><p class="notice">This page needs JavaScript to show the document and record your signature.</p></noscript>`;
const signingScript = '\n  <script type="module" src="/sign-assets/signing.js"></script>';

/** The signing page in the brand of the request's account. */
export const signingPageFor = (brand: SignerBrand) => shell('Sign a document', signingMain, signingScript, brand);

/**
 * The signing page of an embedded URL before its session: embed-open.js starts the session from a frame,
 * then signing.js fills the page. It holds nothing of the request.
 */
export const embeddedSigningPageFor = (brand: SignerBrand) =>
  shell('Sign a document', signingMain, '\n  <script type="module" src="/sign-assets/embed-open.js"></script>', brand);

/**
 * An embedded URL used already or too late: whoever holds it learns nothing, neither the account's brand
 * nor the request, its signer, origins or return URL. Any page may frame it and hear `expired`.
 */
export const embeddedLinkExpiredPage = shell(
  'Link expired',
  `    <section class="outcome expired">
      <h1>This signing link has expired</h1>
      <p>It can be used once, within minutes of being made. Reload the page you came from to get a new one.</p>
    </section>`,
  '\n  <script type="module" src="/sign-assets/embed-expired.js"></script>',
);

// An unknown token names no account, so no brand: Signet's page.
export const linkNotValidPage = shell(
  'Link not valid',
  `    <section class="outcome">
      <h1>This signing link is not valid</h1>
      <p>Check that you opened the whole link from your e-mail, or ask the sender for a new one.</p>
    </section>`,
);
