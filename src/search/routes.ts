import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { routesOn } from '../api/route';
import type { RouteDeps } from '../api/routeDeps';
import type { SearchBackend } from './backend';
import { SearchQuerySchema, SearchResultSchema } from './schema';
import { searchAccount } from './service';

export function searchRoutes({ router, db, openapi, idempotency, search }: RouteDeps & { search: SearchBackend }) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn({ router, openapi, idempotency });

  route(
    {
      method: 'get',
      path: '/search',
      operationId: 'search',
      tag: 'Search',
      summary: 'Search documents, signing requests and templates',
      description:
        'Full text over document file names and PDF text, signing request titles and messages, signer names and e-mails, and template names; ' +
        'every word must match, the last one as a prefix. Only the calling account’s resources are searched.',
      query: SearchQuerySchema,
      response: SearchResultSchema,
      responseDescription: 'A page of hits',
      errors: [400, 401, 503],
    },
    async ({ query }, ctx) => searchAccount({ db, search }, account(ctx).id, query),
  );
}
