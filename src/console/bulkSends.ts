import type { Context } from 'koa';
import { TypeID } from 'typeid-js';
import { jsonOrMultipartBody } from '../api/middleware/body';
import { attachment, idParam, parsePathParams } from '../api/route';
import { parseInput, z } from '../api/validation';
import { csvJobOf, MAX_CSV_BYTES, sampleCsvOf } from '../bulkSends/csv';
import { BulkSendRowQuerySchema } from '../bulkSends/schema';
import { cancelBulkSend, createBulkSend, getBulkSend, presentBulkSend } from '../bulkSends/service';
import { listBulkRows, listBulkSends } from '../bulkSends/store';
import { bulkSendDeps } from '../bulkSends/workflow';
import { idFromSeed, newId } from '../ids';
import { findTemplate } from '../templates/store';
import { getTemplate, listTemplates } from '../templates/service';
import * as pages from './bulkSendPages';
import type { ConsoleKit } from './kit';

const IdParams = z.object({ id: idParam('bulkSend', 'Bulk send') });
const TemplateIdParams = z.object({ id: idParam('template', 'Template') });
/** The key the send form carries: a bulk send id made when the page was drawn. */
const SendKeySchema = z.object({ sendKey: idParam('bulkSend', 'must be the send form’s: reload the page and try again') });
const LIST_LIMIT = 50;
const ROWS_PAGE = 50;

/**
 * The job a Send of the form makes: its id derived from the account, the form's key and the rows, so that a second
 * click (or a retry) of the same file finds the first's job, while other rows sent from the same page are a job of
 * their own. Its time is the key's.
 */
function sentJobId(accountId: string, sendKey: string, rows: unknown[]) {
  const madeAt = new Date(parseInt(TypeID.fromString(sendKey).toUUID().replace(/-/g, '').slice(0, 12), 16));
  return idFromSeed('bulkSend', madeAt, `${accountId}\n${sendKey}\n${JSON.stringify(rows)}`);
}

/** Bulk sends in the console: the list, the CSV upload with its check, a job's progress and rows; the REST API's services. */
export function bulkSendPages({ router, deps, requireLogin, frame, page, account, form, seeOther }: ConsoleKit) {
  const { db, events, config, temporal, uploadGate } = deps;
  const bulk = bulkSendDeps({ db, events, config, temporal });
  const csvBody = jsonOrMultipartBody(MAX_CSV_BYTES, 'file', undefined);
  const here = (ctx: Context) => frame(ctx, '/app/bulk-sends');
  const jobOf = (ctx: Context) => getBulkSend(db, account(ctx).id, parsePathParams(IdParams, ctx.params, 'Bulk send').id);
  const templateOf = (ctx: Context, id: unknown) => getTemplate(db, account(ctx).id, parsePathParams(TemplateIdParams, { id }, 'Template').id);
  const templates = async (ctx: Context) => (await listTemplates(db, account(ctx).id, { limit: 100 })).data;

  router.get('/bulk-sends', requireLogin, async (ctx) => {
    const [jobs, choices] = await Promise.all([listBulkSends(db, account(ctx).id, LIST_LIMIT), templates(ctx)]);
    page(ctx, pages.bulkSendsPage(here(ctx), { jobs, templates: choices }));
  });

  router.get('/bulk-sends/new', requireLogin, async (ctx) => {
    const template = ctx.query.templateId ? await templateOf(ctx, ctx.query.templateId) : undefined;
    page(ctx, pages.newBulkSendPage(here(ctx), { templates: await templates(ctx), template, sendKey: newId('bulkSend'), maxBytes: MAX_CSV_BYTES }));
  });

  router.get('/bulk-sends/sample.csv', requireLogin, async (ctx) => {
    const template = await templateOf(ctx, ctx.query.templateId);
    ctx.type = 'text/csv';
    ctx.set('Content-Disposition', attachment(`${template.name}.csv`));
    ctx.body = sampleCsvOf(template);
  });

  // The form's Check and Send (bulkSends.js: multipart with X-CSRF-Token): the REST API's upload gate, CSV reader and service.
  router.post('/bulk-sends', requireLogin, uploadGate, csvBody, async (ctx) => {
    const job = await csvJobOf(ctx);
    const id = job.dryRun ? undefined : sentJobId(account(ctx).id, parseInput(SendKeySchema, ctx.request.body ?? {}).sendKey, job.rows);
    const made = await createBulkSend(bulk, account(ctx), job, { id });
    ctx.status = made.job ? 201 : 200;
    ctx.body = made.job ? { id: made.job.id } : made.check;
  });

  router.get('/bulk-sends/:id', requireLogin, async (ctx) => {
    const job = await jobOf(ctx);
    // The filter's "all" is an empty status.
    const query = parseInput(BulkSendRowQuerySchema, {
      limit: String(ROWS_PAGE),
      status: ctx.query.status || undefined,
      cursor: ctx.query.cursor || undefined,
    });
    const [progress, rows, template] = await Promise.all([
      presentBulkSend(db, job),
      listBulkRows(db, job.id, query),
      findTemplate(db, account(ctx).id, job.templateId),
    ]);
    page(ctx, pages.bulkSendPage(here(ctx), { job: progress, templateName: template?.name ?? null, rows, query }));
  });

  // What bulkSends.js polls while the job runs: GET /api/v1/bulk-sends/{id}'s answer.
  router.get('/bulk-sends/:id/progress', requireLogin, async (ctx) => {
    ctx.body = await presentBulkSend(db, await jobOf(ctx));
  });

  router.post('/bulk-sends/:id/cancel', requireLogin, async (ctx) => {
    const job = await jobOf(ctx);
    await cancelBulkSend(db, account(ctx).id, job.id, form(ctx).cancelSent === 'true');
    seeOther(ctx, `/app/bulk-sends/${job.id}`);
  });
}
