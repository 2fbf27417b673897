import type { Context } from 'koa';
import type { Account } from '../accounts/service';
import { linksById, linkTo, presentPage, routesOn } from '../api/route';
import type { RouteDeps } from '../api/routeDeps';
import type { Webhooks } from './setup';
import { attemptDelivery, sendTestPing } from './delivery';
import { presentDelivery, presentDeliveryDetail, presentWebhook } from './presenter';
import {
  DeliveryDetailSchema,
  DeliveryIdParams,
  DeliveryListQuerySchema,
  DeliveryListSchema,
  WebhookCreateSchema,
  WebhookDetailSchema,
  WebhookIdParams,
  WebhookListQuerySchema,
  WebhookListSchema,
  WebhookSchema,
  WebhookUpdateSchema,
  WebhookWithSecretSchema,
} from './schema';
import { createWebhook, deleteWebhook, getBacklog, getDelivery, getWebhook, listDeliveries, listWebhooks, rotateWebhookSecret, updateWebhook } from './service';

const tag = 'Webhooks';
const webhookLinks = linksById('getWebhook', 'updateWebhook', 'deleteWebhook', 'rotateWebhookSecret', 'testWebhook', 'listWebhookDeliveries');
const deliveryIds = { id: '$response.body#/webhookId', deliveryId: '$response.body#/id' };
const deliveryLinks = {
  GetWebhookDelivery: linkTo('getWebhookDelivery', deliveryIds),
  RedeliverWebhookDelivery: linkTo('redeliverWebhookDelivery', deliveryIds),
};

