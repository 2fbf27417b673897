import type { Context, Middleware } from 'koa';
import type { Account } from '../accounts/service';
import { linksById, presentPage, routesOn } from '../api/route';
import type { RouteDeps } from '../api/routeDeps';
import { z } from '../api/validation';
import { DocumentIdParams } from '../documents/schema';
import { requestLimitsFrom } from '../documents/fields';
import { presentDetectedFields, presentTemplate } from './presenter';
import {
  DetectedFieldsSchema,
  TemplateCreateSchema,
  TemplateIdParams,
  TemplateListQuerySchema,
  TemplateListSchema,
  TemplatePreviewQuerySchema,
  TemplateSchema,
  TemplateUpdateSchema,
} from './schema';
import {
  assertTemplateQuota,
  createTemplate,
  deleteTemplate,
  detectDocumentFields,
  getTemplate,
  listTemplates,
  previewTemplatePage,
  templateCreateRules,
  templateUpdateRules,
  updateTemplate,
} from './service';

const tag = 'Templates';
const templateLinks = linksById('getTemplate', 'updateTemplate', 'deleteTemplate', 'previewTemplatePage');

export function templateRoutes({ router, db, events, rateLimit, openapi, idempotency, textTags, pages, config }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn({ router, openapi, idempotency });
  const deps = { db, events, textTags, pages, requestLimits: requestLimitsFrom(config) };
  // Before the body is read: an account at its quota costs no PDF read.
  const quota: Middleware = async (ctx, next) => {
    await assertTemplateQuota(db, account(ctx));
    await next();
  };

  route(
    {
      method: 'post',
      path: '/templates',
      operationId: 'createTemplate',
      tag,
      summary: 'Create a template from a document, or from several',
      description:
        'The template keeps its own copy of each document’s PDF. Every rule is reported at once: at least one role, unique role names, each field of an existing role, ' +
        'on a page its document has and inside it, at least one signature field per signer’s role and none for other roles, labels unique within the template. ' +
        'A document of documents that is not the account’s is a 404, one without its PDF a 409, as in a request. Counts against the plan’s templates.',
      before: [quota],
      body: TemplateCreateSchema,
      bodyRules: (body, ctx) => templateCreateRules(deps, account(ctx), body),
      status: 201,
      response: TemplateSchema,
      responseDescription: 'Created',
      links: templateLinks,
      errors: [400, 401, 403, 404, 409, 503],
    },
    async ({ body }, ctx) => presentTemplate(await createTemplate(deps, account(ctx), body)),
  );

  route(
    {
      method: 'get',
      path: '/templates',
      operationId: 'listTemplates',
      tag,
      summary: 'List templates, newest first',
      description: 'Rate limited per plan.',
      before: [rateLimit('GET /templates')],
      query: TemplateListQuerySchema,
      response: TemplateListSchema,
      responseDescription: 'A page of templates',
      errors: [400, 401, 429],
    },
    async ({ query }, ctx) => presentPage(await listTemplates(db, account(ctx).id, query), query.limit, presentTemplate),
  );

  route(
    {
      method: 'get',
      path: '/templates/{id}',
      operationId: 'getTemplate',
      tag,
      summary: 'Retrieve a template',
      params: TemplateIdParams,
      response: TemplateSchema,
      responseDescription: 'The template',
      errors: [401, 404],
    },
    async ({ params }, ctx) => presentTemplate(await getTemplate(db, account(ctx).id, params.id)),
  );

  route(
    {
      method: 'patch',
      path: '/templates/{id}',
      operationId: 'updateTemplate',
      tag,
      summary: 'Change a template’s name, description, documents, roles or fields',
      description: 'A new document of documents that is not the account’s is a 404, one without its PDF a 409.',
      params: TemplateIdParams,
      body: TemplateUpdateSchema,
      bodyRules: (body, ctx) => templateUpdateRules(deps, account(ctx).id, ctx.params.id, body),
      response: TemplateSchema,
      responseDescription: 'The template',
      errors: [400, 401, 404, 409],
    },
    async ({ params, body }, ctx) => presentTemplate(await updateTemplate(deps, account(ctx).id, params.id, body)),
  );

  route(
    {
      method: 'delete',
      path: '/templates/{id}',
      operationId: 'deleteTemplate',
      tag,
      summary: 'Delete a template',
      description: 'Requests already made from it keep their own copy of its PDF and fields.',
      params: TemplateIdParams,
      status: 204,
      response: { description: 'Deleted' },
      errors: [401, 404],
    },
    async ({ params }, ctx) => {
      await deleteTemplate(deps, account(ctx).id, params.id);
    },
  );

  route(
    {
      method: 'get',
      path: '/templates/{id}/preview.png',
      operationId: 'previewTemplatePage',
      tag,
      summary: 'A page of one of the template’s documents rendered with its fields drawn and labelled by role',
      description: 'A PNG at 72 dpi (one pixel per PDF point; a page whose longer side passes 4000 points is scaled down to 4000 pixels).',
      params: TemplateIdParams,
      query: TemplatePreviewQuerySchema,
      response: { description: 'The page as a PNG', content: { 'image/png': { schema: z.string().openapi({ format: 'binary' }) } } },
      errors: [400, 401, 404],
    },
    async ({ params, query }, ctx) => {
      ctx.type = 'image/png';
      ctx.body = await previewTemplatePage(deps, account(ctx).id, params.id, query.page, query.documentId);
    },
  );

  route(
    {
      method: 'post',
      path: '/documents/{id}/detect-fields',
      operationId: 'detectDocumentFields',
      tag,
      summary: 'Find the fields of the text tags printed in a document’s PDF (a dry run)',
      description:
        'Text such as {{signature:tenant}}, {{initials:tenant}}, {{date:tenant}}, {{text:tenant:rent}} or {{checkbox:landlord:agree}} ({{type:role}} or ' +
        '{{type:role:label}}) marks a field where it is printed: the tag’s own box, in PDF points from the bottom-left corner of its 1-based page. Option fields ' +
        'list their options and calculated fields their formula after the label: {{radio:tenant:Plan:Basic|Pro}}, {{calculated:tenant:Total:[Rent] * [Months]}}. Creates nothing; ' +
        'POST /templates with detectFields: true uses the same fields.',
      params: DocumentIdParams,
      response: DetectedFieldsSchema,
      responseDescription: 'The fields found, their roles, and warnings for tags left out',
      errors: [400, 401, 404, 409, 503],
    },
    async ({ params }, ctx) => presentDetectedFields(await detectDocumentFields(deps, account(ctx).id, params.id)),
  );
}
