import { idParam, listOf } from '../api/route';
import { eventTypes } from '../domain/events';
import { paginationQuery, text, z } from '../api/validation';

export const deliveryStatuses = ['pending', 'succeeded', 'failed', 'cancelled'] as const;
/** The type of the ping sent by POST /webhooks/{id}/test; it is never an account event. */
export const TEST_EVENT_TYPE = 'webhook.test';

// What a webhook URL looks like: https, a DNS name (whose last label is not a number), an IPv4 address or
// a bracketed IPv6 address, an optional port, then printable ASCII. The OpenAPI document states it and
// the schema enforces it, so both say the same. (An operator's WEBHOOK_ALLOW_PRIVATE_HOSTS may also
// allow http:// to those hosts; the service checks that.)
const LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const DNS_NAME = `(${LABEL}\\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?`;
const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `${OCTET}(\\.${OCTET}){3}`;
const H = '[0-9A-Fa-f]{1,4}';
const IPV6 = [
  `(${H}:){7}${H}`,
  `(${H}:){1,7}:`,
  `(${H}:){1,6}:${H}`,
  ...[2, 3, 4, 5, 6].map((tail) => `(${H}:){1,${7 - tail}}(:${H}){1,${tail}}`),
  `:((:${H}){1,7}|:)`,
  `(${H}:){6}${IPV4}`,
  `(${H}:){1,4}:${IPV4}`,
  `::(ffff(:0{1,4})?:)?${IPV4}`,
].join('|');
const PORT = '(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})';
const urlShape = (schemes: string) => new RegExp(`^${schemes}://(${DNS_NAME}|${IPV4}|\\[(${IPV6})\\])(:${PORT})?([/?#][!-~]*)?$`);
const HTTPS_URL = urlShape('https');
const WEBHOOK_URL = urlShape('https?');

const isHttpUrl = (value: string) => URL.canParse(value) && ['https:', 'http:'].includes(new URL(value).protocol);
const hasCredentials = (value: string) => URL.canParse(value) && (new URL(value).username !== '' || new URL(value).password !== '');

const url = z
  .string()
  .max(2048)
  .refine(isHttpUrl, { error: 'must be an absolute https:// URL' })
  .refine((value) => !isHttpUrl(value) || !hasCredentials(value), { error: 'must not contain credentials' })
  .refine((value) => !isHttpUrl(value) || hasCredentials(value) || WEBHOOK_URL.test(value), {
    error: 'must be https:// with a host name or an IP address, an optional port, and a path of printable ASCII characters',
  })
  .openapi({
    pattern: HTTPS_URL.source,
    description:
      'Where deliveries go. Loopback, private, link-local and other non-public addresses are refused (a literal one here, a name that resolves to one at delivery).',
    example: 'https://example.com/hooks/signet',
  });

const eventSelection = ['*', ...eventTypes] as const;

const events = z
  .array(z.string())
  .min(1)
  .max(eventSelection.length)
  .superRefine((types, ctx) => {
    const unknown = types.filter((type) => !(eventSelection as readonly string[]).includes(type));
    if (unknown.length > 0) ctx.addIssue({ code: 'custom', message: `has unknown event type(s): ${unknown.join(', ')}; known: ${eventSelection.join(', ')}` });
  })
  .transform((types) => [...new Set(types)])
  .openapi({
    type: 'array',
    items: { type: 'string', enum: [...eventSelection] },
    minItems: 1,
    maxItems: eventSelection.length,
    description: 'Event types to receive, or ["*"] for all.',
    example: ['signing_request.completed'],
  });

const description = text(500).trim();

export const WebhookCreateSchema = z.object({ url, events, description: description.optional(), enabled: z.boolean().default(true) }).openapi('WebhookCreate');

const updatable = ['url', 'events', 'description', 'enabled'] as const;

export const WebhookUpdateSchema = z
  .object({ url: url.optional(), events: events.optional(), description: description.nullable().optional(), enabled: z.boolean().optional() })
  .refine((input) => Object.values(input).some((value) => value !== undefined), { error: `must change at least one of ${updatable.join(', ')}` })
  .openapi('WebhookUpdate', { anyOf: updatable.map((field) => ({ required: [field] })) });

export const WebhookIdParams = z.object({ id: idParam('webhook', 'Webhook') });
export const DeliveryIdParams = WebhookIdParams.extend({ deliveryId: idParam('delivery', 'Delivery') });

export const WebhookListQuerySchema = z.object(paginationQuery('webhook'));

export const DeliveryListQuerySchema = z.object({
  ...paginationQuery('delivery'),
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

export const WebhookDetailSchema = WebhookSchema.extend({
  backlog: z.number().int().openapi({ description: 'Deliveries waiting to be sent or retried.' }),
  oldestPendingAt: iso.nullable().openapi({ description: 'When the oldest waiting delivery was queued; null when none waits.' }),
}).openapi('WebhookDetail');

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
