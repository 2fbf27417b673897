import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { jsonOrMultipartBody } from '../api/middleware/body';
import { idempotentId } from '../api/middleware/idempotency';
import type { RouteDeps } from '../api/routeDeps';
import { idParam, linksById, presentPage, routesOn } from '../api/route';
import { parseInput, z } from '../api/validation';
import { csvJobOf, CsvUploadSchema, MAX_CSV_BYTES } from './csv';
import type { RowSource } from './rows';
import {
  BulkSendCancelSchema,
  BulkSendCheckSchema,
  BulkSendCreateSchema,
  BulkSendRowListSchema,
  BulkSendRowQuerySchema,
  BulkSendRowSchema,
  BulkSendSchema,
  MAX_BULK_ROWS,
  MAX_LISTED_PROBLEMS,
} from './schema';
import { cancelBulkSend, createBulkSend, getBulkSend, presentBulkSend } from './service';
import { listBulkRows } from './store';
import { bulkSendDeps } from './workflow';

const IdParams = z.object({ id: idParam('bulkSend', 'Bulk send') });
const tag = 'Bulk sends';

/** The job the body asks for: JSON as it is, or a CSV upload's rows read into JSON rows (csvJobOf). */
async function jobOf(ctx: Context): Promise<{ templateId: string; rows: unknown[]; dryRun: boolean; source: RowSource; problems: string[] }> {
  if (!ctx.is('multipart/form-data')) return { ...parseInput(BulkSendCreateSchema, ctx.request.body ?? {}), source: 'json', problems: [] };
  return csvJobOf(ctx);
}

export function bulkSendRoutes({ router, db, events, config, openapi, idempotency, temporal, uploadGate }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn({ router, openapi, idempotency });
  const deps = bulkSendDeps({ db, events, config, temporal });
  const multipart = jsonOrMultipartBody(MAX_CSV_BYTES, 'file', undefined);
  // The rows are checked one by one (problems by row, at most MAX_LISTED_PROBLEMS): the body's schema takes any, and names their shape.
  openapi.register('BulkSendRow', BulkSendRowSchema);

  route(
    {
      method: 'post',
      path: '/bulk-sends',
      operationId: 'createBulkSend',
      tag,
      summary: 'Send one template to many recipients: one signing request per row',
      description:
        `Up to ${MAX_BULK_ROWS} rows, as JSON or as a CSV upload. Every row is checked as the request it becomes before anything is sent: a 400 lists the problems ` +
        `by row and key (JSON: rows.3.recipients.tenant.email) or row and column (CSV), the first ${MAX_LISTED_PROBLEMS} with their count. ` +
        'Rows that need more documents than the month leaves, or more invitations than the hour leaves, are refused up front (403 quota_exceeded, with the numbers). ' +
        'dryRun answers the check and sends nothing. Each row becomes exactly one request, whatever is retried; GET /bulk-sends/{id} shows the progress.',
      parseBody: multipart,
      before: [uploadGate],
      requestBody: {
        content: {
          'application/json': { schema: BulkSendCreateSchema },
          'multipart/form-data': { schema: CsvUploadSchema, encoding: { file: { contentType: 'text/csv' } } },
        },
      },
      status: 201,
      response: z.union([BulkSendSchema, BulkSendCheckSchema]),
      responseDescription: 'Created: its rows are being sent (a dry run answers 200 with what would be sent)',
      links: linksById('getBulkSend', 'listBulkSendRows', 'cancelBulkSend'),
      errors: [400, 401, 403, 404, 413, 415],
    },
    async (_input, ctx) => {
      const made = await createBulkSend(deps, account(ctx), await jobOf(ctx), { id: idempotentId(ctx, 'bulkSend') });
      if (made.job) return presentBulkSend(db, made.job);
      // A dry run made nothing: 200, not 201.
      ctx.status = 200;
      ctx.body = made.check;
      return undefined;
    },
  );

  route(
    {
      method: 'get',
      path: '/bulk-sends/{id}',
      operationId: 'getBulkSend',
      tag,
      summary: 'A bulk send: its rows by outcome and their requests by status',
      params: IdParams,
      response: BulkSendSchema,
      errors: [401, 404],
    },
    async ({ params }, ctx) => presentBulkSend(db, await getBulkSend(db, account(ctx).id, params.id)),
  );

  route(
    {
      method: 'get',
      path: '/bulk-sends/{id}/rows',
      operationId: 'listBulkSendRows',
      tag,
      summary: 'A bulk send’s rows, in order, each with its request or its error',
      params: IdParams,
      query: BulkSendRowQuerySchema,
      response: BulkSendRowListSchema,
      errors: [400, 401, 404],
    },
    async ({ params, query }, ctx) => {
      await getBulkSend(db, account(ctx).id, params.id);
      return presentPage(await listBulkRows(db, params.id, query), query.limit, (row) => ({
        row: row.row,
        externalId: row.external_id,
        status: row.status,
        signingRequestId: row.signing_request_id,
        requestStatus: row.request_status,
        error: row.error,
      }));
    },
  );

  route(
    {
      method: 'post',
      path: '/bulk-sends/{id}/cancel',
      operationId: 'cancelBulkSend',
      tag,
      summary: 'Stop the rows not yet sent; with cancelSent, cancel the pending requests already sent too',
      params: IdParams,
      body: BulkSendCancelSchema,
      response: BulkSendSchema,
      errors: [400, 401, 404],
    },
    async ({ params, body }, ctx) => presentBulkSend(db, await cancelBulkSend(db, account(ctx).id, params.id, body.cancelSent)),
  );
}
