import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { jsonBody } from '../api/middleware/body';
import { jsonContent as json, pickErrors } from '../api/openapi';
import type { RouteDeps } from '../api/routeDeps';
import { parseInput } from '../api/validation';
import { attemptDelivery, createTestDelivery } from './delivery';
import { presentDelivery, presentDeliveryDetail, presentWebhook } from './presenter';
import {
  DeliveryDetailSchema,
  DeliveryIdParams,
  DeliveryListQuerySchema,
  DeliveryListSchema,
  WebhookCreateSchema,
  WebhookIdParams,
  WebhookListQuerySchema,
  WebhookListSchema,
  WebhookSchema,
  WebhookUpdateSchema,
  WebhookWithSecretSchema,
} from './schema';
import {
  createWebhook,
  deleteWebhook,
  getDelivery,
  getWebhook,
  listDeliveries,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
} from './service';

export function webhookRoutes({ router, db, rateLimit, openapi, webhooks }: RouteDeps) {
  const account = (ctx: Context): Account => ctx.state.account;
  const delivery = { db, secretKey: webhooks.secretKey, poster: webhooks.poster };
  const tags = ['Webhooks'];

  openapi.registerPath({
    method: 'post',
    path: '/webhooks',
    tags,
    summary: 'Subscribe a URL to events',
    description:
      'Business plan only. The answer carries the signing secret, shown only here and on rotation. Deliveries are POSTs of ' +
      '{id, type, timestamp, data} signed with X-Service-Signature (hex HMAC-SHA256 of the body) and the Standard Webhooks headers.',
    request: { body: json(WebhookCreateSchema) },
    responses: { 201: { description: 'Created', ...json(WebhookWithSecretSchema) }, ...pickErrors(400, 401, 403, 429) },
  });
  router.post('/webhooks', rateLimit('POST /webhooks'), jsonBody(), async (ctx) => {
    const input = parseInput(WebhookCreateSchema, ctx.request.body);
    const { webhook, secret } = await createWebhook(db, webhooks, account(ctx), input);
    ctx.status = 201;
    ctx.body = { ...presentWebhook(webhook), secret };
  });

  openapi.registerPath({
    method: 'get',
    path: '/webhooks',
    tags,
    summary: 'List webhooks, newest first',
    request: { query: WebhookListQuerySchema },
    responses: { 200: { description: 'A page of webhooks', ...json(WebhookListSchema) }, ...pickErrors(400, 401) },
  });
  router.get('/webhooks', async (ctx) => {
    const query = parseInput(WebhookListQuerySchema, ctx.query);
    const page = await listWebhooks(db, account(ctx).id, query);
    ctx.body = { data: page.data.map(presentWebhook), pagination: { limit: query.limit, hasMore: page.hasMore, nextCursor: page.nextCursor } };
  });

  openapi.registerPath({
    method: 'get',
    path: '/webhooks/{id}',
    tags,
    summary: 'Retrieve a webhook',
    request: { params: WebhookIdParams },
    responses: { 200: { description: 'The webhook', ...json(WebhookSchema) }, ...pickErrors(401, 404) },
  });
  router.get('/webhooks/:id', async (ctx) => {
    ctx.body = presentWebhook(await getWebhook(db, account(ctx).id, ctx.params.id));
  });

  openapi.registerPath({
    method: 'patch',
    path: '/webhooks/{id}',
    tags,
    summary: 'Change a webhook’s URL, events, description, or enable it again',
    request: { params: WebhookIdParams, body: json(WebhookUpdateSchema) },
    responses: { 200: { description: 'The webhook', ...json(WebhookSchema) }, ...pickErrors(400, 401, 403, 404) },
  });
  router.patch('/webhooks/:id', jsonBody(), async (ctx) => {
    const input = parseInput(WebhookUpdateSchema, ctx.request.body);
    ctx.body = presentWebhook(await updateWebhook(db, webhooks, account(ctx), ctx.params.id, input));
  });

  openapi.registerPath({
    method: 'delete',
    path: '/webhooks/{id}',
    tags,
    summary: 'Delete a webhook and its delivery log',
    request: { params: WebhookIdParams },
    responses: { 204: { description: 'Deleted' }, ...pickErrors(401, 404) },
  });
  router.delete('/webhooks/:id', async (ctx) => {
    await deleteWebhook(db, account(ctx).id, ctx.params.id);
    ctx.status = 204;
  });

  openapi.registerPath({
    method: 'post',
    path: '/webhooks/{id}/rotate-secret',
    tags,
    summary: 'Replace the signing secret',
    description: 'The old secret keeps signing alongside the new one for 24 hours: each signature header then carries both signatures.',
    request: { params: WebhookIdParams },
    responses: { 200: { description: 'The webhook with its new secret', ...json(WebhookWithSecretSchema) }, ...pickErrors(401, 404) },
  });
  router.post('/webhooks/:id/rotate-secret', async (ctx) => {
    const { webhook, secret } = await rotateWebhookSecret(db, webhooks, account(ctx), ctx.params.id);
    ctx.body = { ...presentWebhook(webhook), secret };
  });

  openapi.registerPath({
    method: 'post',
    path: '/webhooks/{id}/test',
    tags,
    summary: 'Send a webhook.test ping now and answer with the result',
    description: 'Counts against the POST /webhooks hourly rate limit: every call sends a request out.',
    request: { params: WebhookIdParams },
    responses: { 200: { description: 'The delivery of the ping, with its one attempt', ...json(DeliveryDetailSchema) }, ...pickErrors(401, 404, 429) },
  });
  router.post('/webhooks/:id/test', rateLimit('POST /webhooks'), async (ctx) => {
    const webhook = await getWebhook(db, account(ctx).id, ctx.params.id);
    const ping = await createTestDelivery(db, webhook.id);
    await attemptDelivery(delivery, ping.id, { nextDelayMs: null, manual: true });
    const { delivery: sent, attempts } = await getDelivery(db, account(ctx).id, webhook.id, ping.id);
    ctx.body = presentDeliveryDetail(sent, attempts);
  });

  openapi.registerPath({
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    tags,
    summary: 'The delivery log, newest first',
    request: { params: WebhookIdParams, query: DeliveryListQuerySchema },
    responses: { 200: { description: 'A page of deliveries', ...json(DeliveryListSchema) }, ...pickErrors(400, 401, 404) },
  });
  router.get('/webhooks/:id/deliveries', async (ctx) => {
    const query = parseInput(DeliveryListQuerySchema, ctx.query);
    const page = await listDeliveries(db, account(ctx).id, ctx.params.id, query);
    ctx.body = { data: page.data.map(presentDelivery), pagination: { limit: query.limit, hasMore: page.hasMore, nextCursor: page.nextCursor } };
  });

  openapi.registerPath({
    method: 'get',
    path: '/webhooks/{id}/deliveries/{deliveryId}',
    tags,
    summary: 'One delivery, with the body sent and every attempt',
    request: { params: DeliveryIdParams },
    responses: { 200: { description: 'The delivery', ...json(DeliveryDetailSchema) }, ...pickErrors(401, 404) },
  });
  router.get('/webhooks/:id/deliveries/:deliveryId', async (ctx) => {
    const { delivery: found, attempts } = await getDelivery(db, account(ctx).id, ctx.params.id, ctx.params.deliveryId);
    ctx.body = presentDeliveryDetail(found, attempts);
  });

  openapi.registerPath({
    method: 'post',
    path: '/webhooks/{id}/deliveries/{deliveryId}/redeliver',
    tags,
    summary: 'Send a delivery again now, with the same body and webhook-id',
    description: 'Counts against the POST /webhooks hourly rate limit: every call sends a request out.',
    request: { params: DeliveryIdParams },
    responses: { 200: { description: 'The delivery, with the new attempt', ...json(DeliveryDetailSchema) }, ...pickErrors(401, 404, 429) },
  });
  router.post('/webhooks/:id/deliveries/:deliveryId/redeliver', rateLimit('POST /webhooks'), async (ctx) => {
    const { delivery: found } = await getDelivery(db, account(ctx).id, ctx.params.id, ctx.params.deliveryId);
    await attemptDelivery(delivery, found.id, { nextDelayMs: null, manual: true });
    const { delivery: sent, attempts } = await getDelivery(db, account(ctx).id, ctx.params.id, found.id);
    ctx.body = presentDeliveryDetail(sent, attempts);
  });
}
