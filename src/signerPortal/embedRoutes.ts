import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Db } from '../db';
import type { ClientInfo } from '../domain/signingRequests';
import { AppError, notFound } from '../errors';
import { findEmbeddedSigningLink, openEmbeddedSigningLink } from '../signingRequests/embed';
import { signerBrandOf } from '../accounts/branding';
import { embeddedLinkExpiredPage, embeddedSigningPageFor, linkNotValidPage, setSigningPageHeaders } from './page';

const linkNotFound = { error: 'not_found', message: 'Signing link not found.' };
const LINK_EXPIRED_MESSAGE = 'This embedded signing URL has been used already or has expired: it is used once. Make a new one.';

/** A page, or for a client that asks for JSON, the API's error body. */
function answer(ctx: Context, status: number, page: string, error?: { error: string; message: string }) {
  ctx.status = status;
  if (error && ctx.accepts('html', 'json') === 'json') ctx.body = error;
  else ctx.body = page;
}

/**
 * The one-time URL of POST /signatures/{id}/signers/{signerId}/embed. GET (and HEAD) use nothing up: a
 * usable URL gets the signing page without a session, framable by the URL's origins alone; a used or late
 * one 410 link_expired, a page that shows nothing of the request; an unknown token the "not valid" page,
 * framable by nobody. POST, which the page makes once it runs in a frame, uses the URL up: the first gets
 * the session and what the page needs (an audit step, with the browser's address), any later one 410.
 */
export function embedRoutes(router: Router, db: Db, client: (ctx: Context) => ClientInfo) {
  router.get('/embed/:token', async (ctx) => {
    const link = await findEmbeddedSigningLink(db, ctx.params.token);
    if (!link) {
      setSigningPageHeaders(ctx);
      return answer(ctx, 404, linkNotValidPage, linkNotFound);
    }
    if (link.outcome === 'expired') {
      setSigningPageHeaders(ctx, undefined, ['*']);
      return answer(ctx, 410, embeddedLinkExpiredPage, { error: 'link_expired', message: LINK_EXPIRED_MESSAGE });
    }
    const brand = await signerBrandOf(db, link.accountId);
    setSigningPageHeaders(ctx, brand, link.allowedOrigins);
    answer(ctx, 200, embeddedSigningPageFor(brand));
  });

  router.post('/embed/:token', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const opening = await openEmbeddedSigningLink(db, ctx.params.token, client(ctx));
    if (!opening) throw notFound('Signing link');
    if (opening.outcome === 'expired') throw new AppError(410, 'link_expired', LINK_EXPIRED_MESSAGE);
    ctx.body = { session: opening.sessionToken, ...opening.page };
  });
}
