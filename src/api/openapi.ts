import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { MAX_NESTING, z } from './validation';

// Each app has one registry: every route file describes its paths there with the same zod schemas it validates with.
export function createOpenApiRegistry() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key: `Authorization: Bearer sk_live_…`. A key holds scopes (documents:read, documents:write, signatures:read, signatures:write, ' +
      'templates:read, templates:write, webhooks:read, webhooks:write, account:read), all of them if made without a list; each operation ' +
      'lists the scopes it needs in its security requirement.',
  });
  registry.registerParameter('IdempotencyKey', IdempotencyKeyHeader);
  return registry;
}

/** The Idempotency-Key header every POST of the API takes (src/api/middleware/idempotency.ts). */
export const IdempotencyKeyHeader = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]+$/)
  .optional()
  .openapi('IdempotencyKey', {
    param: {
      name: 'Idempotency-Key',
      in: 'header',
      description:
        'Makes a retry safe: the first request with a key runs; the same request again within 24 hours gets its answer (2xx or 4xx) again, ' +
        'with Idempotent-Replayed: true, and nothing is done twice. Another method, path or body under the key is 422 idempotency_key_reused; ' +
        'while the first still runs, 409 idempotency_in_progress (see Retry-After). A 5xx or 429 is not kept: retry under the same key. ' +
        'Keys are the account’s own: 1 to 255 printable ASCII characters, e.g. a UUID.',
    },
    example: '5f0c3a52-2f5e-4d7e-9b3a-8f1e2c4d6a7b',
  });

/** The header a replayed answer carries. */
export const idempotentReplayedHeader = {
  'Idempotent-Replayed': {
    description: 'true when this is the kept answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string' as const, enum: ['true'] },
  },
};

export const ErrorBody = z
  .object({
    error: z.string().openapi({ example: 'validation_error' }),
    message: z.string(),
    details: z
      .array(z.string())
      .optional()
      .openapi({ example: ['fileName is required', 'fileSize must be a positive number'] }),
    requestId: z.string().optional(),
  })
  .openapi('Error');

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });

export const errorResponses = {
  400: errorResponse('Bad Request: validation_error, one details string per violated rule.'),
  401: errorResponse(
    'Unauthorized: missing, malformed, unknown, revoked or expired API key (the message says it expired); on a signer’s page, verification_required (the signer has not given their code in this browser).',
  ),
  403: errorResponse(
    'Forbidden: insufficient_scope (the API key lacks the scope this operation needs; the message names it), quota_exceeded, plan_upgrade_required, email_unverified (every write of an account whose e-mail address is not confirmed yet), ' +
      'or verification_failed (a signer’s wrong code, with triesLeft).',
  ),
  404: errorResponse('Not Found (also for other accounts’ resources).'),
  408: errorResponse('Request Timeout: request_timeout, the body stopped arriving, or arrived slower than the minimum rate; the connection is closed.'),
  409: {
    ...errorResponse(
      'Conflict with the resource’s current state; or idempotency_in_progress: a request with the same Idempotency-Key is still running (see Retry-After).',
    ),
    headers: { 'Retry-After': { description: 'Seconds after which to retry (idempotency_in_progress).', schema: { type: 'integer' as const } } },
  },
  413: errorResponse('Payload Too Large: payload_too_large.'),
  415: errorResponse('Unsupported Media Type: unsupported_media_type, a body of a type this operation does not take.'),
  422: errorResponse(
    'Unprocessable Content: idempotency_key_reused, the Idempotency-Key was given to a request of another method, path or body in the last 24 hours.',
  ),
  429: {
    ...errorResponse(
      'Too Many Requests: rate_limit_exceeded, an hourly limit reached (or a signer’s new code asked for within the minute); the message says which. ' +
        'On a signer’s page, verification_locked: every fifth wrong code locks it, for 15 minutes, 1 hour, 4 hours, then until the sender reminds the signer (lockedUntil).',
    ),
    headers: {
      'Retry-After': { description: 'Seconds until the request may succeed.', schema: { type: 'integer' as const } },
      'X-RateLimit-Limit': { description: 'The limit that applies, per hour.', schema: { type: 'integer' as const } },
      'X-RateLimit-Remaining': { description: 'What is left of it now.', schema: { type: 'integer' as const } },
      'X-RateLimit-Reset': { description: 'When the window frees one more, in Unix seconds.', schema: { type: 'integer' as const } },
    },
  },
  503: errorResponse(
    'Service Unavailable: search_unavailable (Elasticsearch does not answer; the rest of the API works), or server_busy (too many uploads are being checked at once); see Retry-After.',
  ),
};

/** An OpenAPI request or response body of JSON described by a zod schema. */
export const jsonContent = (schema: z.ZodType) => ({ content: { 'application/json': { schema } } });

export function pickErrors(...statuses: (keyof typeof errorResponses)[]) {
  return Object.fromEntries(statuses.map((status) => [status, errorResponses[status]]));
}

export function buildOpenApiDocument(registry: OpenAPIRegistry, serverUrl: string) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Signet API',
      version: '1.0.0',
      description:
        'Upload PDFs, send them to signers, and get back a sealed PDF with an audit trail. ' +
        'Every path is served under /api/v1 (canonical) and /api (the current version).\n\n' +
        'Errors are JSON in the Error shape. Besides those listed on each operation: a method a path does not have is ' +
        '405 method_not_allowed with an Allow header, an unknown path is 404 not_found, and no text anywhere in a request ' +
        '(values, field names, query parameters) may contain a NUL character (U+0000) or an unpaired UTF-16 surrogate ("\\ud800" in JSON): 400, ' +
        `and a JSON body may nest objects and arrays at most ${MAX_NESTING} levels deep: 400. Unknown fields of a JSON body are ignored, ` +
        'but a field named __proto__, at any depth, is refused: 400. ' +
        'Text the sealed PDF draws (a title, signer names, document and template names, prefills, typed signatures, field values) ' +
        'may hold only characters its fonts can show: Latin, Greek, Cyrillic, Chinese, Japanese and more, but no control or format ' +
        'character, no right-to-left script and no emoji the fonts lack; a 400 names the others.',
    },
    servers: [{ url: `${serverUrl}/api/v1` }],
    security: [{ bearerAuth: [] }],
  });
}
