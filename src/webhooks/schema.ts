import { idParam, listOf } from '../api/route';
import { eventTypes } from '../events/service';
import { isId } from '../ids';
import { paginationQuery, z } from '../api/validation';

export const deliveryStatuses = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
/** The type of the ping sent by POST /webhooks/{id}/test; it is never an account event. */
export const TEST_EVENT_TYPE = 'webhook.test';

const url = z
  .string()
  .trim()
  .max(2048)
  .refine((value) => URL.canParse(value) && ['https:', 'http:'].includes(new URL(value).protocol), { error: 'must be an absolute https:// URL' })
  .refine((value) => !URL.canParse(value) || !/^[^/]*\/\/[^/]*@/.test(value), { error: 'must not contain credentials' })
  .openapi({ example: 'https://example.com/hooks/signet' });

const events = z
  .array(z.string())
  .min(1)
  .max(eventTypes.length + 1)
  .superRefine((types, ctx) => {
    const unknown = types.filter((type) => type !== '*' && !(eventTypes as readonly string[]).includes(type));
    if (unknown.length > 0) ctx.addIssue({ code: 'custom', message: `has unknown event type(s): ${unknown.join(', ')}; known: *, ${eventTypes.join(', ')}` });
  })
  .transform((types) => [...new Set(types)])
  .openapi({ description: `Event types to receive, or ["*"] for all: ${eventTypes.join(', ')}.`, example: ['signing_request.completed'] });

const description = z.string().trim().max(500);

export const WebhookCreateSchema = z
  .object({ url, events, description: description.optional(), enabled: z.boolean().default(true) })
  .openapi('WebhookCreate');

export const WebhookUpdateSchema = z
  .object({ url: url.optional(), events: events.optional(), description: description.nullable().optional(), enabled: z.boolean().optional() })
  .refine((input) => Object.values(input).some((value) => value !== undefined), { error: 'must change at least one of url, events, description, enabled' })
  .openapi('WebhookUpdate');

export const WebhookIdParams = z.object({ id: idParam('webhook', 'Webhook') });
export const DeliveryIdParams = WebhookIdParams.extend({ deliveryId: idParam('delivery', 'Delivery') });

export const WebhookListQuerySchema = z.object({
  ...paginationQuery,
  cursor: paginationQuery.cursor.refine((value) => value === undefined || isId('webhook', value), { error: 'is not a valid cursor' }),
});

export const DeliveryListQuerySchema = z.object({
  ...paginationQuery,
  cursor: paginationQuery.cursor.refine((value) => value === undefined || isId('delivery', value), { error: 'is not a valid cursor' }),
  status: z.enum(deliveryStatuses).optional(),
  eventType: z.enum([...eventTypes, TEST_EVENT_TYPE]).optional(),
});

const iso = z.string().openapi({ format: 'date-time' });

export const WebhookSchema = z
  .object({
    id: z.string().openapi({ example: 'wh_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    disabledReason: z
      .enum(['gone', 'failing'])
      .nullable()
      .openapi({ description: 'Why Signet disabled it: the receiver answered 410 (gone), or every delivery failed for 5 days (failing).' }),
    failingSince: iso.nullable().openapi({ description: 'The first failed attempt since the last success; after 5 days of failures the webhook is disabled.' }),
    createdAt: iso,
    updatedAt: iso,
  })
  .openapi('Webhook');

export const WebhookWithSecretSchema = WebhookSchema.extend({
  secret: z.string().openapi({ description: 'whsec_…: shown only on creation and rotation. Verify X-Service-Signature with it.' }),
}).openapi('WebhookWithSecret');

export const WebhookListSchema = listOf(WebhookSchema).openapi('WebhookList');

export const AttemptSchema = z
  .object({
    attempt: z.number().int(),
    statusCode: z.number().int().nullable(),
    latencyMs: z.number().int(),
    responseBody: z.string().nullable().openapi({ description: 'The first 1 KB of the response.' }),
    error: z.string().nullable().openapi({ description: 'Why no response came: timeout, refused connection, blocked address.' }),
    createdAt: iso,
  })
  .openapi('DeliveryAttempt');

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ example: 'whd_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    webhookId: z.string(),
    eventId: z.string().openapi({ description: 'Also the webhook-id header: the same on every attempt.' }),
    eventType: z.string(),
    status: z.enum(deliveryStatuses),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastLatencyMs: z.number().int().nullable(),
    lastResponseBody: z.string().nullable(),
    lastError: z.string().nullable(),
    nextRetryAt: iso.nullable(),
    createdAt: iso,
    updatedAt: iso,
  })
  .openapi('WebhookDelivery');

export const DeliveryDetailSchema = DeliverySchema.extend({
  requestBody: z.string().openapi({ description: 'The exact JSON text that was sent and signed.' }),
  attemptLog: z.array(AttemptSchema),
}).openapi('WebhookDeliveryDetail');

export const DeliveryListSchema = listOf(DeliverySchema).openapi('WebhookDeliveryList');

export type WebhookCreateInput = z.infer<typeof WebhookCreateSchema>;
export type WebhookUpdateInput = z.infer<typeof WebhookUpdateSchema>;
export type WebhookListQuery = z.infer<typeof WebhookListQuerySchema>;
export type DeliveryListQuery = z.infer<typeof DeliveryListQuerySchema>;
