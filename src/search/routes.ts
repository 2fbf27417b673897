import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { jsonContent as json, pickErrors } from '../api/openapi';
import type { RouteDeps } from '../api/routeDeps';
import { parseInput } from '../api/validation';
import { SearchQuerySchema, SearchResultSchema } from './schema';
import { searchAccount } from './service';

export function searchRoutes({ router, db, openapi, search }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;

  openapi.registerPath({
    method: 'get',
    path: '/search',
    tags: ['Search'],
    summary: 'Search documents and signing requests',
    description:
      'Full text over document file names and PDF text, signing request titles and messages, and signer names and e-mails; ' +
      'every word must match, the last one as a prefix. Only the calling account’s resources are searched.',
    request: { query: SearchQuerySchema },
    responses: { 200: { description: 'A page of hits', ...json(SearchResultSchema) }, ...pickErrors(400, 401, 503) },
  });
  router.get('/search', async (ctx) => {
    const query = parseInput(SearchQuerySchema, ctx.query);
    ctx.body = await searchAccount({ db, search }, account(ctx).id, query);
  });
}
