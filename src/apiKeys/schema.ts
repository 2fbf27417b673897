import { idParam } from '../api/route';
import { dateTime, text, z } from '../api/validation';
import { scopes } from '../domain/scopes';

const ScopeSchema = z.enum(scopes).openapi('Scope', {
  description: 'What a key may do: read or write one kind of resource (signatures: signing requests), or read the account.',
});

const keyName = text(100).regex(/\S/, { error: 'must not be blank' }).openapi({ minLength: 1, example: 'production' });

export const ApiKeyCreateSchema = z
  .object({
    name: keyName,
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .max(50)
      .optional()
      .openapi({
        description: 'Left out: every scope. A key may only make keys whose scopes it holds itself.',
        example: ['documents:read', 'signatures:read'],
      }),
    expiresAt: dateTime
      .refine((value) => Date.parse(value) > Date.now(), { error: 'must be in the future' })
      .optional()
      .openapi({ description: 'When the key stops working (in the future); left out: never.' }),
  })
  .openapi('ApiKeyCreate');

const at = z.string().openapi({ format: 'date-time' });

export const ApiKeySchema = z
  .object({
    id: z.string().openapi({ example: 'key_01jd8x3c6hf1z8k3q2v5n7m9pt' }),
    name: z.string(),
    prefix: z.string().openapi({ description: 'The non-secret start of the key, to recognise it.', example: 'sk_live_AbCdEfGh' }),
    scopes: z.array(ScopeSchema).openapi({ description: 'Every scope for a key made without a list.' }),
    createdAt: at,
    expiresAt: at.nullable().openapi({ description: 'null: never.' }),
    lastUsedAt: at.nullable().openapi({ description: 'Updated at most once a minute.' }),
    revokedAt: at.nullable(),
    createdBy: z
      .object({
        memberId: z.string().nullable().openapi({ description: 'null once the member has left (their keys were revoked then).' }),
        email: z.string(),
      })
      .nullable()
      .openapi({
        description:
          'The member who made the key (a key made by a key is its member’s); null: made by the CLI or before members. The key never does more than its member’s role allows.',
      }),
  })
  .openapi('ApiKey');

export const ApiKeyWithSecretSchema = ApiKeySchema.extend({
  secret: z.string().openapi({ description: 'The key itself: shown only in this answer, never again. Send it as `Authorization: Bearer …`.' }),
}).openapi('ApiKeyWithSecret');

export const ApiKeyListSchema = z.object({ data: z.array(ApiKeySchema) }).openapi('ApiKeyList');

export const ApiKeyIdParams = z.object({ id: idParam('apiKey', 'API key') });