export function webhookRoutes({ router, db, rateLimit, openapi, idempotency, webhooks }: RouteDeps & { webhooks: Webhooks }) {
  const account = (ctx: Context): Account => ctx.state.account;
  const route = routesOn({ router, openapi, idempotency });
  const delivery = { db, secretKey: webhooks.secretKey, poster: webhooks.poster };

  route(
    {
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      tag,
      summary: 'Subscribe a URL to events',
      description:
        'Business plan only. The answer carries the signing secret, shown only here and on rotation. Deliveries are POSTs of ' +
        '{id, type, timestamp, data} signed with X-Service-Signature (hex HMAC-SHA256 of the body) and the Standard Webhooks headers.',
      before: [rateLimit('POST /webhooks')],
      body: WebhookCreateSchema,
      status: 201,
      response: WebhookWithSecretSchema,
      responseDescription: 'Created',
      links: webhookLinks,
      errors: [400, 401, 403, 429],
    },
    async ({ body }, ctx) => {
      const { webhook, secret } = await createWebhook(db, webhooks, account(ctx), body);
      return { ...presentWebhook(webhook), secret };
    },
  );

  route(
    {
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      tag,
      summary: 'List webhooks, newest first',
      query: WebhookListQuerySchema,
      response: WebhookListSchema,
      responseDescription: 'A page of webhooks',
      errors: [400, 401],
    },
    async ({ query }, ctx) => presentPage(await listWebhooks(db, account(ctx).id, query), query.limit, presentWebhook),
  );

  route(
    {
      method: 'get',
      path: '/webhooks/{id}',
      operationId: 'getWebhook',
      tag,
      summary: 'Retrieve a webhook, with its backlog',
      params: WebhookIdParams,
      response: WebhookDetailSchema,
      responseDescription: 'The webhook',
      errors: [401, 404],
    },
    async ({ params }, ctx) => {
      const webhook = await getWebhook(db, account(ctx).id, params.id);
      const { backlog, oldestPendingAt } = await getBacklog(db, webhook.id);
      return { ...presentWebhook(webhook), backlog, oldestPendingAt: oldestPendingAt?.toISOString() ?? null };
    },
  );

  route(
    {
      method: 'patch',
      path: '/webhooks/{id}',
      operationId: 'updateWebhook',
      tag,
      summary: 'Change a webhook’s URL, events, description, or enable it again',
      params: WebhookIdParams,
      body: WebhookUpdateSchema,
      response: WebhookSchema,
      responseDescription: 'The webhook',
      errors: [400, 401, 403, 404],
    },
    async ({ params, body }, ctx) => presentWebhook(await updateWebhook(db, webhooks, account(ctx), params.id, body)),
  );

  route(
    {
      method: 'delete',
      path: '/webhooks/{id}',
      operationId: 'deleteWebhook',
      tag,
      summary: 'Delete a webhook and its delivery log',
      params: WebhookIdParams,
      status: 204,
      response: { description: 'Deleted' },
      errors: [401, 404],
    },
    async ({ params }, ctx) => {
      await deleteWebhook(db, account(ctx).id, params.id);
    },
  );

  route(
    {
      method: 'post',
      path: '/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      tag,
      summary: 'Replace the signing secret',
      description: 'The old secret keeps signing alongside the new one for 24 hours: each signature header then carries both signatures.',
      params: WebhookIdParams,
      response: WebhookWithSecretSchema,
      responseDescription: 'The webhook with its new secret',
      errors: [401, 404],
    },
    async ({ params }, ctx) => {
      const { webhook, secret } = await rotateWebhookSecret(db, webhooks, account(ctx), params.id);
      return { ...presentWebhook(webhook), secret };
    },
  );

  route(
    {
      method: 'post',
      path: '/webhooks/{id}/test',
      operationId: 'testWebhook',
      tag,
      summary: 'Send a webhook.test ping now and answer with the result',
      description: 'Counts against the POST /webhooks hourly rate limit: every call sends a request out.',
      before: [rateLimit('POST /webhooks')],
      params: WebhookIdParams,
      response: DeliveryDetailSchema,
      responseDescription: 'The delivery of the ping, with its one attempt',
      links: deliveryLinks,
      errors: [401, 404, 429],
    },
    async ({ params }, ctx) => {
      const webhook = await getWebhook(db, account(ctx).id, params.id);
      const pingId = await sendTestPing(delivery, webhook.id);
      const { delivery: sent, attempts } = await getDelivery(db, account(ctx).id, webhook.id, pingId);
      return presentDeliveryDetail(sent, attempts);
    },
  );

  route(
    {
      method: 'get',
      path: '/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      tag,
      summary: 'The delivery log, newest first',
      params: WebhookIdParams,
      query: DeliveryListQuerySchema,
      response: DeliveryListSchema,
      responseDescription: 'A page of deliveries',
      errors: [400, 401, 404],
    },
    async ({ params, query }, ctx) => presentPage(await listDeliveries(db, account(ctx).id, params.id, query), query.limit, presentDelivery),
  );

  route(
    {
      method: 'get',
      path: '/webhooks/{id}/deliveries/{deliveryId}',
      operationId: 'getWebhookDelivery',
      tag,
      summary: 'One delivery, with the body sent and every attempt',
      params: DeliveryIdParams,
      response: DeliveryDetailSchema,
      responseDescription: 'The delivery',
      errors: [401, 404],
    },
    async ({ params }, ctx) => {
      const { delivery: found, attempts } = await getDelivery(db, account(ctx).id, params.id, params.deliveryId);
      return presentDeliveryDetail(found, attempts);
    },
  );

  route(
    {
      method: 'post',
      path: '/webhooks/{id}/deliveries/{deliveryId}/redeliver',
      operationId: 'redeliverWebhookDelivery',
      tag,
      summary: 'Send a delivery again now, with the same body and webhook-id',
      description: 'Counts against the POST /webhooks hourly rate limit: every call sends a request out.',
      before: [rateLimit('POST /webhooks')],
      params: DeliveryIdParams,
      response: DeliveryDetailSchema,
      responseDescription: 'The delivery, with the new attempt',
      errors: [401, 404, 429],
    },
    async ({ params }, ctx) => {
      const { delivery: found } = await getDelivery(db, account(ctx).id, params.id, params.deliveryId);
      await attemptDelivery(delivery, found.id);
      const { delivery: sent, attempts } = await getDelivery(db, account(ctx).id, params.id, found.id);
      return presentDeliveryDetail(sent, attempts);
    },
  );
}
