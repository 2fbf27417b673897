import type { Context } from 'koa';
import { BrandingUpdateSchema, getBranding, MIN_CONTRAST, presentBranding, updateBranding } from '../accounts/branding';
import { MAX_LOGO_BYTES, MAX_LOGO_SIDE } from '../accounts/logo';
import { jsonBody } from '../api/middleware/body';
import { parseInput } from '../api/validation';
import { AppError } from '../errors';
import { html } from './html';
import { can, csrfField, layout, problemList, type Frame } from './pages';
import type { ConsoleKit } from './kit';

// The console's brand settings (/app/settings/branding): the REST API's schema and service behind a
// session. The text fields post as a form; the logo is read by /app/assets/branding.js and sent as a
// data: URL, as an API client sends it.

type Branding = ReturnType<typeof presentBranding>;
type BrandingForm = { name: string; accentColor: string; emailFooter: string; supportEmail: string };

const formOf = (brand: Branding): BrandingForm => ({
  name: brand.name ?? '',
  accentColor: brand.accentColor ?? '',
  emailFooter: brand.emailFooter ?? '',
  supportEmail: brand.supportEmail ?? '',
});

/** The brand as it is, for a member whose role does not change it. */
const brandFacts = (brand: Branding) =>
  html`<p class="notice">Only the owner and admins change the brand.</p>
    <dl class="card facts">
      <dt>Name</dt><dd>${brand.name ?? 'Signet'}</dd>
      <dt>Accent colour</dt><dd>${brand.accentColor ?? 'Signet’s'}</dd>
      <dt>E-mail footer</dt><dd>${brand.emailFooter ?? '—'}</dd>
      <dt>Support e-mail</dt><dd>${brand.supportEmail ?? '—'}</dd>
      <dt>Logo</dt><dd>${brand.logo ? html`<img class="brand-logo" src="${new URL(brand.logo.url).pathname}" alt="Your logo" height="40">` : 'None'}</dd>
    </dl>`;

export function brandingPage(
  frame: Frame,
  brand: Branding,
  { values = formOf(brand), problems = [], saved = false }: { values?: BrandingForm; problems?: string[]; saved?: boolean } = {},
) {
  const value = (field: keyof BrandingForm) => values[field];
  return layout(
    frame,
    'Branding',
    html`<h1>Branding</h1>
    <p>Signers see your brand in place of Signet’s: on the signing page and in every e-mail to them.</p>
    ${problemList(problems)}
    ${saved ? html`<p class="notice" role="status">Saved.</p>` : ''}
    ${
      can(frame, 'POST', '/app/settings/branding')
        ? html`<form method="post" action="/app/settings/branding" class="card stack">
      ${csrfField(frame.csrf)}
      <label for="brand-name">Name</label>
      <input id="brand-name" name="name" maxlength="100" value="${value('name')}" aria-describedby="brand-name-hint">
      <p id="brand-name-hint" class="hint">Shown in place of “Signet”. Leave empty for Signet.</p>
      <label for="brand-accent">Accent colour</label>
      <input id="brand-accent" name="accentColor" maxlength="7" placeholder="#1d4ed8" value="${value('accentColor')}" aria-describedby="brand-accent-hint">
      <p id="brand-accent-hint" class="hint">#rrggbb, for buttons: at least ${MIN_CONTRAST}:1 against white (WCAG 2.1 AA), so white text on it can be read.</p>
      <label for="brand-footer">E-mail footer</label>
      <input id="brand-footer" name="emailFooter" maxlength="500" value="${value('emailFooter')}">
      <label for="brand-support">Support e-mail</label>
      <input id="brand-support" name="supportEmail" type="email" maxlength="320" value="${value('supportEmail')}">
      <button type="submit" class="primary">Save</button>
    </form>
    <section class="card stack" aria-labelledby="logo-heading">
      <h2 id="logo-heading">Logo</h2>
      ${brand.logo ? html`<p><img class="brand-logo" src="${new URL(brand.logo.url).pathname}" alt="Your logo" height="40"></p>` : html`<p>No logo.</p>`}
      <label for="brand-logo">PNG or SVG, at most ${MAX_LOGO_BYTES / 1024} KB and ${MAX_LOGO_SIDE} × ${MAX_LOGO_SIDE} pixels</label>
      <input id="brand-logo" type="file" accept="image/png,image/svg+xml" data-csrf="${frame.csrf}">
      <p id="logo-status" aria-live="polite"></p>
      ${
        brand.logo
          ? html`<form method="post" action="/app/settings/branding/logo/remove">${csrfField(frame.csrf)}<button type="submit" class="danger">Remove the logo</button></form>`
          : ''
      }
    </section>`
        : brandFacts(brand)
    }
    <p class="hint">The same settings through the API: <code>PATCH /api/v1/account/branding</code>.</p>`,
    ['branding.js'],
  );
}

export function brandingPages({ router, deps, requireLogin, frame, page, account, form, seeOther }: ConsoleKit) {
  const { db, config } = deps;
  const here = (ctx: Context) => frame(ctx, '/app/settings/branding');
  const current = async (ctx: Context) => presentBranding(await getBranding(db, account(ctx).id), config.publicUrl);

  router.get('/settings/branding', requireLogin, async (ctx) => page(ctx, brandingPage(here(ctx), await current(ctx), { saved: ctx.query.saved === '1' })));

  // An empty field clears it, as null does on the REST API.
  router.post('/settings/branding', requireLogin, async (ctx) => {
    const values = form(ctx);
    const given: BrandingForm = {
      name: values.name?.trim() ?? '',
      accentColor: values.accentColor?.trim() ?? '',
      emailFooter: values.emailFooter?.trim() ?? '',
      supportEmail: values.supportEmail?.trim() ?? '',
    };
    try {
      const input = parseInput(BrandingUpdateSchema, Object.fromEntries(Object.entries(given).map(([field, text]) => [field, text || null])));
      await updateBranding(db, account(ctx).id, input);
      seeOther(ctx, '/app/settings/branding?saved=1');
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      page(ctx, brandingPage(here(ctx), await current(ctx), { values: given, problems: error.details ?? [error.message] }), error.status);
    }
  });

  // branding.js sends the file as a data: URL with the CSRF token in its header.
  router.post('/settings/branding/logo', requireLogin, jsonBody(MAX_LOGO_BYTES), async (ctx) => {
    const { logo } = parseInput(BrandingUpdateSchema.pick({ logo: true }), ctx.request.body ?? {});
    ctx.body = presentBranding(await updateBranding(db, account(ctx).id, { logo: logo ?? null }), config.publicUrl);
  });
  router.post('/settings/branding/logo/remove', requireLogin, async (ctx) => {
    await updateBranding(db, account(ctx).id, { logo: null });
    seeOther(ctx, '/app/settings/branding?saved=1');
  });
}
