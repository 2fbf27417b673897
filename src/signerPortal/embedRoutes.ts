import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Db } from '../db';
import type { ClientInfo } from '../domain/signingRequests';
import { openEmbeddedSigningLink } from '../signingRequests/embedding';
import { signerBrandOf } from '../accounts/branding';
import { defaultBrand } from '../domain/brand';
import { embeddedLinkExpiredPageFor, embeddedSigningPageFor, linkNotValidPage, setSigningPageHeaders } from './page';

/** A page, or for a client that asks for JSON, the API's error body. */
function answer(ctx: Context, status: number, page: string, error?: { error: string; message: string }) {
  ctx.status = status;
  if (error && ctx.accepts('html', 'json') === 'json') ctx.body = error;
  else ctx.body = page;
}

/**
 * GET /embed/{token}: the one-time URL of POST /signatures/{id}/signers/{signerId}/embed. The first open
 * gets the signing page with its session, framable by the URL's origins; any later one 410 link_expired
 * (a page its parent hears `expired` from); an unknown token the "not valid" page, framable by nobody. A
 * HEAD (a link checker's) uses nothing up. The first open is an audit step, with the browser's address.
 */
export function embedRoutes(router: Router, db: Db, client: (ctx: Context) => ClientInfo) {
  router.get('/embed/:token', async (ctx) => {
    if (ctx.method === 'HEAD') {
      setSigningPageHeaders(ctx);
      ctx.status = 200;
      return;
    }
    const opening = await openEmbeddedSigningLink(db, ctx.params.token, client(ctx));
    const brand = opening ? await signerBrandOf(db, opening.accountId) : defaultBrand;
    setSigningPageHeaders(ctx, brand, opening?.page.allowedOrigins);
    if (!opening) return answer(ctx, 404, linkNotValidPage, { error: 'not_found', message: 'Signing link not found.' });
    if (opening.outcome === 'expired') {
      return answer(ctx, 410, embeddedLinkExpiredPageFor(brand, opening.page), {
        error: 'link_expired',
        message: 'This embedded signing URL has been opened already or has expired: it opens once. Make a new one.',
      });
    }
    answer(ctx, 200, embeddedSigningPageFor(brand, { ...opening.page, session: opening.sessionToken }));
  });
}
