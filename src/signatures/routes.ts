import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { jsonBody } from '../api/middleware/body';
import { jsonContent as json, pickErrors } from '../api/openapi';
import type { RouteDeps } from '../api/routeDeps';
import { parseInput, z } from '../api/validation';
import { cancelUpdate, remindUpdate } from '../../workflows/definitions';
import { presentSigningRequest } from './presenter';
import { CancelSchema, SigningRequestCreateSchema, SigningRequestListQuerySchema, SigningRequestSchema } from './schema';
import {
  assertPending,
  createSigningLink,
  createSigningRequest,
  getAuditTrail,
  getSealedDocument,
  getSigningRequest,
  listSigningRequests,
  runUpdate,
} from './service';

const IdParams = z.object({ id: z.string().openapi({ example: 'sr_01jd8x3c6hf1z8k3q2v5n7m9pt' }) });
const SignerParams = IdParams.extend({ signerId: z.string().openapi({ example: 'sgr_01jd8x3c6hf1z8k3q2v5n7m9pt' }) });

export function signatureRoutes({ router, db, config, rateLimit, openapi, temporal }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const deps = { db, temporal, taskQueue: config.TEMPORAL_TASK_QUEUE, publicUrl: config.publicUrl };
  const handle = (id: string) => temporal.workflow.getHandle(id);

  openapi.registerPath({
    method: 'post',
    path: '/signatures',
    tags: ['Signing requests'],
    summary: 'Send a document to one or more signers',
    request: { body: json(SigningRequestCreateSchema) },
    responses: { 201: { description: 'Created; invitations are on their way', ...json(SigningRequestSchema) }, ...pickErrors(400, 401, 404, 409, 429) },
  });
  router.post('/signatures', rateLimit('POST /signatures'), jsonBody(), async (ctx) => {
    const input = parseInput(SigningRequestCreateSchema, ctx.request.body);
    ctx.status = 201;
    ctx.body = presentSigningRequest(await createSigningRequest(deps, account(ctx), input));
  });

  openapi.registerPath({
    method: 'get',
    path: '/signatures',
    tags: ['Signing requests'],
    summary: 'List signing requests, newest first',
    request: { query: SigningRequestListQuerySchema },
    responses: { 200: { description: 'A page of signing requests', ...json(z.object({ data: z.array(SigningRequestSchema), pagination: z.object({ limit: z.number(), hasMore: z.boolean(), nextCursor: z.string().nullable() }) })) }, ...pickErrors(400, 401) },
  });
  router.get('/signatures', async (ctx) => {
    const query = parseInput(SigningRequestListQuerySchema, ctx.query);
    const page = await listSigningRequests(db, account(ctx).id, query);
    ctx.body = { data: page.data.map(presentSigningRequest), pagination: { limit: query.limit, hasMore: page.hasMore, nextCursor: page.nextCursor } };
  });

  openapi.registerPath({
    method: 'get',
    path: '/signatures/{id}',
    tags: ['Signing requests'],
    summary: 'A signing request with the live status of each signer',
    request: { params: IdParams },
    responses: { 200: { description: 'The signing request', ...json(SigningRequestSchema) }, ...pickErrors(401, 404) },
  });
  router.get('/signatures/:id', async (ctx) => {
    ctx.body = presentSigningRequest(await getSigningRequest(db, account(ctx).id, ctx.params.id));
  });

  openapi.registerPath({
    method: 'post',
    path: '/signatures/{id}/cancel',
    tags: ['Signing requests'],
    summary: 'Cancel a pending signing request',
    request: { params: IdParams, body: json(CancelSchema) },
    responses: { 200: { description: 'Cancelled', ...json(SigningRequestSchema) }, ...pickErrors(400, 401, 404, 409) },
  });
  router.post('/signatures/:id/cancel', jsonBody(), async (ctx) => {
    const { reason } = parseInput(CancelSchema, ctx.request.body ?? {});
    await assertPending(db, account(ctx).id, ctx.params.id);
    await runUpdate(() => handle(ctx.params.id).executeUpdate(cancelUpdate, { args: [{ reason }] }));
    ctx.body = presentSigningRequest(await getSigningRequest(db, account(ctx).id, ctx.params.id));
  });

  openapi.registerPath({
    method: 'post',
    path: '/signatures/{id}/remind',
    tags: ['Signing requests'],
    summary: 'E-mail the signers whose turn it is again',
    request: { params: IdParams },
    responses: { 200: { description: 'Who was reminded', ...json(z.object({ remindedSignerIds: z.array(z.string()) })) }, ...pickErrors(401, 404, 409) },
  });
  router.post('/signatures/:id/remind', async (ctx) => {
    await assertPending(db, account(ctx).id, ctx.params.id);
    ctx.body = await runUpdate(() => handle(ctx.params.id).executeUpdate(remindUpdate));
  });

  openapi.registerPath({
    method: 'get',
    path: '/signatures/{id}/audit-trail',
    tags: ['Signing requests'],
    summary: 'Every step of the request: who, what, when, from which IP and browser',
    request: { params: IdParams },
    responses: { 200: { description: 'The audit trail, oldest first', ...json(z.object({ data: z.array(z.object({ action: z.string(), actor: z.string().nullable(), signerId: z.string().nullable(), signerEmail: z.string().nullable(), ipAddress: z.string().nullable(), userAgent: z.string().nullable(), data: z.any(), at: z.string() })) })) }, ...pickErrors(401, 404) },
  });
  router.get('/signatures/:id/audit-trail', async (ctx) => {
    const steps = await getAuditTrail(db, account(ctx).id, ctx.params.id);
    ctx.body = {
      data: steps.map((step) => ({
        action: step.action,
        actor: step.actor,
        signerId: step.signer_id,
        signerEmail: step.signer_email,
        ipAddress: step.ip_address,
        userAgent: step.user_agent,
        data: step.data,
        at: step.created_at.toISOString(),
      })),
    };
  });

  openapi.registerPath({
    method: 'get',
    path: '/signatures/{id}/document',
    tags: ['Signing requests'],
    summary: 'The sealed PDF, once every signer has signed',
    request: { params: IdParams },
    responses: { 200: { description: 'The sealed PDF', content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } } }, ...pickErrors(401, 404, 409) },
  });
  router.get('/signatures/:id/document', async (ctx) => {
    const { content, fileName } = await getSealedDocument(db, account(ctx).id, ctx.params.id);
    ctx.type = 'application/pdf';
    ctx.set('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`);
    ctx.body = content;
  });

  openapi.registerPath({
    method: 'post',
    path: '/signatures/{id}/signers/{signerId}/link',
    tags: ['Signing requests'],
    summary: 'A fresh signing link for one signer (embedded signing)',
    request: { params: SignerParams },
    responses: { 200: { description: 'The link', ...json(z.object({ url: z.string(), expiresAt: z.string() })) }, ...pickErrors(401, 404, 409) },
  });
  router.post('/signatures/:id/signers/:signerId/link', async (ctx) => {
    ctx.body = await createSigningLink(deps, account(ctx).id, ctx.params.id, ctx.params.signerId);
  });
}
